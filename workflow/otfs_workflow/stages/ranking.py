"""Stage ``ranking``: score and order the features of every iteration of one pair, with one ranker.

Every ranker sees the same source samples: each iteration's source subset is
drawn from (feature set, pair, iteration) alone. The paper's rankers (``ot``,
``ot-1nn``, ``ot-random``: :class:`otfs.rankers.OTFeatureRanker`) rank the
sample pairs that the selection stage found with their strategy (Algorithm 1),
so the exact OT problems are solved once per strategy; every other ranker is
fitted on the source subset and the whole target, as
``ranker.fit(Xs, ys, X_target=Xt)``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from otfs_workflow.data.cache import read_domains
from otfs_workflow.io import read_json, write_json
from otfs_workflow.protocol import derive_seed, draw_source_subset, parse_pair
from otfs_workflow.stages import source_classes

__all__ = ["build_ranker", "pairs_strategy", "run"]


def build_ranker(name: str, params: Mapping | None = None):
    """The registered ranker ``name`` built with ``params`` (an unknown name lists the registered ones)."""
    from otfs.rankers import FEATURE_RANKERS

    return FEATURE_RANKERS[name](**dict(params or {}))


def pairs_strategy(ranker) -> str | None:
    """The sample-selection strategy whose pairs ``ranker`` ranks (the OT rankers), else None."""
    from otfs.rankers import OTFeatureRanker

    return ranker.selection if isinstance(ranker, OTFeatureRanker) else None


def run(caches: Mapping[str, str], feature_set: str, pair: str, ranker: str, *, iterations, per_class: int,
        output, ranker_params: Mapping | None = None, selection_path=None,
        estimator_params: Mapping | None = None) -> dict:
    """Rank the features of every iteration of ``pair``; write JSON.

    Parameters
    ----------
    caches : mapping of domain to feature cache path
    feature_set, pair : str
    ranker : str
        A registered feature ranker (:data:`otfs.rankers.FEATURE_RANKERS`).
    iterations : sequence of int
    per_class : int
        Source samples per class of each iteration's subset.
    output : path of the JSON file
    ranker_params : mapping, optional
        The ranker's parameters (config ``rankers.<name>``; for the OT rankers
        the sections ``selection`` and ``ranking``).
    selection_path : path, optional
        The selection stage's file of the ranker's strategy: required for the
        OT rankers, whose Algorithm 2 runs on its sample pairs.
    estimator_params : mapping, optional
        Every parameter of an OT ranker (its ``get_params()``), where the
        caller has built it already: the pipeline does, when it reads the
        configuration. The ranking then runs
        :func:`otfs.rankers._feature_coupling.feature_coupling_diagonal` with them and
        never builds the estimator, so the job does not import scikit-learn
        (seconds, against tenths for the ranking itself). The output is the
        same. Ignored for the other rankers.

    Each iteration holds the scores, the three feature orders used
    downstream (the Random order seeded by feature set, pair and iteration),
    the source subset and the ranking's wall time (for the OT rankers,
    Algorithm 1's time in the selection job, ``selection_time_s``, plus
    Algorithm 2's).
    """
    from otfs.rankers._feature_coupling import feature_coupling_diagonal, feature_orders

    source, target = parse_pair(pair)
    if estimator_params is not None and selection_path is not None:
        params = dict(estimator_params)  # an OT ranker, built by the caller
        strategy = params.get("selection")
        if not isinstance(strategy, str):
            raise ValueError(f"estimator_params of ranker {ranker!r}: no 'selection' (the strategy whose sample "
                             f"pairs it ranks); got {sorted(params)}")
    else:
        estimator = build_ranker(ranker, ranker_params)
        strategy = pairs_strategy(estimator)
        params = estimator.get_params()
    cache = read_domains({d: caches[d] for d in (source, target)})
    src, Xt = cache.domain(source), cache.domain(target).X
    if strategy is not None:
        if selection_path is None:
            raise ValueError(f"ranker {ranker!r} ranks Algorithm 1's sample pairs: give selection_path")
        missing = [k for k in ("reg", "norm", "method", "max_iter", "tol") if k not in params]
        if missing:
            raise ValueError(f"ranker {ranker!r}: no solver parameter {missing} among {sorted(params)}")
        solver = {k: params[k] for k in ("reg", "norm", "method", "max_iter", "tol")}
        sel = read_json(selection_path)
        if (sel["pair"], sel["strategy"], sel["feature_set"]) != (pair, strategy, feature_set):
            raise ValueError(f"{selection_path}: selection of {sel['feature_set']}/{sel['pair']} by "
                             f"{sel['strategy']!r}, not of {feature_set}/{pair} by {strategy!r}")
        selected = {it["iteration"]: it for it in sel["iterations"]}
        missing = [i for i in iterations if i not in selected]
        if missing:
            raise ValueError(f"{selection_path}: no iteration {missing}")
    classes = source_classes(cache, pair, selection=strategy is not None)
    records = []
    for iteration in iterations:
        record = {"iteration": int(iteration)}
        start = time.perf_counter()
        if strategy is not None:
            it = selected[iteration]
            subset = it["source_subset"]
            Xs = src.X[subset]
            scores, n_iter = feature_coupling_diagonal(
                Xs[it["matched_source"]], Xt[it["matched_target"]], **solver, return_n_iter=True
            )
            record["sinkhorn_iterations"] = n_iter
            # Algorithm 1 ran in the selection job: its time is part of this ranker's
            if "selection_time_s" not in it:
                raise ValueError(f"{selection_path}: iteration {iteration} has no selection_time_s "
                                 "(written by an older version: rerun its selection job)")
            record["selection_time_s"] = float(it["selection_time_s"])
        else:
            subset_seed = derive_seed(feature_set, pair, iteration, "source_subset")
            subset = draw_source_subset(src.y, per_class, random_state=subset_seed, classes=classes,
                                        class_names=cache.class_names)
            from sklearn.base import clone

            fitted = clone(estimator)
            if "random_state" in fitted.get_params():
                record["seed_ranker"] = derive_seed(feature_set, pair, iteration, "ranker", ranker)
                fitted.set_params(random_state=record["seed_ranker"])
            fitted.fit(src.X[subset], src.y[subset], X_target=Xt)
            scores = fitted.scores_
        record["ranking_time_s"] = time.perf_counter() - start + record.get("selection_time_s", 0.0)
        order_seed = derive_seed(feature_set, pair, iteration, "random_order")
        record.update({
            "seed_random_order": order_seed,
            "source_subset": [int(i) for i in subset],
            "scores": scores,
            "orders": feature_orders(scores, random_state=order_seed),
        })
        records.append(record)
    out = {"feature_set": feature_set, "pair": pair, "source": source, "target": target, "ranker": ranker,
           "strategy": strategy, "params": params, "feature_names": cache.feature_names,
           "iterations": records}
    write_json(output, out, compact=True)
    return out
