"""Stage ``verdict``: per data family, which feature rankers to trust, in a page a user reads in a minute.

Inputs: each family's leaderboard results (``results/shift/<family>/results_long.parquet``, the rows of
:mod:`otfs_workflow.stages.leaderboard`) and its label-free choices of k
(``results/shift/<family>/k_selection/choices.parquet``, :mod:`otfs_workflow.stages.model_selection`).

The score of a ranker on a task (a feature set's pair) under an adapter is
its nAUC: the normalised area under the 1-NN accuracy curve over the grid's
fractions of the features, after averaging the iterations (the
leaderboard's criterion). Per family and adapter, and pooled over every
family's tasks (``all families``):

- the rankers' average ranks over the tasks and Friedman's p-value (2 tasks
  or more);
- the reference ranker (OT) against the best per-feature shift measure (the
  one with the highest mean nAUC in that family and adapter, chosen in
  hindsight, which favours it) and against the source-only relevance
  ranking (source ANOVA): the mean nAUC difference in points, wins, ties
  and losses over the tasks, Wilcoxon's signed-rank p-value over the tasks
  and its Holm correction over every comparison of the family (or of the
  pool). With ``n`` tasks the smallest two-sided p-value Wilcoxon's exact
  test can reach is ``2 / 2**n``, and Holm's correction over the family's
  ``m`` comparisons makes it at least ``m`` times that: a family with fewer
  than 6 tasks cannot show a difference at 0.05, nor can one with 6 tasks and
  more than one comparison (WiFi), and the verdict says so rather than
  calling it a tie;
- how much the label-free choice of k loses against the best k in
  hindsight (the oracle): the mean regret of each label-free rule, and of
  keeping every feature, over the runs of the family (every ranker,
  adapter, pair and iteration). A regression family (corn) has the data
  rules only (the shift test; the scorers need class labels), from its
  long rows (:func:`otfs_workflow.stages.regression.choices`), with the
  regret in RMSE; it is not pooled with the classification families.

Pooled over the classification families, every ranker is also set against
OT and against the source relevance (:func:`every_ranker_versus`).

Outputs: ``verdict.csv`` (the comparisons), ``verdict_k.csv`` (the
regrets), ``verdict_versus.csv`` (every ranker against both), ``verdict.md`` (a table at a glance, one row per family, then the
sentences and both tables), a figure and the provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.formatting import decimals, p_value
from otfs_workflow.formatting import difference as fmt_difference
from otfs_workflow.io import write_csv, write_json, write_text
from otfs_workflow.stages.leaderboard import average_ranks, task_naucs, task_points, versus_reference
from otfs_workflow.stats import holm, min_wilcoxon_p, wilcoxon_p

__all__ = ["comparisons", "every_ranker_versus", "k_regrets", "metric_regrets", "run", "task_scores"]

POOLED = "all families"
#: The metrics judged, where a family's results have them: the paper's 1-NN accuracy first.
METRICS = {"accuracy": "1-NN accuracy", "balanced_accuracy": "1-NN balanced accuracy",
           "second_accuracy": "logistic-regression accuracy",
           "second_balanced_accuracy": "logistic-regression balanced accuracy", "second_auc": "logistic-regression AUC",
           "neg_rmse": "1-NN RMSE, negated (higher is better)",
           "neg_second_rmse": "ridge-regression RMSE, negated (higher is better)"}




def task_scores(long: pd.DataFrame, n_features: Mapping[str, int], metric: str = "accuracy") -> pd.DataFrame:
    """nAUC of ``metric`` per (dataset, pair, ranker, adapter) from a leaderboard's long rows (iterations
    averaged)."""
    if metric not in long.columns:
        raise ValueError(f"the results have no column {metric!r} (columns: {list(long.columns)})")
    return task_naucs(task_points(long.assign(accuracy=long[metric]), n_features))




def comparisons(scores: pd.DataFrame, family: str, reference: str, relevance: str | Sequence[str],
                per_feature: Sequence[str], metric: str = "accuracy") -> pd.DataFrame:
    """One row per (adapter, comparison) of ``family``'s task scores (the module docstring); Holm's
    correction runs over the rows (one family, one metric)."""
    from scipy.stats import friedmanchisquare
    rows = []
    for adapter, group in scores.groupby("adapter", sort=False):
        wide = group.pivot_table(index=["dataset", "pair"], columns="ranker", values="nauc").dropna(axis=0)
        if reference not in wide.columns or wide.empty:
            continue
        ranks = average_ranks(wide)
        friedman = (float(friedmanchisquare(*[wide[c].to_numpy() for c in wide.columns]).pvalue)
                    if len(wide) >= 2 and wide.shape[1] >= 3 else np.nan)
        best_rank = ranks.min()
        best = [r for r, v in ranks.items() if np.isclose(v, best_rank)]
        present = [r for r in per_feature if r in wide.columns]
        others = []
        if present:
            means = wide[present].mean()
            others.append(("best per-feature measure", str(means.idxmax())))
        for name in [relevance] if isinstance(relevance, str) else relevance:
            if name in wide.columns:
                others.append(("source relevance", name))
                break
        for kind, other in others:
            diff = (wide[reference] - wide[other]).to_numpy()
            rows.append({"family": family, "metric": metric, "adapter": adapter, "tasks": len(wide), "best": " = ".join(best),
                         "best_rank": float(best_rank), "reference_rank": float(ranks[reference]),
                         "friedman_p": friedman, "comparison": kind, "versus": other,
                         "reference_nauc": float(wide[reference].mean()), "versus_nauc": float(wide[other].mean()),
                         "difference": float(diff.mean()), "wins": int((diff > 0).sum()),
                         "ties": int((diff == 0).sum()), "losses": int((diff < 0).sum()),
                         "p": wilcoxon_p(diff), "min_p": min_wilcoxon_p(int((diff != 0).sum()))})
    out = pd.DataFrame(rows)
    if len(out):
        out["p_holm"] = holm(out["p"].to_numpy())
        # Holm multiplies the smallest p-value by the number of comparisons and never lowers the others
        # below it: no row of the family can get a corrected p-value under this bound
        out["holm_m"] = len(out)
        out["min_p_holm"] = min(1.0, len(out) * float(out["min_p"].min()))
    return out


#: The columns of :func:`every_ranker_versus` (``verdict_versus.csv``).
VERSUS_COLUMNS = ["reference", "adapter", "ranker", "tasks", "reference_rank", "ranker_rank", "reference_nauc",
                  "ranker_nauc", "difference", "wins", "ties", "losses", "p", "p_holm"]


def every_ranker_versus(scores: pd.DataFrame, references: Sequence[str],
                        adapters: Sequence[str] = ()) -> pd.DataFrame:
    """Every ranker against each of ``references`` (those present: OT, the source relevance) over the tasks of
    ``scores`` (one row per (family, dataset, pair, ranker, adapter) with its ``nauc``), per adapter: one row
    per (reference, adapter, ranker) with both rankers' average ranks among all the rankers (over the tasks
    every ranker has), both mean nAUCs, the mean difference (the reference minus the ranker), wins, ties and
    losses over the tasks, Wilcoxon's signed-rank p-value over the tasks and Holm's correction over the
    rankers of that reference and adapter: the leaderboard's
    :func:`~otfs_workflow.stages.leaderboard.versus_reference`, with the ranks."""
    index = [c for c in ("family", "dataset", "pair") if c in scores.columns]
    order = {a: i for i, a in enumerate(adapters)}
    names = {"reference_mean": "reference_nauc", "ranker_mean": "ranker_nauc", "mean_difference": "difference"}
    out = []
    for adapter in sorted(set(scores["adapter"]), key=lambda a: (order.get(a, len(order)), a)):
        wide = scores[scores["adapter"] == adapter].pivot_table(index=index, columns="ranker",
                                                                values="nauc").dropna(axis=0)
        if wide.empty:
            continue
        ranks = average_ranks(wide)
        for reference in [r for r in references if r in wide.columns]:
            part = versus_reference(wide, reference).rename(columns=names)
            if part.empty:
                continue
            part = part.assign(reference=reference, adapter=adapter, reference_rank=float(ranks[reference]),
                               ranker_rank=part["ranker"].map(ranks).astype(float))
            out.append(part.sort_values("ranker_rank", kind="stable")[VERSUS_COLUMNS])
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=VERSUS_COLUMNS)


def _versus_lines(versus: pd.DataFrame, alpha: float) -> list[str]:
    """verdict.md's section on :func:`every_ranker_versus`: per reference, a table of rankers by adapter."""
    if versus.empty:
        return []
    tasks = versus.drop_duplicates("adapter").set_index("adapter")["tasks"]
    lines = ["## Every ranker against OT and against the source relevance, over every family's tasks", "",
             "1-NN nAUC over the tasks of the classification families together, an adapter's tasks in brackets "
             "beside it (`verdict_versus.csv`). Each cell: the ranker's average rank among all the rankers (1 is best), "
             "then the reference's nAUC minus the ranker's in points and Wilcoxon's p over the tasks, "
             f"Holm-corrected over the rankers of that reference and adapter; **bold** where p_holm < {alpha} "
             "and the ranker is ahead.", ""]
    adapters = list(dict.fromkeys(versus["adapter"]))
    for reference, part in versus.groupby("reference", sort=False):
        ref_ranks = part.drop_duplicates("adapter").set_index("adapter")["reference_rank"]
        lines += [f"Against `{reference}` (its average rank: "
                  + ", ".join(f"{a} {ref_ranks[a]:.2f}" for a in adapters if a in ref_ranks.index) + "):", "",
                  "| ranker | " + " | ".join(f"{a} ({int(tasks[a])})" for a in adapters) + " |",
                  "|---|" + "---|" * len(adapters)]
        first = part[part["adapter"] == adapters[0]].sort_values("ranker_rank")["ranker"].tolist()
        for ranker in first + sorted(set(part["ranker"]) - set(first)):
            cells = []
            for adapter in adapters:
                row = part[(part["adapter"] == adapter) & (part["ranker"] == ranker)]
                if row.empty:
                    cells.append("")
                    continue
                r = row.iloc[0]
                cell = f"{r['ranker_rank']:.2f} ({fmt_difference(r['difference'])}, p {p_value(r['p_holm'])})"
                cells.append(f"**{cell}**" if r["p_holm"] < alpha and r["difference"] < 0 else cell)
            lines.append(f"| {ranker} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


#: The other metrics in which the choices of k are also judged (:func:`metric_regrets`): the column of the
#: regret they add to the choices, and what the verdict calls them.
REGRET_METRICS = {"balanced_accuracy": ("balanced_regret", "1-NN balanced accuracy"),
                  "second_accuracy": ("second_regret", "logistic-regression accuracy")}


def metric_regrets(chosen: pd.DataFrame, long: pd.DataFrame) -> pd.DataFrame:
    """The choices with what each k* loses in the family's other metrics (:data:`REGRET_METRICS`).

    The rules chose k from the 1-NN's grid. For a metric the long rows have (e.g. the second classifier's
    accuracy at every k of the same runs), the regret of a choice is the metric's best over the run's k (its
    own best k in hindsight) minus its value at k*, in points. A run or a k* that the long rows lack is an
    error naming it: the leaderboard's grid and the choice of k's must be the same."""
    keys = ["feature_set", "pair", "ranker", "adapter", "iteration"]
    present = [m for m in REGRET_METRICS if m in long.columns and long[m].notna().any()]
    if not present or chosen.empty:
        return chosen
    points = long.rename(columns={"dataset": "feature_set"})
    points = points[points["order"] == "Descending"] if "order" in points.columns else points
    points = points.set_index([*keys, "n_features"])[present]
    if points.index.duplicated().any():
        raise ValueError("the long rows hold a (feature set, pair, ranker, adapter, iteration, k) twice")
    at = points.reindex(pd.MultiIndex.from_frame(chosen[[*keys, "k"]].rename(columns={"k": "n_features"})))
    missing = at.isna().all(axis=1).to_numpy()
    if missing.any():
        row = chosen.loc[missing, [*keys, "k"]].iloc[0].to_dict()
        raise ValueError(f"no leaderboard row for the choice {row}: the leaderboard's grid lacks this run or k")
    best = points.groupby(level=keys).max().reindex(pd.MultiIndex.from_frame(chosen[keys]))
    out = chosen.copy()
    for metric in present:
        out[REGRET_METRICS[metric][0]] = best[metric].to_numpy() - at[metric].to_numpy()
    return out


def k_regrets(chosen: pd.DataFrame, family: str, unit: str = "points") -> pd.DataFrame:
    """Per label-free rule (and all features): its mean regret against the oracle over the family's runs, in
    ``unit`` (accuracy points; a regression family's RMSE); and, where the choices have them
    (:func:`metric_regrets`; a regression family's ridge regression), its mean regret in the other metrics."""
    free = chosen[(~chosen["reads_target_labels"].astype(bool)) & (chosen["rule"] != "oracle")]
    g = free.groupby("rule", sort=False)
    others = {col: (col, "mean") for col, _ in REGRET_METRICS.values() if col in free.columns}
    out = g.agg(runs=("regret", "size"), regret=("regret", "mean"), regret_sd=("regret", "std"),
                fraction=("fraction", "mean"), gain=("gain", "mean"), **others).reset_index()
    out.insert(0, "family", family)
    out["unit"] = unit
    return out


def _fmt_regret(v: float, unit: str, short: bool = False) -> str:
    """A regret: one decimal of accuracy points, or two significant digits of RMSE (the response's units);
    ``short``: as the glance table shows it (points bare)."""
    if unit == "points":
        return f"{v:.1f}" if short else f"{v:.1f} points"
    return f"{v:.2g} RMSE" if short else f"{v:.2g} of RMSE"






def _sentence(row, alpha: float) -> str:
    sign = "ahead of" if row["difference"] > 0 else ("level with" if row["difference"] == 0 else "behind")
    text = (f"OT is {fmt_difference(abs(row['difference']), False)} {sign} the {row['comparison']} ({row['versus']}) "
            f"under {row['adapter']}, {row['wins']}/{row['ties']}/{row['losses']} wins/ties/losses over "
            f"{row['tasks']} task{'s' if row['tasks'] != 1 else ''}")
    if row["min_p"] > alpha:
        return text + f": too few tasks for a test at {alpha} (the smallest attainable p is {row['min_p']:.2g})"
    if row["min_p_holm"] > alpha:
        return text + (f": too few tasks for a test at {alpha} after Holm's correction over the family's "
                       f"{row['holm_m']} comparisons (the smallest attainable p is {row['min_p']:.2g}, "
                       f"{row['min_p_holm']:.2g} corrected)")
    if row["p_holm"] <= alpha:
        return text + f", significant (Holm p = {p_value(row['p_holm'])})"
    return text + f", not significant (Holm p = {p_value(row['p_holm'])})"


def _family_summary(all_rows: pd.DataFrame, k: pd.DataFrame, alpha: float, main: str) -> list[str]:
    lines = []
    rows = all_rows[all_rows["metric"] == main]
    if main != "accuracy":
        lines.append(f"- Judged by the {METRICS[main]}.")
    best = rows.drop_duplicates("adapter")
    leaders = "; ".join(f"{r.adapter}: {r.best} (OT ranks {r.reference_rank:.1f})" for r in best.itertuples())
    lines.append(f"- Best rankers by average rank, per adapter: {leaders}.")
    for kind in ("best per-feature measure", "source relevance"):
        part = rows[rows["comparison"] == kind]
        if part.empty:
            continue
        testable = part[part["min_p_holm"] <= alpha]
        sig_win, sig_loss = _significant(part, alpha)
        ahead = int((part["difference"] > 0).sum())
        if testable.empty:
            verdict = (f"OT is ahead of the {kind} under {ahead} of {len(part)} adapters, but the family has "
                       f"too few tasks for any test at {alpha}{_holm_note(part, alpha)}")
        elif sig_win.empty and sig_loss.empty:
            verdict = (f"OT does **not** significantly beat the {kind} under any adapter (ahead under {ahead} of "
                       f"{len(part)}; mean difference {fmt_difference(part['difference'].mean())})")
        else:
            verdict = (f"OT significantly beats the {kind} under {len(sig_win)} of {len(part)} adapters "
                       f"({', '.join(sig_win['adapter']) or 'none'}) and significantly loses under "
                       f"{len(sig_loss)} ({', '.join(sig_loss['adapter']) or 'none'}); mean difference "
                       f"{fmt_difference(part['difference'].mean())}")
        lines.append(f"- {verdict}.")
    for metric, label in METRICS.items():
        part = all_rows[all_rows["metric"] == metric]
        if metric == main or part.empty:
            continue
        bits = []
        for kind in ("best per-feature measure", "source relevance"):
            sub = part[part["comparison"] == kind]
            if sub.empty:
                continue
            wins, losses = _significant(sub, alpha)
            bits.append(f"against the {kind}, OT is ahead under {int((sub['difference'] > 0).sum())} of {len(sub)} "
                        f"adapters (mean {fmt_difference(sub['difference'].mean())}; significant wins {len(wins)}, "
                        f"losses {len(losses)})")
        if bits:
            lines.append(f"- With the {label}: " + "; ".join(bits) + ".")
    if k.empty:
        lines.append("- Label-free k: not run (no label-free rule applies: the scorers need class labels).")
    else:
        top, free, everything = _label_free_k(k)
        if top is not None:
            unit = top.get("unit", "points")
            tail = (f"; keeping every feature loses {_fmt_regret(everything, unit)}" if everything is not None
                    else "")
            scope = (f"the rules range from {_fmt_regret(free['regret'].min(), unit)} to "
                     f"{_fmt_regret(free['regret'].max(), unit)}" if len(free) > 1 else
                     "the one label-free rule that applies: the scorers need class labels")
            lines.append(f"- Label-free k: the best label-free rule in hindsight, {top['rule']}, loses "
                         f"{_fmt_regret(top['regret'], unit)} against the best k in hindsight (mean over "
                         f"{top['runs']} runs; {scope}){tail}.")
            if unit == "points":
                lines += _other_metric_regrets(free, k[k["rule"] == "all-features"], top["rule"])
    return lines


def _other_metric_regrets(free: pd.DataFrame, everything: pd.DataFrame, top: str) -> list[str]:
    """A sentence per other metric: what the same choices of k lose in it (:func:`metric_regrets`)."""
    lines = []
    for col, label in REGRET_METRICS.values():
        if col not in free.columns or free[col].isna().all():
            continue
        best = free.sort_values(col).iloc[0]
        all_part = (f"; keeping every feature loses {_fmt_regret(float(everything[col].iloc[0]), 'points')}"
                    if len(everything) and col in everything.columns else "")
        same = "the same rule" if best["rule"] == top else f"not {top}"
        lines.append(f"- Measured with the {label} at the same k* against its own best k: {top} loses "
                     f"{_fmt_regret(float(free.loc[free['rule'] == top, col].iloc[0]), 'points')}; the rule that "
                     f"loses least there is {best['rule']} ({_fmt_regret(best[col], 'points')}, {same}){all_part}.")
    return lines


def _significant(part: pd.DataFrame, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The comparisons OT wins and loses after Holm's correction, of those a test could decide at ``alpha``."""
    decided = (part["p_holm"] <= alpha) & (part["min_p_holm"] <= alpha)
    return part[decided & (part["difference"] > 0)], part[decided & (part["difference"] < 0)]


def _label_free_k(k: pd.DataFrame):
    """A family's regrets: the label-free rule that loses least (a row, or None), every label-free rule, and
    what keeping every feature loses (or None)."""
    free = k[k["rule"] != "all-features"]
    everything = k[k["rule"] == "all-features"]
    top = free.sort_values("regret").iloc[0] if len(free) else None
    return top, free, (float(everything["regret"].iloc[0]) if len(everything) else None)


def _holm_note(part: pd.DataFrame, alpha: float) -> str:
    """Why no test can succeed where the raw test could, but not after Holm's correction."""
    if part.empty or float(part["min_p"].min()) > alpha:
        return ""
    row = part.iloc[0]
    return (f" after Holm's correction over its {row['holm_m']} comparisons (the smallest attainable p, "
            f"{part['min_p'].min():.2g}, becomes {row['min_p_holm']:.2g})")


def _glance_cell(part: pd.DataFrame, alpha: float) -> str:
    """OT against one baseline over a family's adapters, in one table cell."""
    if part.empty:
        return "n/a"
    ahead = int((part["difference"] > 0).sum())
    head = f"{fmt_difference(part['difference'].mean())} (ahead under {ahead}/{len(part)}"
    if (part["min_p_holm"] > alpha).all():
        return head + "; too few tasks to test)"
    wins, losses = _significant(part, alpha)
    return head + f"; significant: {len(wins)} better, {len(losses)} worse)"


def _glance(rows: pd.DataFrame, k: pd.DataFrame, families: Sequence[str], mains: Mapping[str, str],
            alpha: float) -> list[str]:
    """The verdict in one table: a row per family (and the pool), its own metric, means over its adapters."""
    from collections import Counter

    out = ["## At a glance", "",
           "Per family, with the metric it is judged by; OT minus each baseline, averaged over the adapters "
           f"(how many it is ahead under, and Holm-corrected Wilcoxon tests at {alpha}); the label-free rule "
           "that loses least against the best k in hindsight, and what keeping every feature loses.", "",
           "| family | tasks | judged by | best ranker (adapters) | OT − best per-feature measure "
           "| OT − source relevance | best label-free k (regret) | all features (regret) |",
           "|---|---|---|---|---|---|---|---|"]
    for family in families:
        part = rows[(rows["family"] == family) & (rows["metric"] == mains.get(family, ""))]
        if part.empty:
            continue
        per_adapter = part.drop_duplicates("adapter")
        counts = Counter(b for best in per_adapter["best"] for b in best.split(" = "))
        best = ", ".join(f"{r} ({c}/{len(per_adapter)})" for r, c in counts.most_common(2))
        cells = [_glance_cell(part[part["comparison"] == kind], alpha)
                 for kind in ("best per-feature measure", "source relevance")]
        top, _, everything = _label_free_k(k[k["family"] == family])
        if top is None:
            k_cells = ["not run (needs class labels)", "n/a"]
        else:
            unit = top.get("unit", "points")
            k_cells = [f"{top['rule']} ({_fmt_regret(top['regret'], unit, short=True)})",
                       _fmt_regret(everything, unit, short=True) if everything is not None else "n/a"]
        out.append(f"| {family} | {int(part['tasks'].max())} | {METRICS[mains[family]]} | {best} | "
                   + " | ".join(cells + k_cells) + " |")
    return [*out, ""]


def _recommend_lines(tasks: pd.DataFrame, families: Sequence[str]) -> list[str]:
    """The label-free recommendation's row per family: its mean regret, family left out, beside the fixed
    policies' (``results/recommend/evaluation.md`` has the tests)."""
    from otfs.k_selection._policy_learning import BASELINES, BEST_FIXED, RECOMMENDATION

    cols = [RECOMMENDATION, *BASELINES, *([BEST_FIXED] if BEST_FIXED in tasks else [])]
    out = ["## Label-free recommendation", "",
           "Which ranker and k to take on an unlabelled target (`otfs.k_selection.LabelFreeFeatureSelector`): "
           "mean regret against the best (ranker, k) in hindsight, in points of 1-NN accuracy, each family "
           "scored by nested leave one family out (the way of choosing the policy is itself chosen on the other "
           "families); tests and every task: `results/recommend/evaluation.md`.",
           "", "| family | adapter | tasks | " + " | ".join(cols) + " |", "|---|---|---|" + "---|" * len(cols)]
    order = [*families, *sorted(set(tasks["family"]) - set(families))]  # the image feature sets after the families
    for adapter, part in tasks.groupby("adapter", sort=False):
        groups = [(f, part[part["family"] == f]) for f in order] + [("**all tasks**", part)]
        for name, g in groups:
            if g.empty:
                continue
            out.append(f"| {name} | {adapter} | {len(g)} | " + " | ".join(decimals(g[c].mean()) for c in cols) + " |")
    return [*out, ""]


def _main_metric(rows: pd.DataFrame, preferred: str | None = None) -> str:
    """The metric a family is judged by: ``preferred`` where it has it, else the first of :data:`METRICS` it
    has (the 1-NN's accuracy, or its RMSE)."""
    present = set(rows["metric"])
    if preferred is not None and preferred in present:
        return preferred
    return next(m for m in METRICS if m in present)


def _markdown(df: pd.DataFrame) -> str:
    head = "| " + " | ".join(df.columns) + " |"
    lines = [head, "|" + "---|" * len(df.columns)]
    for _, row in df.iterrows():
        cells = [f"{v:.3g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(leaderboards: Mapping[str, str | Sequence[str]], k_selection: Mapping[str, str],
        families: Mapping[str, Sequence[str]],
        n_features: Mapping[str, int], protocol: Mapping, reference: str, relevance: str | Sequence[str],
        per_feature: Sequence[str], alpha: float, provenance: Mapping, outputs: Mapping[str, str],
        adapters: Sequence[str] = (), primary_metrics: Mapping[str, str] | None = None,
        recommend: str | None = None) -> dict:
    """Write the verdict (module docstring). ``leaderboards``: family -> its Parquet path(s); ``k_selection``:
    family -> Parquet path (a regression family's come from its long rows); ``relevance``: the
    source-only relevance ranker, or candidates (the first present in a family is used); ``adapters``: their
    order in the tables and the figure (the configured one); ``primary_metrics``: family -> the metric it is
    judged by where not its 1-NN's accuracy (e.g. the balanced accuracy of an imbalanced family); ``recommend``:
    the label-free recommendation's per-task regrets (``results/recommend/tasks.csv``,
    :func:`otfs_workflow.stages.recommend.evaluate`), summarised in a table of their own."""
    primary_metrics = dict(primary_metrics or {})
    unknown = {f: m for f, m in primary_metrics.items() if m not in METRICS}
    if unknown:
        raise ValueError(f"primary_metrics: unknown metric(s) {unknown}; known: {list(METRICS)}")
    if not leaderboards:
        raise ValueError("no data family to judge: none has data for a configured pair")
    all_scores, all_rows, all_k, chosen_by_family = {}, [], [], {}
    for family in families:
        paths = leaderboards[family]
        long = pd.concat([pd.read_parquet(p) for p in ([paths] if isinstance(paths, str) else paths)],
                         ignore_index=True)
        for metric in METRICS:
            if metric not in long.columns or long[metric].isna().all():
                continue
            scores = task_scores(long, n_features, metric).assign(family=family)
            all_scores.setdefault(metric, []).append(scores)
            all_rows.append(comparisons(scores, family, reference, relevance, per_feature, metric))
        if family in k_selection:
            chosen_by_family[family] = metric_regrets(pd.read_parquet(k_selection[family]), long)
            all_k.append(k_regrets(chosen_by_family[family], family))
        elif "neg_rmse" in long.columns and any(c.endswith(":k") for c in long.columns):
            # a regression family: its data rules' k* are in its long rows (otfs_workflow.stages.regression)
            from otfs_workflow.stages.regression import choices

            all_k.append(k_regrets(choices(long), family, unit="RMSE"))
    # Pooled: a task is a (family's feature set, pair); the tasks of every family with the metric together,
    # for each metric that two families or more have.
    pooled_accuracy = None
    for metric, parts in all_scores.items():
        if len(parts) >= 2:
            pooled = pd.concat(parts, ignore_index=True)
            all_rows.append(comparisons(pooled, POOLED, reference, relevance, per_feature, metric))
            if metric == "accuracy":
                pooled_accuracy = pooled
    if k_selection:
        chosen = pd.concat([chosen_by_family[f] for f in families if f in chosen_by_family], ignore_index=True)
        all_k.append(k_regrets(chosen, POOLED))
    rows = pd.concat(all_rows, ignore_index=True)
    order = {a: i for i, a in enumerate(adapters)}
    rows = rows.sort_values(["family", "metric", "adapter"], key=lambda col: (
        col.map({f: i for i, f in enumerate([*families, POOLED])}) if col.name == "family"
        else col.map({m: i for i, m in enumerate(METRICS)}) if col.name == "metric"
        else col.map(lambda a: order.get(a, len(order)))), kind="stable").reset_index(drop=True)
    k = pd.concat(all_k, ignore_index=True) if all_k else pd.DataFrame(
        columns=["family", "rule", "runs", "regret", "regret_sd", "fraction", "gain", "unit"])
    write_csv(rows, outputs["csv"], float_format="%.4g")
    write_csv(k, outputs["k_csv"], float_format="%.4g")
    relevance_names = [relevance] if isinstance(relevance, str) else list(relevance)
    versus = (every_ranker_versus(pooled_accuracy, [reference, *relevance_names], adapters)
              if pooled_accuracy is not None else pd.DataFrame(columns=VERSUS_COLUMNS))
    if "versus_csv" in outputs:
        write_csv(versus, outputs["versus_csv"], float_format="%.4g")

    lines = ["# Verdict: which feature ranker to trust, per data family", "",
             "Generated by `snakemake shift` from `results/shift/<family>/` (the per-family leaderboards and "
             "label-free choices of k); each family's protocol is in `docs/data-families.md`. A score is the nAUC "
             "of the paper's 1-NN: the mean target accuracy (%) over the grid's fractions of the features, "
             "iterations averaged. Differences are OT minus the other ranker, in the metric's units "
             "(percentage points; for corn, the response's units of RMSE); tests are Wilcoxon's "
             f"signed-rank over the tasks (pairs), Holm-corrected within each family, at {alpha}. The best "
             "per-feature measure is chosen in hindsight per family and adapter, which favours it. Figures: "
             "`verdict.png` (OT against both baselines, per family and adapter) and `verdict_cd.png` (the "
             "rankers' average ranks over every family's tasks, Friedman and Nemenyi).", ""]
    mains = {f: _main_metric(rows[rows["family"] == f], primary_metrics.get(f)) for f in dict.fromkeys(rows["family"])}
    lines += _glance(rows, k, [*families, POOLED], mains, alpha)
    if recommend is not None:
        lines += _recommend_lines(pd.read_csv(recommend, keep_default_na=False, na_values=[""]), families)
    for family in [*families, POOLED]:
        part = rows[rows["family"] == family]
        if part.empty:
            continue
        sets = ", ".join(families.get(family, [])) or "the tasks of every family with the metric, together"
        n = int(part["tasks"].max())
        lines += [f"## {family} ({n} task{'s' if n != 1 else ''}; {sets})", ""]
        main = _main_metric(part, primary_metrics.get(family))
        lines += _family_summary(part, k[k["family"] == family], alpha, main)
        lines += [""]
    lines += _versus_lines(versus, alpha)
    lines += ["## Every comparison of each family's metric", "",
              "One sentence per family, adapter and comparison (the other metrics: the table below and verdict.csv):",
              ""]
    lines += [f"- {r['family']}: {_sentence(r, alpha)}." for _, r in rows.iterrows() if r["metric"] == mains[r["family"]]]
    lines += ["", "## The numbers", "", _markdown(rows[["family", "metric", "adapter", "tasks", "best",
                                                        "reference_rank",
                                                        "friedman_p", "versus", "reference_nauc", "versus_nauc",
                                                        "difference", "wins", "ties", "losses", "p", "p_holm"]]),
              "", "Label-free choice of k: mean regret per rule against the best k in hindsight (accuracy "
              "points below it; for a regression family, RMSE above it: `unit`). The same choices judged in "
              "other metrics, each against its own best k in hindsight: `balanced_regret`, the 1-NN's balanced "
              "accuracy; `second_regret`, the logistic regression's accuracy (for corn, the ridge regression's "
              "RMSE).", "",
              _markdown(k), ""]
    write_text(outputs["md"], "\n".join(lines))
    if "glance" in outputs:
        from otfs_workflow.report_landing import glance

        write_text(outputs["glance"], glance("Which ranker to trust, per family", "\n".join(
            _glance(rows, k, [*families, POOLED], mains, alpha)[1:]), outputs["md"]))
    _figure(rows, outputs, primary_metrics)
    if "cd_png" in outputs:
        _pooled_cd(pooled_accuracy, adapters, alpha, outputs)
    write_json(outputs["provenance"], {**dict(provenance), "protocol": dict(protocol)})
    return {"rows": rows, "k": k, "versus": versus}


def _pooled_cd(scores: pd.DataFrame | None, adapters: Sequence[str], alpha: float, outputs) -> None:
    """Critical-difference diagrams of the rankers over every classification family's tasks (1-NN nAUC), one
    per adapter, with the rankers every task has (Friedman's test and Nemenyi's post-hoc, scikit-posthocs)."""
    import scikit_posthocs as sp

    from otfs_workflow.plotting import plt, save_outputs
    from otfs_workflow.stages.leaderboard import rank_tests

    panels = []
    if scores is not None:
        for adapter in [a for a in adapters if a in set(scores["adapter"])] or sorted(set(scores["adapter"])):
            wide = scores[scores["adapter"] == adapter].pivot_table(index=["family", "dataset", "pair"],
                                                                  columns="ranker", values="nauc")
            wide = wide.dropna(axis=0)
            if len(wide) >= 2 and wide.shape[1] >= 3:
                panels.append((adapter, rank_tests(wide)))
    fig, axes = plt.subplots(max(1, len(panels)), 1, figsize=(8, 1.6 * max(1, len(panels)) + 0.4), squeeze=False)
    if not panels:
        axes[0, 0].axis("off")
        axes[0, 0].text(0.5, 0.5, "no pooled rank test: fewer than 2 tasks or 3 rankers", ha="center", va="center")
    for ax, (adapter, res) in zip(axes[:, 0], panels, strict=False):
        sp.critical_difference_diagram(res["average_ranks"], res["nemenyi"], ax=ax, alpha=alpha)
        ax.set_title(f"{adapter}: average rank by 1-NN nAUC over {res['tasks']} tasks of every family "
                     f"(Friedman p = {res['friedman_p']:.2g}; bars join rankers not different at {alpha})", fontsize=8)
    fig.tight_layout()
    save_outputs(fig, {"pdf": outputs["cd_pdf"], "png": outputs["cd_png"]},
                 "Critical-difference diagrams over every data family")


def _figure(rows: pd.DataFrame, outputs, primary_metrics: Mapping[str, str]) -> None:
    """OT minus each comparison's ranker (mean nAUC points of each family's metric), families x adapters; *
    where Holm p <= 0.05."""
    from otfs_workflow.plotting import plt, save_outputs

    mains = {f: _main_metric(rows[rows["family"] == f], primary_metrics.get(f)) for f in dict.fromkeys(rows["family"])}
    rows = rows[[m == mains[f] for f, m in zip(rows["family"], rows["metric"], strict=True)]]
    kinds = list(dict.fromkeys(rows["comparison"]))
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.2 * len(kinds), 0.45 * rows["family"].nunique() + 1.6),
                             squeeze=False)
    lim = max(1.0, float(np.nanmax(np.abs(rows["difference"])))) if len(rows) else 1.0
    for ax, kind in zip(axes[0], kinds, strict=True):
        part = rows[rows["comparison"] == kind]
        m = part.pivot_table(index="family", columns="adapter", values="difference", sort=False)
        sig = part.pivot_table(index="family", columns="adapter", values="p_holm", sort=False)
        im = ax.imshow(m.to_numpy(), cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
        ax.set_xticks(range(m.shape[1]), m.columns, fontsize=7)
        ax.set_yticks(range(m.shape[0]), m.index, fontsize=7)
        for (i, j), v in np.ndenumerate(m.to_numpy()):
            if np.isfinite(v):
                star = "*" if sig.to_numpy()[i, j] <= 0.05 else ""
                dark = abs(v) > 0.6 * lim  # white on the saturated ends of the colour map
                ax.text(j, i, f"{v:+.1f}{star}", ha="center", va="center", fontsize=6,
                        color="white" if dark else "black")
        ax.set_title(f"OT minus the {kind}", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle("nAUC of each family's 1-NN metric (points; corn: RMSE units, negated); * Holm p <= 0.05",
                 fontsize=8)
    fig.tight_layout()
    save_outputs(fig, {"pdf": outputs["pdf"], "png": outputs["png"]}, "Verdict: OT against the baselines per family")
