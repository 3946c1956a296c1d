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

The label-free choice of k that applies without classes: each data rule
of the choice of k (``shift-test``: KS per feature and Benjamini–Hochberg,
:mod:`otfs.k_selection`) picks k* from the two halves of each (pair,
repetition), the same for every ranker and adapter, recorded in the long
rows as ``<rule>:k``; :func:`choices` measures what k* loses against the
best k in hindsight (in RMSE). skada's scorers need class probabilities and
do not apply.

One Parquet of long rows (the columns of the leaderboard's, with ``rmse``,
``neg_rmse``, ``second_rmse``, ``neg_second_rmse`` and the data rules'
``<rule>:k``), a table of mean RMSE, and the provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.io import atomic_path, write_csv, write_json
from otfs_workflow.protocol import derive_seed, make_pairs, parse_pair, resolve_feature_counts

__all__ = ["NO_LABEL_ADAPTERS", "RELEVANCE", "choices", "evaluate", "run"]

#: The keys of one run of a regression family.
RUN = ["dataset", "pair", "ranker", "adapter", "iteration"]

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


def _data_rules(rules: Mapping[str, Mapping | None] | None) -> dict:
    """The data rules among the choice of k's ``rules`` (config ``model_selection.rules``), built: those that choose
    k from the two domains alone. The scorers need class probabilities; the oracle and all features are the
    references :func:`choices` adds."""
    from otfs.k_selection import get_rule

    built = {name: get_rule(name, **dict(params or {})) for name, params in (rules or {}).items()}
    return {name: rule for name, rule in built.items() if rule.kind == "data"}


def evaluate(X: Mapping[str, np.ndarray], y: np.ndarray, response: str, dataset: str, rankers: Mapping[str, Mapping],
             adapters: Mapping[str, Mapping | None], counts, iterations: int,
             data_rules: Mapping[str, Mapping | None] | None = None) -> list[dict]:
    """The long rows of one response: every pair of domains, repetition, ranker, adapter and count; each data rule's
    k* of the (pair, repetition) on every row of it (``<rule>:k`` and what the choice rests on)."""
    from otfs.adapters import get_adapter
    from otfs.preprocessing import zscore
    from otfs_workflow.stages.model_selection import data_choices

    rules = _data_rules(data_rules)
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
            chosen = data_choices(rules, Xs, Xt, counts)
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
                                     "neg_second_rmse": -second, **chosen})
    return rows


def choices(long: pd.DataFrame) -> pd.DataFrame:
    """Each rule's k* per run of a regression family, and what it loses against the best k in hindsight.

    The rules: every data rule of the long rows (its ``<rule>:k`` column), ``oracle`` (the k of the lowest 1-NN
    RMSE: it reads the target's responses) and ``all-features``. One row per (run, rule) with ``k``,
    ``fraction`` (k / d), ``rmse`` (the 1-NN's at k*), ``oracle_rmse``, ``all_rmse``, ``regret`` (RMSE at k*
    minus the oracle's, >= 0), ``gain`` (all features' RMSE minus k*'s: positive where k* does better), the
    same for the ridge regression (``second_*``, its own oracle), and ``reads_target_labels``; the columns
    :func:`otfs_workflow.stages.verdict.k_regrets` reads.
    """
    from otfs.k_selection import choose_k

    rules = [c[:-2] for c in long.columns if c.endswith(":k")]
    out = []
    for key, group in long.groupby(RUN, sort=False):
        group = group.sort_values("n_features")
        counts = group["n_features"].to_numpy()
        d = int(counts.max())
        one_nn = dict(zip(counts.tolist(), group["rmse"].tolist()))
        ridge = dict(zip(counts.tolist(), group["second_rmse"].tolist()))
        oracle = choose_k(counts, -group["rmse"].to_numpy())
        best = {"rmse": one_nn[oracle], "second_rmse": ridge[choose_k(counts, -group["second_rmse"].to_numpy())]}
        picks = {**{r: int(group[f"{r}:k"].iloc[0]) for r in rules}, "oracle": oracle, "all-features": d}
        for rule, k in picks.items():
            if k not in one_nn:
                raise ValueError(f"run {dict(zip(RUN, key))}: rule {rule!r} chose {k} features, not a count of "
                                 f"the grid {counts.tolist()}")
            out.append({**dict(zip(RUN, key)), "rule": rule, "kind": "oracle" if rule == "oracle" else
                        ("reference" if rule == "all-features" else "data"), "k": k, "fraction": k / d,
                        "rmse": one_nn[k], "oracle_rmse": best["rmse"], "all_rmse": one_nn[d],
                        "regret": one_nn[k] - best["rmse"], "gain": one_nn[d] - one_nn[k],
                        "second_rmse": ridge[k], "second_regret": ridge[k] - best["second_rmse"],
                        "second_gain": ridge[d] - ridge[k], "reads_target_labels": rule == "oracle"})
    return pd.DataFrame(out)


def run(mat_path, responses: Sequence[str], rankers: Mapping[str, Mapping], adapters: Mapping[str, Mapping | None],
        counts, iterations: int, family: str, provenance: Mapping, outputs: Mapping[str, str],
        data_rules: Mapping[str, Mapping | None] | None = None) -> pd.DataFrame:
    """Read the corn spectra (``otfs.datasets.corn_nir``), evaluate every response, write the outputs.
    ``data_rules``: the choice of k's rules (config ``model_selection.rules``); its data rules run."""
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
                         counts, iterations, data_rules)
    long = pd.DataFrame(rows)
    long["git_commit"] = provenance.get("git_commit", "unknown")
    with atomic_path(outputs["parquet"]) as tmp:
        long.to_parquet(tmp, index=False)
    table = (long.groupby(["dataset", "ranker", "adapter", "n_features"], as_index=False)[["rmse", "second_rmse"]]
             .mean())
    write_csv(table, outputs["table_csv"], float_format="%.4g")
    write_json(outputs["provenance"], {**dict(provenance), "family": family})
    return long
