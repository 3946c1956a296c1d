"""Stage ``recommend``: which ranker and how many features on a user's unlabelled target, and what that costs.

Two parts (:mod:`otfs.k_selection._label_free` holds the selector and its policies):

- :func:`run_pair`, one job per (feature set, pair) of ``recommend.feature_sets``: the library's
  :class:`~otfs.k_selection.LabelFreeFeatureSelector` on the pair's first iteration (its source subset and the
  whole target, as the benchmark's protocol draws them), written as ``recommendation.{json,md}`` with a
  figure of every candidate's scores against k;
- :func:`evaluate`, one job: the **meta-evaluation** on every task of the benchmark. It reads the rows the
  choice of k already computed (``results/runs/<fs>/model_selection/<ranker>/<grid>/<pair>.tsv``: per adapter,
  iteration and k, the 1-NN target accuracy and every label-free rule's score), and reruns nothing.

The meta-evaluation. A *task* is a (feature set, pair) under one adapter; a *run* one of its iterations.
Each run's candidates are the (ranker, k) of the seven rankers the selector takes by default and the grid's
numbers of features. A policy (:func:`otfs.k_selection._label_free.choose_candidate`) picks one candidate per run; its
accuracy on a task is the mean over the runs of the chosen candidate's 1-NN target accuracy, and its
**regret** the best (ranker, k) in hindsight (the largest mean accuracy over the runs) minus that, in points.

The menu of policies the recommendation is learned from: each scorer's best candidate, the rank average of
the scorers, each of them among the two fixed policies' rankers alone (OT and source ANOVA, the benchmark's
winners on images and on text and tables), every (ranker, label-free k rule) held fixed, all features, and the
*gates*: one policy where
the share of features the BH shift test finds unshifted is below a threshold, another above it. Learning
is the menu's policy of the least mean regret over the training tasks (a gate only where it beats the best
single policy by more than ``gate_margin`` points). **Leave one family out:** every family (each image
feature set counts as one) is scored by the policy learned on the other families alone. The fixed policies a
user could follow instead are scored the same way, their free choices learned on the other families too:
OT at its label-free k (the k rule of the least regret), source ANOVA at its label-free k, the ranker of the
best mean accuracy over the grid (the verdict's best on average) at its label-free k, and every feature.

Statistics per family and pooled over every task: the recommendation's regret against each fixed policy's,
mean difference, wins, ties and losses over the tasks, Wilcoxon's signed-rank p-value (two-sided) and Holm's
correction over the four comparisons of the family (or of the pool).

Outputs: ``evaluation.csv`` (the comparisons), ``tasks.csv`` (each task's regret under every policy),
``evaluation.md``, a figure, ``policy.json`` (the policy learned on every family: the file the library
ships) and the provenance.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.io import read_tsv, write_csv, write_json, write_text

__all__ = ["BASELINES", "POOLED", "Runs", "compare", "describe_policy", "evaluate", "learn", "menu", "run_pair"]

POOLED = "all tasks"
#: The fixed policies the recommendation is compared with, in the tables' order.
BASELINES = ("always OT", "always source-ANOVA", "best-on-average ranker", "all features")
RECOMMENDATION = "recommendation"
THRESHOLDS = tuple(np.round(np.arange(0.05, 1.0, 0.05), 2))


def menu(rankers: Sequence[str], scorers: Sequence[str], data_rules: Sequence[str],
         pair: Sequence[str] = ()) -> dict[str, dict]:
    """The single policies the recommendation is learned among, by name (``scorer:IW``, ``fixed:ot/IW``, ...);
    ``pair``: two rankers (the fixed policies' two) a scorer or the rank average also chooses between alone."""
    out = {f"scorer:{r}": {"kind": "scorer", "rule": r} for r in scorers}
    out["rank-average"] = {"kind": "rank-average", "rules": list(scorers)}
    if len(pair) == 2 and all(r in rankers for r in pair):
        within = "+".join(pair)
        out.update({f"scorer:{r} within {within}": {"kind": "scorer", "rule": r, "rankers": list(pair)}
                    for r in scorers})
        out[f"rank-average within {within}"] = {"kind": "rank-average", "rules": list(scorers), "rankers": list(pair)}
    for ranker in rankers:
        for rule in [*scorers, *data_rules]:
            out[f"fixed:{ranker}/{rule}"] = {"kind": "fixed", "ranker": ranker, "k_rule": rule}
    out["all-features"] = {"kind": "all-features"}
    return out


class Runs:
    """Every run's candidates read from the choice of k's per-pair tables, and each menu policy's accuracy.

    Attributes
    ----------
    runs : DataFrame
        One row per run: ``family``, ``feature_set``, ``pair``, ``adapter``, ``iteration``, ``task`` (an id),
        ``unshifted_fraction``, ``oracle`` (the task's best mean accuracy in hindsight).
    accuracy : ndarray of shape (runs, policies)
        Each menu policy's chosen accuracy on each run.
    names : list of str
        The menu's policies, the columns of ``accuracy``.
    tasks : DataFrame
        One row per task: ``task``, ``family``, ``feature_set``, ``pair``, ``adapter``, ``oracle``, ``runs``.
    """

    def __init__(self, long: pd.DataFrame, families: Mapping[str, str], rankers: Sequence[str],
                 scorers: Sequence[str], data_rules: Sequence[str], pair: Sequence[str] = ()):
        from otfs.k_selection import choose_candidate

        long = long[long["ranker"].isin(rankers)]
        if long.empty:
            raise ValueError(f"no rows of the candidate rankers {list(rankers)} in the per-pair tables")
        unknown = sorted(set(long["feature_set"]) - set(families))
        if unknown:
            raise ValueError(f"feature sets {unknown} belong to no family of recommend.families")
        self.policies = menu(rankers, scorers, data_rules, pair)
        self.names = list(self.policies)
        order = {r: i for i, r in enumerate(rankers)}
        runs, acc = [], []
        task_keys = ["feature_set", "pair", "adapter"]
        oracle = (long.groupby([*task_keys, "ranker", "n_features"])["accuracy"].mean()
                  .groupby(level=task_keys).max())
        for key, group in long.groupby([*task_keys, "iteration"], sort=True):
            fs, pair, adapter, it = key
            present = sorted(set(group["ranker"]), key=order.get)
            if present != list(rankers):
                raise ValueError(f"{fs}/{pair}, adapter {adapter}, iteration {it}: rows of the rankers {present}, "
                                 f"the candidates are {list(rankers)}")
            table = group.assign(_o=group["ranker"].map(order)).sort_values(["_o", "n_features"])
            table = table.rename(columns={"n_features": "k"}).reset_index(drop=True)
            d = int(table["d"].iloc[0])
            measures = {"unshifted_fraction": float(table["shift-test:unshifted"].iloc[0]) / d}
            accuracy = table["accuracy"].to_numpy(dtype=float)
            acc.append([accuracy[choose_candidate(table, p, measures)] for p in self.policies.values()])
            runs.append({"family": families[fs], "feature_set": fs, "pair": pair, "adapter": adapter,
                         "iteration": int(it), "unshifted_fraction": measures["unshifted_fraction"],
                         "oracle": float(oracle.loc[(fs, pair, adapter)])})
        self.runs = pd.DataFrame(runs)
        self.runs["task"] = self.runs.groupby(["feature_set", "pair", "adapter"], sort=False).ngroup()
        self.accuracy = np.asarray(acc, dtype=float)
        self.tasks = (self.runs.groupby("task", sort=True)
                      .agg(family=("family", "first"), feature_set=("feature_set", "first"), pair=("pair", "first"),
                           adapter=("adapter", "first"), oracle=("oracle", "first"), runs=("iteration", "size"))
                      .reset_index())
        # each run weighs 1 / its task's runs: a task's regret is the mean over its runs
        self.task_weight = 1.0 / self.runs["task"].map(self.tasks.set_index("task")["runs"]).to_numpy()
        # each family weighs the same: a run weighs 1 / (its task's runs x its family's tasks)
        tasks_per_family = self.tasks.groupby("family")["task"].size()
        self.family_weight = self.task_weight / self.runs["family"].map(tasks_per_family).to_numpy()

    def regret(self, accuracy: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Per-run regret (oracle minus the accuracy) of per-run accuracies (one column or several) of the runs
        ``rows`` (a mask; all runs by default)."""
        oracle = self.runs["oracle"].to_numpy()
        oracle = oracle if rows is None else oracle[rows]
        return oracle[:, None] - accuracy if accuracy.ndim == 2 else oracle - accuracy

    def task_means(self, per_run: np.ndarray) -> np.ndarray:
        """Per-task means (tasks in :attr:`tasks`' order) of a per-run vector."""
        return pd.Series(per_run).groupby(self.runs["task"].to_numpy()).mean().to_numpy()

    def column(self, name: str) -> np.ndarray:
        return self.accuracy[:, self.names.index(name)]


def _weights(runs: Runs, weighting: str) -> np.ndarray:
    if weighting not in ("task", "family"):
        raise ValueError(f"weighting: 'task' or 'family', got {weighting!r}")
    return runs.task_weight if weighting == "task" else runs.family_weight


def _mean_regret(runs: Runs, rows: np.ndarray, cols: np.ndarray | None = None, weighting: str = "task") -> np.ndarray:
    """The mean over the tasks of ``rows`` (a run mask) of each menu policy's regret (or the columns ``cols``),
    each task weighing the same (``weighting="task"``) or each family (``"family"``)."""
    acc = runs.accuracy[rows] if cols is None else runs.accuracy[rows][:, cols]
    w = _weights(runs, weighting)[rows]
    return (runs.regret(acc, rows) * w[:, None]).sum(axis=0) / w.sum()


def learn(runs: Runs, rows: np.ndarray, gate_margin: float | None, weighting: str = "family") -> dict:
    """The menu's policy (or gate) of the least mean regret over the runs ``rows``: ``{"name", "policy",
    "train_regret"}``. Ties go to the earlier policy of the menu and the lower threshold. A gate is learned
    only where it gains more than ``gate_margin`` points over the best single policy (None: never). ``weighting``:
    each training family weighs the same (the default: the policy is to serve a family it has not seen), or
    each task."""
    regret = _mean_regret(runs, rows, weighting=weighting)
    best = int(np.argmin(regret))
    out = {"name": runs.names[best], "policy": runs.policies[runs.names[best]], "train_regret": float(regret[best])}
    m = runs.runs["unshifted_fraction"].to_numpy()
    w = _weights(runs, weighting)
    gate = None
    for t in THRESHOLDS:
        below, above = rows & (m < t), rows & (m >= t)
        if not below.any() or not above.any():
            continue
        rb = (runs.regret(runs.accuracy[below], below) * w[below][:, None]).sum(axis=0)
        ra = (runs.regret(runs.accuracy[above], above) * w[above][:, None]).sum(axis=0)
        i, j = int(np.argmin(rb)), int(np.argmin(ra))
        total = float((rb[i] + ra[j]) / w[rows].sum())
        if gate is None or total < gate[0] - 1e-12:
            gate = (total, float(t), i, j)
    if (gate_margin is not None and gate is not None and gate[0] < out["train_regret"] - gate_margin
            and gate[2] != gate[3]):
        total, t, i, j = gate
        out = {"name": f"gate(unshifted<{t:g}: {runs.names[i]}; else {runs.names[j]})",
               "policy": {"kind": "gate", "feature": "unshifted_fraction", "threshold": t,
                          "below": runs.policies[runs.names[i]], "above": runs.policies[runs.names[j]]},
               "train_regret": total}
    return out


def _apply(runs: Runs, policy: Mapping, rows: np.ndarray) -> np.ndarray:
    """The per-run accuracies of a menu policy or gate on the runs ``rows`` (NaN elsewhere)."""
    out = np.full(len(runs.runs), np.nan)
    if policy["kind"] == "gate":
        m = runs.runs["unshifted_fraction"].to_numpy()
        below = m < policy["threshold"]
        a, b = _apply(runs, policy["below"], rows), _apply(runs, policy["above"], rows)
        out[rows] = np.where(below, a, b)[rows]
        return out
    name = next(n for n, p in runs.policies.items() if p == dict(policy))
    out[rows] = runs.column(name)[rows]
    return out


def _fixed_choice(runs: Runs, rows: np.ndarray, ranker: str, weighting: str = "family") -> str:
    """The fixed-ranker policy of ``ranker`` whose k rule has the least mean regret on ``rows``."""
    names = [n for n in runs.names if n.startswith(f"fixed:{ranker}/")]
    regret = _mean_regret(runs, rows, np.array([runs.names.index(n) for n in names]), weighting)
    return names[int(np.argmin(regret))]


def _best_ranker(long_means: pd.DataFrame, tasks: set) -> str:
    """The ranker of the best mean accuracy over the grid (iterations and k averaged) on the tasks ``tasks``."""
    part = long_means[long_means.index.droplevel("ranker").isin(tasks)]
    return str(part.groupby(level="ranker").mean().idxmax())


def leave_one_family_out(runs: Runs, long: pd.DataFrame, rankers: Sequence[str], gate_margin: float,
                         reference: str = "ot", relevance: str = "source-anova",
                         weighting: str = "family") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each family's runs scored by policies learned on the other families: per-run accuracies of the
    recommendation and the fixed policies, and the choices made per fold."""
    fam = runs.runs["family"].to_numpy()
    task_key = list(zip(runs.runs["feature_set"], runs.runs["pair"], runs.runs["adapter"]))
    long = long[long["ranker"].isin(rankers)]
    means = long.groupby(["feature_set", "pair", "adapter", "ranker"])["accuracy"].mean()
    per_run = {name: np.full(len(runs.runs), np.nan) for name in (RECOMMENDATION, *BASELINES)}
    folds = []
    for family in sorted(set(fam)):
        test, train = fam == family, fam != family
        if not train.any():
            raise ValueError(f"leave one family out needs two families or more; only {family!r} has rows")
        learned = learn(runs, train, gate_margin, weighting)
        per_run[RECOMMENDATION][test] = _apply(runs, learned["policy"], test)[test]
        train_tasks = {k for k, t in zip(task_key, train) if t}
        best = _best_ranker(means, train_tasks)
        choice = {"always OT": _fixed_choice(runs, train, reference, weighting),
                  "always source-ANOVA": _fixed_choice(runs, train, relevance, weighting),
                  "best-on-average ranker": _fixed_choice(runs, train, best, weighting),
                  "all features": "all-features"}
        for name, policy in choice.items():
            per_run[name][test] = runs.column(policy)[test]
        folds.append({"family": family, "recommendation": learned["name"],
                      "train_regret": learned["train_regret"], **{f"{k} (policy)": v for k, v in choice.items()}})
    return pd.DataFrame(per_run), pd.DataFrame(folds)


def compare(task_regret: pd.DataFrame, scope: str) -> pd.DataFrame:
    """The recommendation's per-task regret against each fixed policy's on the tasks of ``task_regret``
    (columns: the policies): one row per comparison, Holm-corrected over them."""
    from statsmodels.stats.multitest import multipletests

    from otfs_workflow.stages.verdict import _wilcoxon, min_wilcoxon_p

    rec = task_regret[RECOMMENDATION].to_numpy()
    rows = []
    for name in BASELINES:
        other = task_regret[name].to_numpy()
        diff = rec - other  # negative: the recommendation loses less
        rows.append({"scope": scope, "tasks": len(diff), "versus": name,
                     "recommendation_regret": float(rec.mean()), "versus_regret": float(other.mean()),
                     "difference": float(diff.mean()), "wins": int((diff < 0).sum()), "ties": int((diff == 0).sum()),
                     "losses": int((diff > 0).sum()), "p": _wilcoxon(diff), "min_p": min_wilcoxon_p(int((diff != 0).sum()))})
    out = pd.DataFrame(rows)
    out["p_holm"] = multipletests(out["p"].to_numpy(), method="holm")[1]
    return out


def _fmt(v: float, digits: int = 2) -> str:
    """``v`` to ``digits`` decimals, a negative zero as zero."""
    return "–" if v is None or not np.isfinite(v) else f"{round(float(v), digits) + 0.0:.{digits}f}"


def _fmt_p(p: float) -> str:
    return "–" if not np.isfinite(p) else (f"{p:.1e}" if p < 1e-3 else f"{p:.3f}")


def _goals(table: pd.DataFrame, tasks: pd.DataFrame, adapter: str, alpha: float) -> list[str]:
    """The issue's goals, each checked on the numbers and said as met or not."""
    pooled = table[(table["scope"] == POOLED) & (table["adapter"] == adapter)].set_index("versus")
    lines = []
    if pooled.empty:
        return lines
    lower = all(pooled.loc[b, "difference"] < 0 for b in BASELINES)
    lines.append(f"- Mean regret below every fixed policy's, pooled: **{'met' if lower else 'not met'}** "
                 f"(recommendation {_fmt(pooled['recommendation_regret'].iloc[0])} points; "
                 + ", ".join(f"{b} {_fmt(pooled.loc[b, 'versus_regret'])}" for b in BASELINES) + ").")
    for b in ("always OT", "always source-ANOVA"):
        sig = pooled.loc[b, "difference"] < 0 and pooled.loc[b, "p_holm"] < alpha
        lines.append(f"- Significantly lower than {b} (Holm p < {alpha:g}): **{'met' if sig else 'not met'}** "
                     f"(difference {_fmt(pooled.loc[b, 'difference'])} points, Holm p {_fmt_p(pooled.loc[b, 'p_holm'])}).")
    part = tasks[tasks["adapter"] == adapter]
    per_family = part.groupby("family")[[RECOMMENDATION, "all features"]].mean()
    worst = (per_family[RECOMMENDATION] - per_family["all features"])
    ok = bool((worst <= 1.0).all())
    lines.append(f"- On no family more than 1 point worse than all features: **{'met' if ok else 'not met'}** "
                 f"(worst: {worst.idxmax()}, {_fmt(worst.max())} points of regret above all features').")
    return lines


def evaluate(pair_tables: Sequence[str], families: Mapping[str, str], rankers: Sequence[str],
             scorers: Sequence[str], data_rules: Sequence[str], gate_margin: float, alpha: float,
             provenance: Mapping, outputs: Mapping[str, str], reference: str = "ot",
             relevance: str = "source-anova", weighting: str = "family") -> dict:
    """The meta-evaluation (module docstring); writes ``outputs``: ``csv``, ``tasks``, ``md``, ``pdf``,
    ``png``, ``policy``, ``provenance``."""
    if not pair_tables:
        raise ValueError("recommend evaluation: no per-pair tables of the choice of k to read")
    long = pd.concat([read_tsv(p) for p in pair_tables], ignore_index=True)
    tables, task_rows, fold_rows, policies, variant_rows = [], [], [], {}, []
    for adapter, part in long.groupby("adapter", sort=True):
        runs = Runs(part, families, rankers, scorers, data_rules, (reference, relevance))
        if runs.runs["family"].nunique() < 2:
            continue
        per_run, folds = leave_one_family_out(runs, part, rankers, gate_margin, reference, relevance, weighting)
        regret = pd.DataFrame({c: runs.task_means(runs.regret(per_run[c].to_numpy())) for c in per_run.columns})
        tasks = pd.concat([runs.tasks.reset_index(drop=True), regret], axis=1)
        task_rows.append(tasks)
        fold_rows.append(folds.assign(adapter=adapter))
        for family, group in tasks.groupby("family", sort=True):
            tables.append(compare(group, family).assign(adapter=adapter))
        tables.append(compare(tasks, POOLED).assign(adapter=adapter))
        final = learn(runs, np.ones(len(runs.runs), dtype=bool), gate_margin, weighting)
        for w_name in ("task", "family"):
            for margin in (None, 1.0 if gate_margin is None else gate_margin):
                used = (w_name, margin) == (weighting, gate_margin)
                if used:  # the configured way: the folds above
                    alt_regret = regret[RECOMMENDATION].to_numpy()
                else:
                    alt, _ = leave_one_family_out(runs, part, rankers, margin, reference, relevance, w_name)
                    alt_regret = runs.task_means(runs.regret(alt[RECOMMENDATION].to_numpy()))
                variant_rows.append({"adapter": adapter, "weighting": w_name, "gate_margin": margin, "used": used,
                                     "regret": float(alt_regret.mean()),
                                     **{f: float(alt_regret[runs.tasks["family"].to_numpy() == f].mean())
                                        for f in sorted(set(runs.tasks["family"]))}})
        policies[adapter] = {**final["policy"], "name": final["name"], "train_regret": final["train_regret"],
                             "tasks": int(len(runs.tasks)), "families": sorted(set(runs.runs["family"]))}
    if not tables:
        raise ValueError("recommend evaluation: fewer than two families with rows under any adapter")
    table = pd.concat(tables, ignore_index=True)
    table = table[["adapter", *[c for c in table.columns if c != "adapter"]]]
    tasks = pd.concat(task_rows, ignore_index=True)
    folds = pd.concat(fold_rows, ignore_index=True)
    write_csv(table, outputs["csv"], float_format="%.6g")
    write_csv(tasks, outputs["tasks"], float_format="%.6g")
    default = "NA" if "NA" in policies else sorted(policies)[0]
    shipped = {"default_adapter": default,
               "policies": {a: {k: v for k, v in p.items() if k in ("kind", "rule", "rules", "rankers", "ranker", "k_rule",
                                                                    "feature", "threshold", "below", "above")}
                            for a, p in policies.items()},
               "learned": policies, "provenance": _compact_provenance(provenance)}
    write_json(outputs["policy"], shipped, sealed=False)
    variants = pd.DataFrame(variant_rows)
    write_text(outputs["md"], _markdown(table, tasks, folds, policies, alpha, variants))
    _figure(tasks, outputs)
    write_json(outputs["provenance"], dict(provenance))
    return {"table": table, "tasks": tasks, "folds": folds, "policies": policies, "variants": variants}


def _compact_provenance(provenance: Mapping) -> dict:
    """The shipped policy's provenance, small: the versions, the commit, the parameters, the date, and one
    SHA-256 over the input files' (``provenance.json`` beside it lists each)."""
    import datetime
    import hashlib

    inputs = dict(provenance.get("inputs", {}))
    digest = hashlib.sha256("".join(f"{p}\t{h}\n" for p, h in sorted(inputs.items())).encode()).hexdigest()
    return {**{k: provenance[k] for k in ("versions", "git_commit", "params") if k in provenance},
            "learned_on": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "input_files": len(inputs), "inputs_sha256": digest}


def _markdown(table: pd.DataFrame, tasks: pd.DataFrame, folds: pd.DataFrame, policies: Mapping, alpha: float,
              variants: pd.DataFrame) -> str:
    lines = ["# The label-free recommendation, measured on every task", "",
             "Which ranker and how many features a user without target labels should take "
             "(`otfs.k_selection.LabelFreeFeatureSelector`), scored on each task of the benchmark by the policy "
             "learned on the other families (leave one family out). Regret: the best (ranker, k) in hindsight "
             "minus the choice, in points of 1-NN target accuracy, mean over the tasks. A negative difference: "
             "the recommendation loses less than the fixed policy. Wins, ties, losses: tasks where it loses less, "
             "as much, more. p: Wilcoxon's signed-rank test over the tasks, two-sided; Holm over the four "
             "comparisons of each row group.", ""]
    for adapter in sorted(set(table["adapter"]), key=lambda a: (a != "NA", a)):
        lines += [f"## Adapter {adapter}", "", "Goals:", ""]
        lines += _goals(table, tasks, adapter, alpha)
        lines += ["", f"Learned on every family (the policy the library ships for {adapter}): "
                  f"`{policies[adapter]['name']}`, mean regret {_fmt(policies[adapter]['train_regret'])} points "
                  f"on its {policies[adapter]['tasks']} tasks (in sample).", "",
                  "| family | tasks | recommendation | always OT | always source-ANOVA | best-on-average ranker | "
                  "all features | vs OT (Holm p) | vs source-ANOVA (Holm p) | vs all features (Holm p) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        part = table[table["adapter"] == adapter]
        for scope, group in part.groupby("scope", sort=False):
            g = group.set_index("versus")
            cells = [f"**{scope}**" if scope == POOLED else scope, str(int(g["tasks"].iloc[0])),
                     _fmt(g["recommendation_regret"].iloc[0])]
            cells += [_fmt(g.loc[b, "versus_regret"]) for b in BASELINES]
            cells += [f"{_fmt(g.loc[b, 'difference'], 2)} ({_fmt_p(g.loc[b, 'p_holm'])})"
                      for b in ("always OT", "always source-ANOVA", "all features")]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", "Policies learned per fold (on the other families):", "",
                  "| left out | recommendation | training regret | always OT | always source-ANOVA | "
                  "best-on-average ranker |", "|---|---|---|---|---|---|"]
        for _, f in folds[folds["adapter"] == adapter].iterrows():
            lines.append(f"| {f['family']} | `{f['recommendation']}` | {_fmt(f['train_regret'])} | "
                         f"`{f['always OT (policy)']}` | `{f['always source-ANOVA (policy)']}` | "
                         f"`{f['best-on-average ranker (policy)']}` |")
        part = variants[variants["adapter"] == adapter]
        families = [c for c in part.columns if c not in ("adapter", "weighting", "gate_margin", "used", "regret")
                    and part[c].notna().any()]
        lines += ["", "What was tried: the recommendation's mean regret, family left out, under each way of learning "
                  "it (each training task or each training family weighing the same; gates on the share of "
                  "unshifted features allowed from a gain of so many points, or never). The row in bold is the "
                  "configured one (`recommend.evaluation`), above.", "",
                  "| weighting | gates | all tasks | " + " | ".join(families) + " |",
                  "|---|---|---|" + "---|" * len(families)]
        for _, v in part.iterrows():
            gates = "never" if v["gate_margin"] is None or not np.isfinite(v["gate_margin"]) else f"> {v['gate_margin']:g} points"
            cells = [v["weighting"], gates, _fmt(v["regret"]), *[_fmt(v[f]) for f in families]]
            row = "| " + " | ".join(cells) + " |"
            lines.append(row.replace("| ", "| **", 1).replace(" |", "** |", 1) if v["used"] else row)
        lines.append("")
    lines += ["Per-task regrets: `tasks.csv`; every comparison: `evaluation.csv`; the policies learned on every "
              "family, with their provenance: `policy.json`.", ""]
    return "\n".join(lines)


def _figure(tasks: pd.DataFrame, outputs: Mapping[str, str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from otfs_workflow.io import atomic_path

    adapters = sorted(set(tasks["adapter"]), key=lambda a: (a != "NA", a))
    policies = [RECOMMENDATION, *BASELINES]
    fig, axes = plt.subplots(len(adapters), 1, figsize=(10, 3.4 * len(adapters)), squeeze=False)
    for ax, adapter in zip(axes[:, 0], adapters):
        part = tasks[tasks["adapter"] == adapter]
        means = part.groupby("family")[policies].mean()
        means.loc[POOLED] = part[policies].mean()
        x = np.arange(len(means))
        width = 0.8 / len(policies)
        for i, p in enumerate(policies):
            ax.bar(x + (i - (len(policies) - 1) / 2) * width, means[p].to_numpy(), width, label=p)
        ax.set_xticks(x, means.index, rotation=20, ha="right")
        ax.set_ylabel("mean regret (points)")
        ax.set_title(f"adapter {adapter}: regret against the best (ranker, k) in hindsight, family left out")
    axes[0, 0].legend(fontsize=8, ncol=3)
    fig.tight_layout()
    for key in ("pdf", "png"):
        with atomic_path(outputs[key]) as tmp:
            fig.savefig(tmp, format=key, dpi=120)
    plt.close(fig)


# -- one pair's recommendation --------------------------------------------------------------------------------
def run_pair(caches: Mapping[str, str], feature_set: str, pair: str, per_class, params: Mapping,
             outputs: Mapping[str, str]) -> dict:
    """The selector on one pair's first iteration (the protocol's source subset, the whole target); writes
    ``json``, ``md``, ``pdf``, ``png``.

    ``params``: the selector's parameters (``rankers``, ``adapter``, ``n_features_grid``, ``policy``,
    ``scorers``, ``classifier``, ``n_splits``, ``test_size``); its ``random_state`` is derived from
    (feature set, pair, 0, "recommend")."""
    from otfs.k_selection import LabelFreeFeatureSelector
    from otfs_workflow.data.cache import read_domains
    from otfs_workflow.protocol import derive_seed, iteration_source_subset, parse_pair
    from otfs_workflow.stages import source_classes

    source, target = parse_pair(pair)
    cache = read_domains({d: caches[d] for d in (source, target)})
    src, tgt = cache.domain(source), cache.domain(target)
    classes = source_classes(cache, pair, selection=False)
    subset, _ = iteration_source_subset(feature_set, pair, 0, src.y, per_class, classes=classes,
                                        class_names=cache.class_names)
    names = list(getattr(cache, "feature_names", None) or [f"f{i}" for i in range(cache.n_features)])
    Xs = pd.DataFrame(src.X[subset], columns=names)
    Xt = pd.DataFrame(tgt.X, columns=names)
    selector = LabelFreeFeatureSelector(**dict(params), random_state=derive_seed(feature_set, pair, 0, "recommend"))
    selector.fit(Xs, src.y[subset], X_target=Xt)
    rec = {"feature_set": feature_set, "pair": pair, "source_samples": int(len(subset)),
           "target_samples": int(tgt.X.shape[0]), **selector.recommendation()}
    write_json(outputs["json"], rec, sealed=False)
    write_text(outputs["md"], pair_markdown(rec))
    _pair_figure(selector.candidates_, rec, outputs)
    return rec


def describe_policy(policy: Mapping) -> str:
    """A policy in words."""
    kind = policy["kind"]
    among = f" among {' and '.join(policy['rankers'])}" if policy.get("rankers") else ""
    if kind == "scorer":
        return f"the candidate of the best {policy['rule']} score{among}"
    if kind == "rank-average":
        return f"the candidate of the best mean rank over {', '.join(policy['rules'])}{among}"
    if kind == "fixed":
        return f"always {policy['ranker']}, k by {policy['k_rule']}"
    if kind == "all-features":
        return "every feature"
    return (f"where under {policy['threshold']:g} of the features test unshifted, {describe_policy(policy['below'])}; "
            f"else {describe_policy(policy['above'])}")


def pair_markdown(rec: Mapping) -> str:
    """One pair's recommendation as a page a user reads."""
    policy = rec["policy"]
    lines = [f"# Recommendation for {rec['feature_set']}, {rec['pair']}", "",
             f"Keep **{rec['k']} of {rec['d']} features** ranked by **{rec['ranker']}** "
             f"(source: {rec['source_samples']} samples, target: {rec['target_samples']}, no target label read).",
             "", f"Policy: {describe_policy(policy)} (`{json.dumps(dict(policy), sort_keys=True)}`); the BH shift test "
             f"finds {rec['measures']['unshifted']} of {rec['d']} features unshifted "
             f"({100 * rec['measures']['unshifted_fraction']:.1f} %).", ""]
    ru = rec.get("runner_up") or {}
    if ru:
        margins = ", ".join(f"{r} {v:+.4g}" for r, v in ru["margin"].items())
        lines += [f"Runner-up: {ru['ranker']} at k = {ru['k']}; the choice's scores minus its: {margins}.", ""]
    lines += [f"Kept features ({len(rec['features'])}): " + ", ".join(str(f) for f in rec["features"][:50])
              + (" ..." if len(rec["features"]) > 50 else ""), "", "## Every candidate", ""]
    cands = pd.DataFrame(rec["candidates"])
    cols = ["ranker", "k", *[c for c in cands.columns if c.endswith(":score")], "chosen"]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for _, row in cands[cols].iterrows():
        lines.append("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |")
    lines.append("")
    return "\n".join(lines)


def _pair_figure(candidates: pd.DataFrame, rec: Mapping, outputs: Mapping[str, str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from otfs.k_selection._label_free import policy_rules
    from otfs_workflow.io import atomic_path

    rules = [c[:-6] for c in candidates.columns if c.endswith(":score")]
    used = policy_rules(rec["policy"])
    ncol = min(3, len(rules))
    nrow = int(np.ceil(len(rules) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.2 * nrow), squeeze=False)
    for ax, rule in zip(axes.ravel(), rules):
        for ranker, group in candidates.groupby("ranker", sort=False):
            ax.plot(group["k"], group[f"{rule}:score"], marker="o", ms=3, label=ranker)
        chosen = candidates[candidates["chosen"]].iloc[0]
        ax.plot([chosen["k"]], [chosen[f"{rule}:score"]], marker="*", ms=14, color="black", ls="none")
        ax.set_xscale("log")
        ax.set_title(f"{rule} (the policy's)" if rule in used else rule, fontsize=9,
                     fontweight="bold" if rule in used else "normal")
        ax.set_xlabel("k, features kept (log scale)")
        ax.set_ylabel("score (higher is better)", fontsize=8)
    for ax in axes.ravel()[len(rules):]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=6)
    fig.suptitle(f"{rec['feature_set']} {rec['pair']}: candidates' label-free scores; ★ the choice "
                 f"({rec['ranker']}, k = {rec['k']})", fontsize=10)
    fig.tight_layout()
    for key in ("pdf", "png"):
        with atomic_path(outputs[key]) as tmp:
            fig.savefig(tmp, format=key, dpi=110)
    plt.close(fig)

