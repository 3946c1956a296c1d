"""Stage ``regression``: the feature rankers on a regression family (corn NIR: calibration transfer).

The classification grid needs class labels; a regression family gets this
stage instead, with the same structure. For every response, ordered pair of
domains (instruments) and repetition:

- the samples are split in two halves at random (seed from the family, the
  response, the pair and the repetition): the source domain's half A, with
  its responses, and the target domain's half B, without. The same physical
  samples are measured on every instrument, so the halves are disjoint: a
  target sample is never its own source twin;
- each domain is z-scored (per wavelength, within the domain), as the
  classification grid does;
- each ranker that needs no class labels orders the features on (source,
  target); the source-only relevance ranking is the absolute correlation of
  each feature with the response on the source (scikit-learn's
  ``r_regression``), the regression counterpart of ``source-anova``;
- each adapter that needs no labels (``NA``, ``SA``, ``CORAL``, ``TCA``;
  OT3's class regulariser needs classes) adapts the first ``n`` features,
  and two regressors fitted on the adapted source predict the target: the
  paper's 1-NN (the response of the nearest source sample) and a ridge
  regression (scikit-learn's ``RidgeCV`` over its default alphas); the
  metric is the RMSE, and ``neg_rmse`` (its negation: higher is better) is
  what the leaderboard statistics and the verdict rank.

One Parquet of long rows (the columns of the leaderboard's, with ``rmse``,
``neg_rmse``, ``second_rmse``, ``neg_second_rmse``), a table of mean RMSE,
and the provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.io import atomic_path, write_csv, write_json
from otfs_workflow.protocol import derive_seed, make_pairs, parse_pair, resolve_feature_counts

__all__ = ["NO_LABEL_ADAPTERS", "RELEVANCE", "evaluate", "run"]

#: The adapters that need no labels (the others: OT3's class regulariser).
NO_LABEL_ADAPTERS = ("NA", "SA", "CORAL", "TCA")
#: The source-only relevance ranking of a regression: |correlation| with the response.
RELEVANCE = "source-correlation"


def _order(scores: np.ndarray) -> np.ndarray:
    """Features from the highest score to the lowest (ties: the lower index first)."""
    return np.lexsort((np.arange(scores.size), -scores))


def _rank(name: str, params: Mapping, Xs, ys, Xt, seed: int) -> np.ndarray:
    if name == RELEVANCE:
        from sklearn.feature_selection import r_regression

        r = np.nan_to_num(np.abs(r_regression(Xs, ys)), nan=0.0)
        return r
    from otfs.rankers import FEATURE_RANKERS

    ranker = FEATURE_RANKERS[name](**dict(params))
    if "random_state" in ranker.get_params():
        ranker.set_params(random_state=seed)
    ranker.fit(Xs, None, X_target=Xt)
    return np.asarray(ranker.scores_, dtype=float)


def _predict(Xs, ys, Xt) -> tuple[np.ndarray, np.ndarray]:
    """The 1-NN's and the ridge regression's predictions of the target responses."""
    from sklearn.linear_model import RidgeCV

    d2 = (Xt * Xt).sum(1)[:, None] - 2 * Xt @ Xs.T + (Xs * Xs).sum(1)[None, :]
    one_nn = ys[np.argmin(d2, axis=1)]
    return one_nn, RidgeCV().fit(Xs, ys).predict(Xt)


def evaluate(X: Mapping[str, np.ndarray], y: np.ndarray, response: str, dataset: str, rankers: Mapping[str, Mapping],
             adapters: Mapping[str, Mapping | None], counts, iterations: int) -> list[dict]:
    """The long rows of one response: every pair of domains, repetition, ranker, adapter and count."""
    from otfs.adapters import get_adapter
    from otfs.preprocessing import zscore

    n = y.size
    d = next(iter(X.values())).shape[1]
    counts = resolve_feature_counts(counts, d)
    rows = []
    for pair in make_pairs(list(X)):
        source, target = parse_pair(pair)
        for it in range(iterations):
            rng = np.random.RandomState(derive_seed(dataset, response, pair, it, "halves"))
            perm = rng.permutation(n)
            a, b = np.sort(perm[: n // 2]), np.sort(perm[n // 2:])
            Xs, ys, Xt, yt = zscore(X[source][a]), y[a], zscore(X[target][b]), y[b]
            for ranker, params in rankers.items():
                scores = _rank(ranker, params, Xs, ys, Xt, derive_seed(dataset, response, pair, it, ranker))
                order = _order(scores)
                for adapter, a_params in adapters.items():
                    for k in counts:
                        cols = order[:k]
                        if adapter == "NA":
                            As, At = Xs[:, cols], Xt[:, cols]
                        else:
                            model = get_adapter(adapter, **dict(a_params or {}))
                            As, At = model.adapt(Xs[:, cols], np.zeros(ys.size, dtype=np.int64), Xt[:, cols])
                        one_nn, ridge = _predict(np.asarray(As), ys, np.asarray(At))
                        rmse = float(np.sqrt(np.mean((one_nn - yt) ** 2)))
                        second = float(np.sqrt(np.mean((ridge - yt) ** 2)))
                        rows.append({"dataset": dataset, "pair": pair, "source": source, "target": target,
                                     "iteration": it, "ranker": ranker, "adapter": adapter, "n_features": int(k),
                                     "rmse": rmse, "neg_rmse": -rmse, "second_rmse": second,
                                     "neg_second_rmse": -second})
    return rows


def run(mat_path, responses: Sequence[str], rankers: Mapping[str, Mapping], adapters: Mapping[str, Mapping | None],
        counts, iterations: int, family: str, provenance: Mapping, outputs: Mapping[str, str]) -> pd.DataFrame:
    """Read the corn spectra (``otfs.datasets.corn_nir``), evaluate every response, write the outputs."""
    from pathlib import Path

    from otfs.datasets import get_reader

    unknown = sorted(set(adapters) - set(NO_LABEL_ADAPTERS))
    if unknown:
        raise ValueError(f"adapters {unknown} need class labels; a regression family takes {list(NO_LABEL_ADAPTERS)}")
    rows = []
    for response in responses:
        reader = get_reader("corn-nir", {"response": response})
        domains = {}
        for domain in reader.domain_files:
            (rel,) = reader.files(domain)
            domains[domain] = reader.read(domain, {rel: Path(mat_path)}, None).check(f"corn-nir/{domain}")
        y = domains[next(iter(domains))].y
        rows += evaluate({k: v.X for k, v in domains.items()}, y, response, f"corn_{response}", rankers, adapters,
                         counts, iterations)
    long = pd.DataFrame(rows)
    long["git_commit"] = provenance.get("git_commit", "unknown")
    with atomic_path(outputs["parquet"]) as tmp:
        long.to_parquet(tmp, index=False)
    table = (long.groupby(["dataset", "ranker", "adapter", "n_features"], as_index=False)[["rmse", "second_rmse"]]
             .mean())
    write_csv(table, outputs["table_csv"], float_format="%.4g")
    write_json(outputs["provenance"], {**dict(provenance), "family": family})
    return long
