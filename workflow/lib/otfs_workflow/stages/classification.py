"""Stage ``classification``: adapt and score 1-NN along every feature order."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from otfs_workflow.data.cache import read_domains
from otfs_workflow.io import read_json, write_rows_tsv
from otfs_workflow.protocol import COLUMNS, METRIC_COLUMNS, read_iterations, resolve_feature_counts

#: The adapter that adapts nothing: its curves are the nested 1-NN's, without building an adapter.
NO_ADAPTATION = "NA"


def run(caches: Mapping[str, str], ranking_path, adapter: str, grid: str,
        orders: Sequence[str],
        counts, output, adapter_params: Mapping | None = None, iterations: int | None = None, *,
        metrics: Mapping | None = None, as_frame: bool = True):
    """Write one TSV row per (iteration, order, number of features) of one pair.

    ``adapter_params`` are the adapter's hyper-parameters (config ``adapters``; its defaults where absent).
    ``iterations``: only the first so many iterations of the ranking (the grid's ``iterations``; all by
    default). Returns the rows as a DataFrame, or as a list of dicts with ``as_frame=False`` (the
    pipeline's jobs, which then never import pandas). ``metrics``: the grid's more columns
    (:func:`otfs.classification.accuracy_curve`), after :data:`~otfs_workflow.protocol.COLUMNS`.
    """
    return run_adapters(caches, ranking_path, {adapter: adapter_params}, grid, orders, counts, {adapter: output},
                        iterations=iterations, metrics=metrics, as_frame=as_frame)[adapter]


def run_adapters(caches: Mapping[str, str], ranking_path, adapters: Mapping[str, Mapping | None], grid: str,
                 orders: Sequence[str], counts, outputs: Mapping[str, str],
                 iterations: int | None = None, *, metrics: Mapping | None = None, as_frame: bool = True,
                 shared: dict | None = None, reuse: Collection[str] = (), ends=None) -> dict:
    """:func:`run` for several adapters of one pair at once: the caches and the ranking are read once.

    ``adapters`` maps each adapter to its hyper-parameters, ``outputs`` each
    adapter to its TSV; each file is the one :func:`run` writes for it.
    Without adaptation (``NA`` without parameters) no adapter is built: the
    job imports neither POT nor scikit-learn, whose imports take longer than
    the nested 1-NN curves of a pair.

    ``shared``: a dict kept across the rankers of one pair (rule run_family_pair). The point of all ``d``
    features is then computed on the features in the data's order, not the ranker's, and once per
    (adapter, source subset) for every ranker: every ranker's curve ends on the same numbers. (A
    permutation of the columns changes an adapter's and a classifier's arithmetic only in the last bits;
    docs/data-families.md measures what it moves.) Without it, each order's own permutation, as
    :func:`otfs.classification.accuracy_curve` computes it.

    ``ends``: the file of :func:`run_all_features` for this pair (the leaderboard's jobs): its points of all
    ``d`` features, computed once for every ranker, serve as ``shared``'s (the same numbers as computing them
    here on the data's order). A point it lacks (another source subset) is computed here, on the data's order.

    ``reuse``: adapters (with ``shared``) whose adapted samples are kept in ``shared`` for
    :func:`otfs_workflow.stages.model_selection.run_pair`, which adapts the same samples on the same features
    (:class:`KeptAdaptations`): each is computed once for the curve and the choice of k.
    """
    import dataclasses

    import numpy as np

    from otfs.classification import accuracy_curve

    if set(adapters) != set(outputs):
        raise ValueError(f"adapters {sorted(adapters)} and outputs {sorted(outputs)} name different adapters")
    rank = read_json(ranking_path)
    cache = read_domains({d: caches[d] for d in (rank["source"], rank["target"])})
    src, tgt = cache.domain(rank["source"]), cache.domain(rank["target"])
    # the target in column-major order, made once for every adapter and iteration: accuracy_curve gathers its
    # columns from such a copy, which gives the same arrays as from the cache's
    tgt = dataclasses.replace(tgt, X=np.asfortranarray(tgt.X))
    counts = resolve_feature_counts(counts, cache.n_features)
    metrics = dict(metrics or {})
    if ends is not None:
        shared = {} if shared is None else shared
        _take_ends(ends, rank, grid, adapters, metrics, shared)
    columns = COLUMNS + [c for c in METRIC_COLUMNS if (c == "balanced_accuracy" and metrics.get("balanced_accuracy"))
                         or (c.startswith("second_") and metrics.get("second_classifier"))]
    results = {}
    for adapter, params in adapters.items():
        constant = {"feature_set": rank["feature_set"], "pair": rank["pair"], "source": rank["source"],
                    "target": rank["target"], "ranker": rank["ranker"], "adapter": adapter, "grid": grid}
        rows = []
        for r_it in read_iterations(rank, ranking_path, iterations):
            subset = r_it["source_subset"]  # the iteration's source samples, drawn by the ranking stage
            try:
                if shared is None:
                    curve = accuracy_curve(
                        src.X[subset], src.y[subset], tgt.X, tgt.y,
                        orders={name: r_it["orders"][name] for name in orders},
                        n_features=counts,
                        adapter=_build_adapter(adapter, params),
                        metrics=metrics,
                    )
                else:
                    curve = _curve_with_shared_end(src, tgt, subset, r_it, orders, counts, adapter, params, metrics,
                                                   rank, shared, adapter in reuse)
            except (ValueError, FloatingPointError) as exc:  # say where: the pair, the iteration, the features
                raise type(exc)(f"{rank['feature_set']}/{rank['pair']}, iteration {r_it['iteration']}, adapter "
                                f"{adapter}: {_named_columns(str(exc), cache.feature_names)}") from exc
            rows += [{**constant, "iteration": r_it["iteration"], **point} for point in curve]
        write_rows_tsv(outputs[adapter], columns, rows)
        if as_frame:
            import pandas as pd

            rows = pd.DataFrame(rows, columns=columns)
        results[adapter] = rows
    return results


def _curve_with_shared_end(src, tgt, subset, r_it, orders, counts, adapter, params, metrics, rank, shared,
                           keep=False):
    """One iteration's curve of every order whose point at all ``d`` features is computed on the data's order,
    once per (pair, adapter and its parameters, metrics, source subset) in ``shared``; with ``keep``, the
    adapted samples are kept in ``shared`` (:class:`KeptAdaptations`)."""
    import numpy as np

    from otfs.classification import accuracy_curve

    d = src.X.shape[1]
    Xs, ys = src.X[subset], src.y[subset]
    below = [n for n in counts if n != d]
    built = _build_adapter(adapter, params)
    if (keep and built is not None and not getattr(type(built), "identity", False)
            and not getattr(built, "predicts_labels", False)):
        built = KeptAdaptations(shared).keeping(adapter, params, built)
    curves = {}
    second = metrics.get("second_classifier")
    if below:
        for row in accuracy_curve(Xs, ys, tgt.X, tgt.y, orders={name: r_it["orders"][name] for name in orders},
                                  n_features=below, adapter=built, metrics=metrics):
            curves.setdefault(row["order"], {})[row["n_features"]] = row
            if second:
                cols = np.asarray(r_it["orders"][row["order"]])[:row["n_features"]]
                shared[second_key(rank["feature_set"], rank["pair"], adapter, params, second, subset, cols)] = row
    if d in counts:
        key = _end_key(rank["feature_set"], rank["pair"], adapter, params, metrics, subset)
        if key not in shared:
            (end,) = accuracy_curve(Xs, ys, tgt.X, tgt.y, orders={"data": np.arange(d)}, n_features=[d],
                                    adapter=built, metrics=metrics)
            shared[key] = end
            if second:
                shared[second_key(rank["feature_set"], rank["pair"], adapter, params, second, subset,
                                  np.arange(d))] = end
        for name in orders:
            curves.setdefault(name, {})[d] = {**shared[key], "order": name}
    return [curves[name][n] for name in orders for n in counts]


#: The columns of a point's second classifier (:func:`otfs.classification.second_classifier_scores`).
SECOND_COLUMNS = ("second_accuracy", "second_balanced_accuracy", "second_auc")


def second_key(feature_set: str, pair: str, adapter: str, params, spec, subset, cols) -> tuple:
    """The ``shared`` key of one point's second-classifier scores (rule run_family_pair): the curves put them
    there, the choice of k takes them for the same adapter, parameters, classifier, source subset and columns
    (the same adapted samples: the same numbers) instead of fitting the classifier again."""
    import numpy as np

    return ("second classifier", feature_set, pair, adapter, repr(params), repr(spec),
            np.asarray(subset, dtype=np.int64).tobytes(), np.asarray(cols, dtype=np.int64).tobytes())


def _end_key(feature_set: str, pair: str, adapter: str, params, metrics: Mapping, subset) -> tuple:
    """The ``shared`` key of the point of all features of one (pair, adapter, parameters, metrics, source subset)."""
    import numpy as np

    return ("all features", feature_set, pair, adapter, repr(params), repr(sorted(metrics.items())),
            np.asarray(subset, dtype=np.int64).tobytes())


def run_all_features(caches: Mapping[str, str], feature_set: str, pair: str, adapters: Mapping[str, Mapping | None],
                     grid: str, iterations: Sequence[int], per_class, output, *, metrics: Mapping | None = None) -> dict:
    """The point of all ``d`` features of every adapter and iteration of one pair, for every ranker at once.

    With all the features, a ranker's order only permutes the columns, so this point is computed once, on the
    features in the data's order (as :func:`run_adapters` with ``shared`` computes it), on each iteration's
    source subset (:func:`otfs_workflow.protocol.iteration_source_subset`, the ranking job's draw). The JSON
    file holds, per adapter, its parameters, the grid's metrics and, per iteration, the subset and the point's
    row; :func:`run_adapters` (``ends``) uses a point only where all of them are its own.
    """
    import numpy as np

    from otfs.classification import accuracy_curve
    from otfs_workflow.io import write_json
    from otfs_workflow.protocol import iteration_source_subset, parse_pair
    from otfs_workflow.stages import source_classes

    source, target = parse_pair(pair)
    cache = read_domains({dom: caches[dom] for dom in (source, target)})
    src, tgt = cache.domain(source), cache.domain(target)
    classes = source_classes(cache, pair, selection=False)
    d, metrics = cache.n_features, dict(metrics or {})
    out = {"feature_set": feature_set, "pair": pair, "grid": grid, "d": d,
           "adapters": {a: {"params": p, "metrics": metrics, "iterations": []} for a, p in adapters.items()}}
    for iteration in iterations:
        subset, _ = iteration_source_subset(feature_set, pair, iteration, src.y, per_class, classes=classes,
                                            class_names=cache.class_names)
        Xs, ys = src.X[subset], src.y[subset]
        for adapter, params in adapters.items():
            try:
                (point,) = accuracy_curve(Xs, ys, tgt.X, tgt.y, orders={"data": np.arange(d)}, n_features=[d],
                                          adapter=_build_adapter(adapter, params), metrics=metrics)
            except (ValueError, FloatingPointError) as exc:
                raise type(exc)(f"{feature_set}/{pair}, iteration {iteration}, adapter {adapter}, all {d} features: "
                                f"{_named_columns(str(exc), cache.feature_names)}") from exc
            out["adapters"][adapter]["iterations"].append(
                {"iteration": int(iteration), "source_subset": [int(i) for i in subset], "point": point})
    write_json(output, out, compact=True)
    return out


def _take_ends(path, rank: Mapping, grid: str, adapters: Mapping, metrics: Mapping, shared: dict) -> None:
    """Put the points of :func:`run_all_features`'s file ``path`` into ``shared``; an error naming the file where
    it is of another pair, grid, or adapter's parameters or metrics."""
    ends = read_json(path)
    where = (ends["feature_set"], ends["pair"], ends["grid"])
    if where != (rank["feature_set"], rank["pair"], grid):
        raise ValueError(f"{path}: the points of all features of {where}, read for {rank['feature_set']}/"
                         f"{rank['pair']} on the grid {grid!r}")
    for adapter, params in adapters.items():
        held = ends["adapters"].get(adapter)
        if held is None:
            raise ValueError(f"{path}: no point of all features for the adapter {adapter!r}")
        if held["params"] != params or held["metrics"] != metrics:
            raise ValueError(f"{path}: adapter {adapter!r} with {held['params']} and the metrics {held['metrics']}, "
                             f"read with {params} and {metrics}: the file is stale")
        for it in held["iterations"]:
            key = _end_key(rank["feature_set"], rank["pair"], adapter, params, metrics, it["source_subset"])
            shared[key] = it["point"]


class KeptAdaptations:
    """Adapted samples kept in a pair job's ``shared`` dict, from the curves to the choice of k.

    Rule run_family_pair's curves (:func:`run_adapters`) and its label-free scores
    (:func:`otfs_workflow.stages.model_selection.run_pair`) adapt the same source subset and target on the
    same features: OT3's coupling, for one, is the most expensive step of both. The curves keep what an
    adapter of ``reuse`` returns, under the adapter's name, its parameters and a digest of the three input
    arrays' bytes, shapes and types; the choice of k takes it out (:meth:`take`), so an entry is used once
    and only on the very same inputs. Kept arrays are read-only: a consumer that wrote to them would fail
    instead of changing the other's numbers.
    """

    SLOT = "kept adaptations"

    def __init__(self, shared: dict):
        self._kept = shared.setdefault(self.SLOT, {})

    @staticmethod
    def key(adapter: str, params, Xs, ys, Xt) -> tuple:
        import hashlib

        import numpy as np

        digest = hashlib.blake2b(digest_size=20)
        for arr in (Xs, ys, Xt):
            arr = np.ascontiguousarray(arr)
            digest.update(f"{arr.dtype.str}{arr.shape}".encode())
            digest.update(arr.tobytes())
        return adapter, repr(params), digest.hexdigest()

    def keeping(self, adapter: str, params, built):
        """``built``, whose ``adapt`` now also keeps its result (and the seconds it took) here."""
        import time

        inner, kept = built.adapt, self._kept

        def adapt(Xs, ys, Xt):
            start = time.perf_counter()
            Zs, Zt = inner(Xs, ys, Xt)
            seconds = time.perf_counter() - start
            for arr in (Zs, Zt):
                arr.flags.writeable = False
            kept[self.key(adapter, params, Xs, ys, Xt)] = (Zs, Zt, seconds)
            return Zs, Zt

        built.adapt = adapt  # an attribute of this instance only; its type (named in errors) is unchanged
        return built

    def take(self, adapter: str, params, Xs, ys, Xt):
        """``(Zs, Zt, seconds)`` kept for these inputs, removed from here; None where none is. The inputs are
        hashed only where something is kept for this adapter with these parameters (an Amazon 5,000 point's
        arrays take 40 ms)."""
        named = (adapter, repr(params))
        if not any(k[:2] == named for k in self._kept):
            return None
        return self._kept.pop(self.key(adapter, params, Xs, ys, Xt), None)

    def clear(self) -> None:
        """Drop what no consumer took (a ranker's entries, once its choice of k is scored)."""
        self._kept.clear()


def _named_columns(message: str, names) -> str:
    """``message`` with its ``(columns 3, 11)`` given by the features' names."""
    import re

    def named(match):
        cols = [c.strip() for c in match.group(1).split(",")]
        return "(features " + ", ".join(repr(names[int(c)]) if c.isdigit() else c for c in cols) + ")"

    return re.sub(r"\(columns ([\d, .]+)\)", named, message, count=1)


def _build_adapter(name: str, params: Mapping | None):
    """The adapter ``name``; None (no adaptation: :func:`otfs.classification.accuracy_curve`'s default) for NA."""
    if name == NO_ADAPTATION and not params:
        return None
    from otfs.adapters._base import get_adapter  # POT and scikit-learn only where a job adapts

    return get_adapter(name, **(params or {}))
