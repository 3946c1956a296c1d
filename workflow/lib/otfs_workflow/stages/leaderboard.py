"""Stage ``leaderboard``: every feature ranker x adapter x dataset of the feature-shift benchmark, compared.

A *task* is one (dataset, pair); a dataset is a feature set. For each task,
ranker and adapter, the classification stage gives the target accuracy along
the Descending order at each number of features (the grid's fractions of
``d``), for every iteration. This stage writes:

- ``results_long.parquet``: one row per (dataset, pair, iteration, ranker,
  adapter, number of features) with the accuracy, the adaptation time and
  the ranking time, and provenance columns (package versions, git commit,
  configuration hash) on every row, as benchopt's result files do;
- the per-dataset table: mean accuracy at each fraction, the normalised area
  under the accuracy-versus-fraction curve (nAUC: the trapezoidal area over
  the fractions, divided by their range, so that a flat curve at 70 % has
  nAUC 70) and the mean ranking time per iteration;
- the average ranks of the rankers over the tasks, per adapter, at the fixed
  fraction and by nAUC (rank 1: the most accurate; ties share their mean
  rank), with Friedman's test (SciPy) and Nemenyi's post-hoc test
  (scikit-posthocs), whose p-values are adjusted for the number of
  comparisons by the studentised range distribution, and a
  critical-difference diagram (scikit-posthocs);
- the same ranks and tests within each dataset that has at least two pairs;
- each reference ranker (the paper's ``ot`` and the source-only
  ``source-anova`` by default) against each other ranker, per dataset and
  over all of them: the mean difference, its wins, ties and losses over the
  tasks and over the (pair, iteration) runs, and Wilcoxon's signed-rank
  test over the tasks (SciPy), Holm-corrected over the other rankers of
  that reference (Holm's correction, :func:`otfs_workflow.stats.holm`);
- a ranker x adapter heatmap of nAUC per dataset.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs._checks import DegenerateResultWarning
from otfs_workflow.io import atomic_path, read_json, read_tsv, write_csv, write_json, write_text

__all__ = ["average_ranks", "collect", "nauc", "per_dataset_table", "rank_tests", "run", "versus_reference"]

#: The scope of the ranks and tests over every dataset's tasks together.
ALL = "all"


def collect(long_tables: Sequence[str], rankings: Sequence[str]) -> pd.DataFrame:
    """The aggregates' long tables, one row per curve point, with each iteration's ranking time."""
    long = pd.concat([read_tsv(p) for p in long_tables], ignore_index=True)
    times = []
    for path in rankings:
        run = read_json(path)
        times += [{"feature_set": run["feature_set"], "pair": run["pair"], "ranker": run["ranker"],
                   "iteration": it["iteration"], "ranking_seconds": it.get("ranking_time_s", np.nan)}
                  for it in run["iterations"]]
    long = long.merge(pd.DataFrame(times), on=["feature_set", "pair", "ranker", "iteration"], how="left",
                      validate="many_to_one")
    missing = long["ranking_seconds"].isna()
    if missing.any():
        raise ValueError(f"no ranking time for {int(missing.sum())} rows (first: "
                         f"{long.loc[missing].iloc[0][['feature_set', 'pair', 'ranker', 'iteration']].to_dict()})")
    return long.rename(columns={"feature_set": "dataset", "seconds": "adaptation_seconds"})


def nauc(fractions, accuracies) -> float:
    """The normalised area under an accuracy curve: trapezoidal area over ``fractions`` / their range."""
    x, y = np.asarray(fractions, float), np.asarray(accuracies, float)
    order = np.argsort(x)
    x, y = x[order], y[order]
    if x.size < 2 or x[-1] == x[0]:
        raise ValueError(f"nAUC needs at least two distinct fractions, got {x.tolist()}")
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)) / (x[-1] - x[0]))


def task_points(long: pd.DataFrame, d: Mapping[str, int], by: Sequence[str] = ()) -> pd.DataFrame:
    """Mean accuracy per (dataset, pair, *by, ranker, adapter, n_features), with its fraction: over the
    iterations by default, per run with ``by=["iteration"]``."""
    pts = long.groupby(["dataset", "pair", *by, "ranker", "adapter", "n_features"], as_index=False)["accuracy"].mean()
    pts["fraction"] = pts["n_features"] / pts["dataset"].map(d)
    return pts


def task_naucs(points: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    return (points.groupby(["dataset", "pair", *by, "ranker", "adapter"])
            .apply(lambda g: nauc(g["fraction"], g["accuracy"]), include_groups=False)
            .rename("nauc").reset_index())


def per_dataset_table(long: pd.DataFrame, d: Mapping[str, int]) -> pd.DataFrame:
    """Per dataset, ranker and adapter: mean accuracy at each fraction (over pairs of the iteration means),
    the mean nAUC over pairs, and the mean ranking time per iteration."""
    pts = task_points(long, d)
    acc = pts.groupby(["dataset", "ranker", "adapter", "n_features", "fraction"], as_index=False)["accuracy"].mean()
    wide = acc.pivot_table(index=["dataset", "ranker", "adapter"], columns="fraction", values="accuracy")
    wide.columns = [f"acc@{_fraction_label(f)}" for f in wide.columns]
    naucs = task_naucs(pts).groupby(["dataset", "ranker", "adapter"])["nauc"].mean()
    times = (long.drop_duplicates(["dataset", "pair", "ranker", "iteration"])
             .groupby(["dataset", "ranker"])["ranking_seconds"].mean())
    out = wide.join(naucs).reset_index()
    out["ranking_seconds"] = [times[(ds, r)] for ds, r in zip(out["dataset"], out["ranker"], strict=True)]
    return out


def _fraction_label(f: float) -> str:
    if np.isclose(f, 1):
        return "d"
    inv = 1 / f
    return f"d/{int(round(inv))}" if np.isclose(inv, round(inv), rtol=1e-3) else f"{f:.3g}d"


def average_ranks(scores: pd.DataFrame) -> pd.Series:
    """Mean rank of each column (ranker) over the rows (tasks): 1 for the highest score, ties averaged."""
    return scores.rank(axis=1, ascending=False, method="average").mean(axis=0).sort_values()


def rank_tests(scores: pd.DataFrame) -> dict:
    """Friedman's test over the tasks (rows) and Nemenyi's post-hoc p-values between the rankers (columns)."""
    import scikit_posthocs as sp
    from scipy.stats import friedmanchisquare

    if scores.shape[0] < 2 or scores.shape[1] < 3:
        raise ValueError(f"Friedman's test needs at least 2 tasks and 3 rankers, got {scores.shape}")
    stat, p = friedmanchisquare(*[scores[c].to_numpy() for c in scores.columns])
    nemenyi = sp.posthoc_nemenyi_friedman(scores.to_numpy())
    nemenyi.index = nemenyi.columns = list(scores.columns)
    return {"friedman_statistic": float(stat), "friedman_p": float(p), "nemenyi": nemenyi,
            "average_ranks": average_ranks(scores), "tasks": int(scores.shape[0])}


def versus_reference(scores: pd.DataFrame, reference: str, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ``reference`` ranker (a column of ``scores``) against each other column, over the tasks (rows).

    For each other ranker: the mean of each, the mean difference (reference
    minus other), the tasks where the reference is more accurate, equal or
    less accurate, and the two-sided Wilcoxon signed-rank p-value over the
    tasks (SciPy; zero differences dropped; 1 where every difference is 0),
    Holm-corrected over the other rankers (``p_holm``, :func:`otfs_workflow.stats.holm`).
    ``runs``, with the same columns, gives the wins, ties and losses over
    the individual runs too (one row per (pair, iteration)); their tests are
    not done, as the runs of one pair share its target samples.
    """
    from otfs_workflow.stats import holm, wilcoxon_p

    if reference not in scores.columns:
        raise ValueError(f"reference ranker {reference!r} is not among the rankers {list(scores.columns)}")
    rows = []
    for other in (c for c in scores.columns if c != reference):
        diff = scores[reference] - scores[other]
        row = {"ranker": other, "tasks": int(diff.size), "reference_mean": float(scores[reference].mean()),
               "ranker_mean": float(scores[other].mean()), "mean_difference": float(diff.mean()),
               "wins": int((diff > 0).sum()), "ties": int((diff == 0).sum()), "losses": int((diff < 0).sum())}
        if runs is not None:
            rd = runs[reference] - runs[other]
            row.update(run_wins=int((rd > 0).sum()), run_ties=int((rd == 0).sum()), run_losses=int((rd < 0).sum()))
        row["p"] = wilcoxon_p(diff.to_numpy())
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["p_holm"] = holm(out["p"].to_numpy())
    return out


def _config_hash(config: Mapping) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run(long_tables: Sequence[str], rankings: Sequence[str], recovery: str, n_features: Mapping[str, int],
        fraction: int | Mapping[str, int], alpha: float, provenance: Mapping, outputs: Mapping[str, str],
        caption: str, reference: str | Sequence[str] = "ot") -> dict:
    """Write every output of the leaderboard (module docstring).

    Parameters
    ----------
    long_tables : the aggregates' ``long.tsv`` files (one per dataset, ranker and adapter)
    rankings : the ranking stage's JSON files behind them
    recovery : the planted-shift recovery runs (``results/shift_recovery/runs.csv``)
    n_features : d of each dataset
    fraction : the number of features of the fixed-fraction ranks, per dataset
    alpha : level of the post-hoc test's significance marks
    provenance : the record written beside the tables
    outputs : paths by key (see the rule)
    caption : the first line of every Markdown table
    reference : the ranker, or rankers, each compared with every other one (the ``versus`` table, one block
        per reference, Holm's correction within each block)
    """
    from otfs_workflow.config import references
    from otfs_workflow.plotting import save_outputs  # noqa: F401  (matplotlib's non-interactive backend, before pyplot)

    refs = references(reference)

    long = collect(long_tables, rankings)
    for col, value in (("versions", json.dumps(provenance["versions"], sort_keys=True)),
                       ("git_commit", provenance.get("git_commit", "unknown")),
                       ("config_hash", _config_hash(provenance.get("config", {})))):
        long[col] = value
    with atomic_path(outputs["parquet"]) as tmp:
        long.to_parquet(tmp, index=False)

    table = per_dataset_table(long, n_features)
    _write_table(table, outputs, "table", caption)

    pts = task_points(long, n_features)
    naucs = task_naucs(pts)
    fixed = pts[pts["n_features"] == pts["dataset"].map(fraction)]
    run_points = task_points(long, n_features, by=["iteration"])
    run_naucs = task_naucs(run_points, by=["iteration"])
    run_fixed = run_points[run_points["n_features"] == run_points["dataset"].map(fraction)]
    datasets = list(dict.fromkeys(long["dataset"]))
    rows, tests, versus = [], {}, []
    for adapter in list(dict.fromkeys(long["adapter"])):
        for criterion, frame, runs, value in (("fraction", fixed, run_fixed, "accuracy"),
                                              ("nauc", naucs, run_naucs, "nauc")):
            all_scores = frame[frame["adapter"] == adapter].pivot_table(
                index=["dataset", "pair"], columns="ranker", values=value).dropna(axis=0)
            all_runs = runs[runs["adapter"] == adapter].pivot_table(
                index=["dataset", "pair", "iteration"], columns="ranker", values=value).dropna(axis=0)
            for scope in [ALL, *(datasets if len(datasets) > 1 else [])]:  # one dataset: "all" is it
                scores, scope_runs = (t if scope == ALL else t[t.index.get_level_values("dataset") == scope]
                                      for t in (all_scores, all_runs))
                for ref in refs:
                    if ref in scores.columns and len(scores):
                        versus.append(versus_reference(scores, ref, scope_runs)
                                      .assign(dataset=scope, adapter=adapter, criterion=criterion, reference=ref))
                if len(scores) < 2:
                    continue  # a dataset of one pair: no test
                res = rank_tests(scores)
                tests[(scope, adapter, criterion)] = res
                for ranker, r in res["average_ranks"].items():
                    rows.append({"dataset": scope, "adapter": adapter, "criterion": criterion, "ranker": ranker,
                                 "average_rank": r, "tasks": res["tasks"],
                                 "friedman_statistic": res["friedman_statistic"], "friedman_p": res["friedman_p"]})
    if not tests:
        warnings.warn(f"{outputs['ranks_csv']}: no rank test: every scope has fewer than 2 tasks (pairs) with "
                      "every ranker's score; the ranks, post-hoc and critical-difference outputs are empty. "
                      "Configure more pairs (protocol.pairs) for a test.", DegenerateResultWarning, stacklevel=2)
    ranks = pd.DataFrame(rows, columns=["dataset", "adapter", "criterion", "ranker", "average_rank", "tasks",
                                        "friedman_statistic", "friedman_p"])
    _write_table(ranks, outputs, "ranks", caption)
    post_columns = ["dataset", "adapter", "criterion", "ranker", "versus", "p"]
    posts = [res["nemenyi"].stack().rename("p").rename_axis(["ranker", "versus"]).reset_index()
             .assign(dataset=ds, adapter=a, criterion=c) for (ds, a, c), res in tests.items()]
    post = pd.concat(posts, ignore_index=True)[post_columns] if posts else pd.DataFrame(columns=post_columns)
    write_csv(post, outputs["posthoc"], float_format="%.4g")
    columns = ["dataset", "adapter", "criterion", "reference", "ranker", "tasks", "reference_mean", "ranker_mean",
               "mean_difference", "wins", "ties", "losses", "run_wins", "run_ties", "run_losses", "p", "p_holm"]
    versus = pd.concat(versus, ignore_index=True)[columns] if versus else pd.DataFrame(columns=columns)
    named = ", ".join(repr(r) for r in refs)
    _write_table(versus, outputs, "versus", f"{caption} The reference ranker{'s' if len(refs) > 1 else ''} {named} "
                                            "against each other one (Holm's correction within each reference).")

    _cd_figure(tests, alpha, outputs)
    _heatmap(table, outputs)
    _recovery_figure(pd.read_csv(recovery), outputs)
    write_json(outputs["provenance"], dict(provenance))
    return {"table": table, "ranks": ranks, "tests": tests, "versus": versus}


def _write_table(df: pd.DataFrame, outputs, key: str, caption: str) -> None:
    write_csv(df, outputs[f"{key}_csv"], float_format="%.4g")
    fmt = {c: (lambda v: f"{v:.4g}") for c in df.columns if df[c].dtype.kind == "f"}
    write_text(outputs[f"{key}_md"], caption + "\n\n" + _markdown(df, fmt) + "\n")
    write_text(outputs[f"{key}_tex"], df.to_latex(index=False, float_format="%.4g", escape=True))


def _markdown(df, fmt) -> str:
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    lines = [head, "|" + "---|" * len(df.columns)]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(fmt[c](row[c]) if c in fmt else str(row[c]) for c in df.columns) + " |")
    return "\n".join(lines)


def _save(fig, outputs, key, title):
    from otfs_workflow.plotting import save_outputs

    fig.tight_layout()
    save_outputs(fig, {"pdf": outputs[f"{key}_pdf"], "png": outputs[f"{key}_png"]}, title)


def _cd_figure(tests, alpha, outputs) -> None:
    """One critical-difference diagram (by nAUC) per adapter, from scikit-posthocs."""
    import matplotlib.pyplot as plt
    import scikit_posthocs as sp

    adapters = [a for (ds, a, c) in tests if ds == ALL and c == "nauc"]
    if not adapters:  # no test: a figure that says so
        fig, ax = plt.subplots(figsize=(8, 1.2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no rank test: fewer than 2 tasks (pairs) with every ranker's score", ha="center",
                va="center", fontsize=9)
        _save(fig, outputs, "cd", "Critical-difference diagrams of the feature rankers")
        return
    # each side of a diagram lists half the rankers, a line each: 15 rankers need about 2.4 in a panel
    n_rankers = max(len(tests[(ALL, a, "nauc")]["average_ranks"]) for a in adapters)
    panel = max(1.6, 0.8 + 0.2 * -(-n_rankers // 2))
    fig, axes = plt.subplots(len(adapters), 1, figsize=(8, panel * len(adapters) + 0.4), squeeze=False)
    for ax, adapter in zip(axes[:, 0], adapters, strict=True):
        res = tests[(ALL, adapter, "nauc")]
        sp.critical_difference_diagram(res["average_ranks"], res["nemenyi"], ax=ax, alpha=alpha)
        ax.set_title(f"{adapter}: average rank by nAUC over {res['tasks']} tasks "
                     f"(Friedman p = {res['friedman_p']:.2g}; bars join rankers not different at {alpha})",
                     fontsize=8)
    _save(fig, outputs, "cd", "Critical-difference diagrams of the feature rankers")


def _heatmap(table: pd.DataFrame, outputs) -> None:
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(table["dataset"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 3.6), squeeze=False)
    for ax, ds in zip(axes[0], datasets, strict=True):
        m = table[table["dataset"] == ds].pivot(index="ranker", columns="adapter", values="nauc")
        im = ax.imshow(m.to_numpy(), cmap="viridis", aspect="auto")
        ax.set_xticks(range(m.shape[1]), m.columns, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(m.shape[0]), m.index, fontsize=7)
        lo, hi = np.nanmin(m.to_numpy()), np.nanmax(m.to_numpy())
        for (i, j), v in np.ndenumerate(m.to_numpy()):  # dark text on the light end of viridis
            light = hi > lo and (v - lo) / (hi - lo) > 0.6
            ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=6, color="black" if light else "white")
        ax.set_title(f"{ds}: nAUC (%)", fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046)
    _save(fig, outputs, "heatmap", "nAUC of every ranker x adapter, per dataset")


def _recovery_figure(runs: pd.DataFrame, outputs) -> None:
    import matplotlib.pyplot as plt

    from otfs.datasets.planted_shifts import SHIFT_KINDS

    m = runs.groupby(["ranker", "kind"])["recovered"].mean().unstack()[list(SHIFT_KINDS)]
    m = m.loc[list(dict.fromkeys(runs["ranker"]))]
    fig, ax = plt.subplots(figsize=(6, 0.4 * len(m) + 1.2))
    ax.imshow(m.to_numpy(), cmap="magma", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(m.shape[1]), m.columns, rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(m.shape[0]), m.index, fontsize=7)
    for (i, j), v in np.ndenumerate(m.to_numpy()):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6, color="white" if v < 0.6 else "black")
    ax.set_title(f"Planted shifts found (share ranked last; {runs['seed'].nunique()} seeds)", fontsize=8)
    _save(fig, outputs, "recovery", "Planted shifts found by each ranker")
