"""Stage ``ranking``: score and order the features of every iteration of one pair, with one ranker.

Every ranker is the library's public estimator, fitted as a user fits it:
``ranker.fit(Xs, ys, X_target=Xt)`` on the iteration's source subset and the
whole target, and its ``scores_`` are what the tables use. Every ranker sees
the same source samples: each iteration's source subset is drawn from
(feature set, pair, iteration) alone. The paper's rankers (``ot``, ``ot-1nn``,
``ot-random``: :class:`otfs.rankers.OTFeatureRanker`) run Algorithms 1 and 2
inside ``fit``, seeded from (feature set, pair, iteration, strategy); any
other ranker with a ``random_state`` is seeded from (feature set, pair,
iteration, ranker).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from otfs_workflow.data.cache import read_domains
from otfs_workflow.io import write_json
from otfs_workflow.protocol import derive_seed, iteration_source_subset, parse_pair, ranked_iterations
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
        output, ranker_params: Mapping | None = None) -> dict:
    """Rank the features of every iteration of ``pair``; write JSON.

    Parameters
    ----------
    caches : mapping of domain to feature cache path
    feature_set, pair : str
    ranker : str
        A registered feature ranker (:data:`otfs.rankers.FEATURE_RANKERS`).
    iterations : sequence of int, or mapping
        The iterations to rank, or ``{"ranked": [...], "protocol": n}``
        (:func:`otfs_workflow.protocol.ranked_iterations`): the first few of
        the protocol's n, recorded as ``protocol_iterations``.
    per_class : int
        Source samples per class of each iteration's subset.
    output : path of the JSON file
    ranker_params : mapping, optional
        The ranker's parameters (config ``rankers.<name>``; for the OT rankers
        the sections ``sample_selection`` and ``ranking`` too).

    Each iteration holds the scores, the three feature orders used
    downstream (the Random order seeded by feature set, pair and iteration),
    the source subset, the seeds, and the wall time of ``fit`` (for the OT
    rankers, Algorithms 1 and 2 together) as ``ranking_time_s``.
    """
    from sklearn.base import clone

    from otfs.rankers._feature_coupling import feature_orders

    source, target = parse_pair(pair)
    estimator = build_ranker(ranker, ranker_params)
    strategy = pairs_strategy(estimator)
    params = estimator.get_params()
    cache = read_domains({d: caches[d] for d in (source, target)})
    src, Xt = cache.domain(source), cache.domain(target).X
    classes = source_classes(cache, pair, selection=strategy is not None)
    iterations, protocol_iterations = ranked_iterations(iterations)
    records = []
    for iteration in iterations:
        record = {"iteration": int(iteration)}
        subset, subset_seed = iteration_source_subset(feature_set, pair, iteration, src.y, per_class, classes=classes,
                                                      class_names=cache.class_names)
        record["seed_source_subset"] = subset_seed
        fitted = clone(estimator)
        if strategy is not None:  # Algorithm 1's strategy, seeded as the paper's protocol seeds it
            record["seed_selection"] = derive_seed(feature_set, pair, iteration, "selection", strategy)
            fitted.set_params(random_state=record["seed_selection"])
        elif "random_state" in params:
            record["seed_ranker"] = derive_seed(feature_set, pair, iteration, "ranker", ranker)
            fitted.set_params(random_state=record["seed_ranker"])
        start = time.perf_counter()
        try:
            fitted.fit(src.X[subset], src.y[subset], X_target=Xt)
        except RuntimeError as exc:
            if "emd_max_iter" not in str(exc):
                raise
            raise RuntimeError(f"{feature_set}/{pair}, iteration {iteration}: {exc} (config: "
                               "sample_selection.emd_max_iter)") from exc
        record["ranking_time_s"] = time.perf_counter() - start
        scores = fitted.scores_
        if strategy is not None:
            record["sinkhorn_iterations"] = int(fitted.n_iter_)
            record["flipped"] = bool(fitted.matching_.flipped)
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
    if protocol_iterations is not None:
        out["protocol_iterations"] = protocol_iterations
    write_json(output, out, compact=True)
    return out
