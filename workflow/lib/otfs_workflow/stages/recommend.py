"""Stage ``recommend``: which ranker and how many features on a user's unlabelled target, and what that costs.

Two parts (:mod:`otfs.k_selection._label_free` holds the selector and its policies):

- :func:`run_pair`, one job per (feature set, pair) of ``recommend.feature_sets``: the library's
  :class:`~otfs.k_selection.LabelFreeFeatureSelector` on the pair's first iteration (its source subset and the
  whole target, as the benchmark's protocol draws them), written as ``recommendation.{json,md}`` with a
  figure of every candidate's scores against k;
- :func:`task_summary`, one job per task (rule ``recommend_task``): what every menu policy picks on each of the
  task's runs, from the rows the choice of k already computed
  (``results/runs/<fs>/model_selection/<ranker>/<grid>/<pair>.tsv``: per adapter, iteration and k, the 1-NN
  target accuracy and every label-free rule's score), with the pair's data profile and row-order check;
- :func:`evaluate`, one job: the **meta-evaluation** on every task of the benchmark, from the tasks' summaries.
  It reruns no classifier.

The meta-evaluation learns and scores the policy with the library's
:func:`otfs.k_selection.evaluate_policies` (:mod:`otfs.k_selection._policy_learning` explains the menu of
policies, the ways of choosing one and the nested leave one family out); here each task's runs are read from
the choice of k's rows, each family judged by its own metric, and the results tested and written. Each image
feature set counts as a family of its own.

Statistics per family and pooled over every task: the recommendation's regret against each baseline's, mean
difference, wins, ties and losses over the tasks, Wilcoxon's signed-rank p-value (two-sided) and Holm's
correction over the comparisons of the family (or of the pool); each scorer's signal quality
(:func:`signal_table`).

Outputs: ``evaluation.csv`` (the comparisons), ``tasks.csv`` (each task's regret under every policy),
``signals.csv``, ``evaluation.md``, figures, ``policy.json`` (the policy chosen on every family, with its
nested regret: the file the library ships) and the provenance.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs.k_selection import PolicyRuns, candidate_runs, data_profile, evaluate_policies
from otfs.k_selection._policy_learning import BASELINES, BEST_FIXED, RECOMMENDATION
from otfs_workflow.formatting import decimals, p_value
from otfs_workflow.io import write_csv, write_json, write_text
from otfs_workflow.stats import holm, min_wilcoxon_p, wilcoxon_p

__all__ = ["BASELINES", "POOLED", "compare", "evaluate", "run_pair", "task_summary"]

POOLED = "all tasks"
#: A task's own columns, the same on each of its runs: its metric, :func:`data_profile` and the row-order check.
TASK_COLUMNS = ("metric", "d", "n", "sparsity", "permutations", "same_answer", "permutation_share")


def compare(task_regret: pd.DataFrame, scope: str) -> pd.DataFrame:
    """The recommendation's per-task regret against each fixed policy's on the tasks of ``task_regret``
    (columns: the policies): one row per comparison, Holm-corrected over them."""
    rec = task_regret[RECOMMENDATION].to_numpy()
    rows = []
    for name in (*BASELINES, *([BEST_FIXED] if BEST_FIXED in task_regret else [])):
        other = task_regret[name].to_numpy()
        diff = rec - other  # negative: the recommendation loses less
        rows.append({"scope": scope, "tasks": len(diff), "versus": name,
                     "recommendation_regret": float(rec.mean()), "versus_regret": float(other.mean()),
                     "difference": float(diff.mean()), "wins": int((diff < 0).sum()), "ties": int((diff == 0).sum()),
                     "losses": int((diff > 0).sum()), "p": wilcoxon_p(diff), "min_p": min_wilcoxon_p(int((diff != 0).sum()))})
    out = pd.DataFrame(rows)
    out["p_holm"] = holm(out["p"].to_numpy())
    return out






def _goals(table: pd.DataFrame, tasks: pd.DataFrame, adapter: str, alpha: float, fixed: Sequence[str]) -> list[str]:
    """The goals, each checked on the numbers and said as met or not."""
    pooled = table[(table["scope"] == POOLED) & (table["adapter"] == adapter)].set_index("versus")
    lines = []
    if pooled.empty:
        return lines
    part = tasks[tasks["adapter"] == adapter]
    rec = float(part[RECOMMENDATION].mean())
    fixed_means = {n: float(part[n].mean()) for n in fixed}
    best = min(fixed_means, key=fixed_means.get)
    ok = rec <= fixed_means[best] + 1e-9
    lines.append(f"- Never worse than the simplest rule: nested regret at most the best fixed policy's, pooled: "
                 f"**{'met' if ok else 'not met'}** (recommendation {decimals(rec)} points; best fixed policy in "
                 f"hindsight `{best}` {decimals(fixed_means[best])}).")
    lower = all(pooled.loc[b, "difference"] < 0 for b in BASELINES)
    lines.append(f"- Mean regret below every learned baseline's, pooled: **{'met' if lower else 'not met'}** "
                 f"(" + ", ".join(f"{b} {decimals(pooled.loc[b, 'versus_regret'])}" for b in BASELINES) + ").")
    sig = pooled.loc[BEST_FIXED, "difference"] < 0 and pooled.loc[BEST_FIXED, "p_holm"] < alpha
    worst_rec = float(part[RECOMMENDATION].max())
    worst_fixed = {n: float(part[n].max()) for n in fixed}
    below = all(worst_rec < w for w in worst_fixed.values())
    lines.append(f"- Moonshot, significantly below the best fixed policy (Wilcoxon, Holm p < {alpha:g}): "
                 f"**{'met' if sig else 'not met'}** (difference {decimals(pooled.loc[BEST_FIXED, 'difference'])} "
                 f"points, Holm p {p_value(pooled.loc[BEST_FIXED, 'p_holm'], 'scientific')}); worst-case regret "
                 "below every fixed "
                 f"policy's: **{'met' if below else 'not met'}** (recommendation {decimals(worst_rec)}; least worst "
                 f"case of a fixed policy {decimals(min(worst_fixed.values()))}).")
    per_family = part.groupby("family")[[RECOMMENDATION, "all features"]].mean()
    worst = (per_family[RECOMMENDATION] - per_family["all features"])
    lines.append(f"- On no family more than 1 point worse than all features: **{'met' if (worst <= 1.0).all() else 'not met'}** "
                 f"(worst: {worst.idxmax()}, {decimals(worst.max())} points of regret above all features').")
    return lines


def signal_table(runs: PolicyRuns, adapter: str) -> pd.DataFrame:
    """Why each scorer works or not: per family and pooled, the mean over the tasks of the within-task Spearman
    correlation (over the candidates, mean over the runs) of its score with the target accuracy, the share of
    tasks where its best candidate is within 1 point of the best in hindsight (SKADA-Bench's measure), and its
    mean and worst-case regret."""
    sig = runs.signals.groupby(["feature_set", "pair", "adapter", "scorer"])["spearman"].mean().reset_index()
    family = dict(zip(runs.tasks["feature_set"], runs.tasks["family"]))
    sig["family"] = sig["feature_set"].map(family)
    rows = []
    for rule in runs.scorers:
        regret = runs.task_means(runs.regret(runs.column(f"scorer:{rule}")))
        fam = runs.tasks["family"].to_numpy()
        s = sig[sig["scorer"] == rule]
        for scope in [*sorted(set(fam)), POOLED]:
            mask = np.ones(len(fam), dtype=bool) if scope == POOLED else fam == scope
            rho = s["spearman"] if scope == POOLED else s.loc[s["family"] == scope, "spearman"]
            rows.append({"adapter": adapter, "scorer": rule, "scope": scope, "tasks": int(mask.sum()),
                         "spearman": float(rho.mean()) if rho.notna().any() else float("nan"),
                         "within_1_point": float(np.mean(regret[mask] <= 1.0)),
                         "mean_regret": float(regret[mask].mean()), "worst_regret": float(regret[mask].max())})
    return pd.DataFrame(rows)


#: The per-candidate metrics of the choice of k's rows a family may be judged by.
CANDIDATE_METRICS = ("accuracy", "balanced_accuracy")


def judged_by(long: pd.DataFrame, families: Mapping[str, str], metrics: Mapping[str, str]) -> pd.DataFrame:
    """The rows with each family's own metric in ``accuracy`` (``metrics``: family to a column of
    :data:`CANDIDATE_METRICS`; the 1-NN's accuracy elsewhere), and the metric named in ``metric``. A family
    judged by a metric its rows lack is an error naming both; a metric of no candidate's rows (a second
    classifier's) is left to the 1-NN's accuracy, said in ``metric``."""
    long = long.copy()
    family = long["feature_set"].map(families)
    long["metric"] = "accuracy"
    for fam, metric in metrics.items():
        rows = (family == fam).to_numpy()
        if not rows.any() or metric == "accuracy" or metric not in CANDIDATE_METRICS:
            continue
        if metric not in long.columns or long.loc[rows, metric].isna().any():
            raise ValueError(f"recommend evaluation: family {fam!r} is judged by {metric!r} "
                             f"(shift.primary_metrics), which its choice-of-k rows lack")
        long.loc[rows, "accuracy"] = long.loc[rows, metric].to_numpy(dtype=float)
        long.loc[rows, "metric"] = metric
    return long


#: The classifiers whose target accuracy judges the recommendation: the paper's 1-NN, and the choice of k's
#: second classifier (``model_selection.second_classifier``) where its rows have it.
FIRST, SECOND = "1-NN", "second classifier"
#: The column of the rows that holds the second classifier's accuracy (by each family's metric) in :func:`evaluate`.
SECOND_COLUMN = "_second_classifier_accuracy"


def second_classifier_rows(long: pd.DataFrame, families: Mapping[str, str],
                           metrics: Mapping[str, str]) -> pd.DataFrame | None:
    """The rows judged by the second classifier (``second_accuracy``, or ``second_balanced_accuracy`` for the
    families judged by balanced accuracy), or None where the rows have none."""
    if "second_accuracy" not in long.columns or long["second_accuracy"].isna().all():
        return None
    if long["second_accuracy"].isna().any():
        bad = sorted(set(long.loc[long["second_accuracy"].isna(), "feature_set"]))
        raise ValueError(f"recommend evaluation: the choice-of-k rows of {bad} lack the second classifier's "
                         "accuracy that the others have (rows of other settings: build them again)")
    renamed = {f"second_{m}": m for m in CANDIDATE_METRICS}
    first = [m for m in CANDIDATE_METRICS if m in long.columns]
    return judged_by(long.drop(columns=first).rename(columns=renamed), families, metrics)



def task_summary(long: pd.DataFrame, families: Mapping[str, str], rankers: Sequence[str], scorers: Sequence[str],
                 data_rules: Sequence[str], pair: Sequence[str] = (), metrics: Mapping[str, str] | None = None,
                 domains: tuple | None = None, permutations: int = 10) -> pd.DataFrame:
    """What the meta-evaluation needs of one task, the choice of k's rows ``long`` of one (feature set, pair):
    its runs (:func:`otfs.k_selection.candidate_runs`), each family judged by its own metric (:func:`judged_by`)
    and, where the rows have it, by the second classifier too (the view ``second classifier``). ``domains``: the pair's source and
    target (``.X``, ``.y``), whose :func:`data_profile` and row-order check (:func:`task_stability`,
    ``permutations`` draws) fill :data:`TASK_COLUMNS`. One job per task (rule ``recommend_task``)."""
    _check_permutations(permutations)
    keys = sorted(set(zip(long["feature_set"], long["pair"])))
    if len(keys) != 1:
        raise ValueError(f"a task summary reads the rows of one (feature set, pair), got {keys}")
    judged = judged_by(long, families, metrics or {})
    second = second_classifier_rows(long, families, metrics or {})
    views = {}
    if second is not None:
        judged[SECOND_COLUMN] = second["accuracy"].to_numpy()
        views = {SECOND: SECOND_COLUMN}
    rows = candidate_runs(judged, families, rankers, scorers, data_rules, pair, views)
    if domains is not None:
        (fs, pair_name), (src, tgt) = keys[0], domains
        profile = pair_profile(src, tgt)
        stability = task_stability(fs, pair_name, src, tgt, permutations)
        for col in TASK_COLUMNS[1:]:
            rows[col] = profile[col] if col in profile else stability[col]
    return rows


def evaluate(summaries: Sequence[pd.DataFrame], families: Mapping[str, str], rankers: Sequence[str],
             scorers: Sequence[str], data_rules: Sequence[str], gate_margin: float, alpha: float,
             provenance: Mapping, outputs: Mapping[str, str], reference: str = "ot",
             relevance: str = "source-anova", weighting: str = "family", fixed_k_rule: str = "circular") -> dict:
    """The meta-evaluation (module docstring) of the tasks' summaries (:func:`task_summary`, one per task);
    writes ``outputs``: ``csv``, ``tasks``, ``md``, ``pdf``, ``png``, ``signals`` (the scorers' signal quality,
    :func:`signal_table`), ``policy``, ``provenance``. The summaries' data profiles describe each family in the
    policy file (``by_family``), so that a pair's page finds the family most like it; their row-order checks
    make the section "Row order"."""
    if not len(summaries):
        raise ValueError("recommend evaluation: no task summaries of the choice of k to read")
    rows = pd.concat(list(summaries), ignore_index=True)
    rows = rows.sort_values(["adapter", "feature_set", "pair", "iteration"], kind="stable", ignore_index=True)
    views = {}
    second = f"oracle:{SECOND}"
    if second in rows.columns:
        lacking = sorted(set(rows.loc[rows[second].isna(), "feature_set"]))
        if lacking:
            raise ValueError(f"recommend evaluation: the choice-of-k rows of {lacking} lack the second classifier's "
                             "accuracy that the others have (rows of other settings: build them again)")
        views = {SECOND: SECOND_COLUMN}
    per_task = rows.drop_duplicates(["feature_set", "pair"]).sort_values(["feature_set", "pair"])
    profiles, stability = {}, None
    if "d" in rows.columns and not rows["d"].isna().any():
        profiles = {(fs, p): {"d": int(d), "n": int(n), "sparsity": float(sp)} for fs, p, d, n, sp in
                    per_task[["feature_set", "pair", "d", "n", "sparsity"]].itertuples(index=False)}
        stability = per_task[["feature_set", "pair", "permutations", "same_answer", "permutation_share"]].astype(
            {"permutations": int, "same_answer": int}).reset_index(drop=True)
    if fixed_k_rule not in (*scorers, *data_rules):
        raise ValueError(f"recommend.evaluation.fixed_k_rule: {fixed_k_rule!r} is not a rule of the rows (the rules: "
                         f"{[*scorers, *data_rules]})")
    tables, task_rows, fold_rows, policies, variant_rows, signal_rows, fixed_by = [], [], [], {}, [], [], {}
    for adapter, part in rows.groupby("adapter", sort=True):
        built = PolicyRuns(part, rankers, scorers, data_rules, (reference, relevance))
        if built.runs["family"].nunique() < 3:
            continue
        ev = evaluate_policies(built, rankers, reference, relevance, weighting, fixed_k_rule, gate_margin)
        runs, procs, outer, final, baseline_folds, fixed, regret, best_fixed, tasks = (
            ev[k] for k in ("runs", "procs", "outer", "final", "baseline_folds", "fixed", "regret", "best_fixed",
                            "tasks"))
        fixed_by[adapter] = fixed
        task_rows.append(tasks)
        fold_rows.append(outer.merge(baseline_folds, on="family").assign(adapter=adapter))
        for family, group in tasks.groupby("family", sort=True):
            tables.append(compare(group, family).assign(adapter=adapter))
        tables.append(compare(tasks, POOLED).assign(adapter=adapter))
        fam = runs.tasks["family"].to_numpy()
        for name in procs:
            r = runs.task_means(runs.regret(final["plain_accuracy"][name]))
            variant_rows.append({"adapter": adapter, "procedure": name, "shipped": name == final["procedure"],
                                 "regret": float(r.mean()),
                                 **{f: float(r[fam == f].mean()) for f in sorted(set(fam))}})
        variant_rows.append({"adapter": adapter, "procedure": "nested choice", "shipped": False,
                             "regret": float(regret[RECOMMENDATION].mean()),
                             **{f: float(regret[RECOMMENDATION][fam == f].mean()) for f in sorted(set(fam))}})
        signal_rows.append(signal_table(runs, adapter))
        if views:
            ev2 = evaluate_policies(built.view(SECOND), rankers, reference, relevance, weighting, fixed_k_rule,
                                    gate_margin)
            tables.append(compare(ev2["tasks"], POOLED).assign(adapter=adapter, classifier=SECOND))
        policies[adapter] = {**final["policy"], "name": final["name"], "procedure": final["procedure"],
                             "train_regret": final["train_regret"],
                             "nested_regret": float(regret[RECOMMENDATION].mean()),
                             "best_fixed": best_fixed, "best_fixed_regret": float(regret[best_fixed].mean()),
                             "tasks": int(len(runs.tasks)), "families": sorted(set(runs.runs["family"])),
                             "by_family": _by_family(tasks, profiles)}
    if not tables:
        raise ValueError("recommend evaluation: fewer than three families with rows under any adapter (a nested "
                         "leave one family out needs three)")
    table = pd.concat(tables, ignore_index=True)
    if "classifier" not in table.columns:
        table["classifier"] = FIRST
    table["classifier"] = table["classifier"].fillna(FIRST)
    table = table[["adapter", "classifier", *[c for c in table.columns if c not in ("adapter", "classifier")]]]
    tasks = pd.concat(task_rows, ignore_index=True)
    if stability is not None:
        tasks = tasks.merge(stability[["feature_set", "pair", "permutation_share"]], on=["feature_set", "pair"],
                            how="left", validate="many_to_one")
    folds = pd.concat(fold_rows, ignore_index=True)
    signals = pd.concat(signal_rows, ignore_index=True)
    write_csv(table, outputs["csv"], float_format="%.6g")
    write_csv(tasks, outputs["tasks"], float_format="%.6g")
    write_csv(signals, outputs["signals"], float_format="%.6g")
    if "signals_png" in outputs:
        _signal_figure(signals, outputs)
    default = "NA" if "NA" in policies else sorted(policies)[0]
    keys = ("kind", "rule", "rules", "rankers", "ranker", "k_rule", "feature", "threshold", "below", "above",
            "default", "challenger", "margin")
    shipped = {"default_adapter": default,
               "policies": {a: {k: v for k, v in p.items() if k in keys} for a, p in policies.items()},
               "learned": policies, "provenance": _compact_provenance(provenance)}
    write_json(outputs["policy"], shipped, sealed=False)
    variants = pd.DataFrame(variant_rows)
    md = _markdown(table, tasks, folds, policies, alpha, variants, signals, fixed_by, stability, families)
    write_text(outputs["md"], md)
    if "glance" in outputs:
        from otfs_workflow.report_landing import glance, markdown_section

        write_text(outputs["glance"], glance(
            f"Which ranker and how many features without target labels (adapter {default})",
            markdown_section(md, f"## Adapter {default}", until="Each fold:"), outputs["md"]))
    _figure(tasks, outputs)
    write_json(outputs["provenance"], dict(provenance))
    return {"table": table, "tasks": tasks, "folds": folds, "policies": policies, "variants": variants,
            "signals": signals}


def task_domains(caches: Mapping[str, str], pair: str) -> tuple:
    """A pair's source and target (``.X``, ``.y``) from its domains' caches (``caches``: domain to path)."""
    from otfs_workflow.data.cache import read_domains
    from otfs_workflow.protocol import parse_pair

    domains = parse_pair(pair)
    missing = [d for d in domains if d not in caches]
    if missing:
        raise ValueError(f"recommend: no cache of the domains {missing} of pair {pair} among {sorted(caches)}")
    cache = read_domains({d: caches[d] for d in domains})
    return cache.domains[domains[0]], cache.domains[domains[1]]


def pair_profile(src, tgt) -> dict:
    """:func:`data_profile` of a pair from its two domains' (``.X``): the sparsity of both, weighed by rows."""
    a, b = (data_profile([dom.X]) | {"rows": int(dom.X.shape[0])} for dom in (src, tgt))
    n = a["rows"] + b["rows"]
    return {"d": a["d"], "n": n, "sparsity": (a["sparsity"] * a["rows"] + b["sparsity"] * b["rows"]) / n}


def _by_family(tasks: pd.DataFrame, profiles: Mapping) -> dict:
    """Per family: its tasks, the recommendation's nested regret there, and the medians over its pairs of
    :func:`data_profile`'s numbers (where the caches were given)."""
    out = {}
    for family, group in tasks.groupby("family", sort=True):
        rec = {"tasks": int(len(group)), "nested_regret": float(group[RECOMMENDATION].mean())}
        prof = [profiles[k] for k in dict.fromkeys(zip(group["feature_set"], group["pair"])) if k in profiles]
        if prof:
            rec.update({key: float(np.median([p[key] for p in prof])) for key in ("d", "n", "sparsity")})
        out[str(family)] = rec
    return out


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
              variants: pd.DataFrame, signals: pd.DataFrame, fixed_by: Mapping,
              stability: pd.DataFrame | None = None, families: Mapping[str, str] | None = None) -> str:
    lines = ["# The label-free recommendation, measured on every task", "",
             "Which ranker and how many features a user without target labels should take "
             "(`otfs.k_selection.LabelFreeFeatureSelector`), scored on each task of the benchmark by **nested** "
             "leave one family out: for each family left out, the way of choosing a policy (each fixed policy, "
             "the best fixed policy, a conservative switch, the menu's policy of the least regret) is itself "
             "chosen by leave one family out on the other families alone, learned on them, and scored on the "
             "family left out. Regret: the best (ranker, k) in hindsight minus the choice, in points of the "
             "1-NN's target accuracy (of its balanced accuracy for the families the verdict judges by it: "
             "`tasks.csv`'s `metric`), mean over the tasks. A negative difference: the recommendation loses less than the "
             "other policy. Wins, ties, losses: tasks where it loses less, as much, more. p: Wilcoxon's signed-rank "
             "test over the tasks, two-sided; Holm over the comparisons of each row group.", ""]
    second = table[table["classifier"] == SECOND]
    table = table[table["classifier"] == FIRST]
    for adapter in sorted(set(table["adapter"]), key=lambda a: (a != "NA", a)):
        pol = policies[adapter]
        lines += [f"## Adapter {adapter}", "", "Goals:", ""]
        lines += _goals(table, tasks, adapter, alpha, fixed_by[adapter])
        lines += ["", f"Shipped for {adapter} (`label_free_policy.json`): the way `{pol['procedure']}`, chosen by "
                  f"leave one family out over every family, learned on all {pol['tasks']} tasks: `{pol['name']}`. "
                  f"Its expected regret is the nested figure, {decimals(pol['nested_regret'])} points (in sample "
                  f"{decimals(pol['train_regret'])}); the best fixed policy in hindsight, `{pol['best_fixed']}`, "
                  f"{decimals(pol['best_fixed_regret'])}.", ""]
        if pol["procedure"] in fixed_by[adapter] or pol["procedure"] == "best fixed":
            lines += ["Nothing learned beats a fixed policy out of sample here, so the default *is* a fixed "
                      "policy: a label-free score that picks among the candidates loses more, on families it has "
                      "not seen, than it gains.", ""]
        cmp = [*BASELINES, BEST_FIXED]
        lines += ["| family | tasks | recommendation | " + " | ".join(cmp) + " | vs best fixed (Holm p) | "
                  "vs all features (Holm p) |", "|---|---|---|" + "---|" * (len(cmp) + 2)]
        part = table[table["adapter"] == adapter]
        for scope, group in part.groupby("scope", sort=False):
            g = group.set_index("versus")
            cells = [f"**{scope}**" if scope == POOLED else scope, str(int(g["tasks"].iloc[0])),
                     decimals(g["recommendation_regret"].iloc[0])]
            cells += [decimals(g.loc[b, "versus_regret"]) for b in cmp]
            cells += [f"{decimals(g.loc[b, 'difference'], 2)} ({p_value(g.loc[b, 'p_holm'], 'scientific')})"
                      for b in (BEST_FIXED, "all features")]
            lines.append("| " + " | ".join(cells) + " |")
        sec = second[second["adapter"] == adapter].set_index("versus")
        if not sec.empty:
            lines += ["", "Judged by the second classifier (`model_selection.second_classifier`, fitted on the "
                      "same adapted samples) instead of the 1-NN, the same nested procedure, pooled: the "
                      f"recommendation's regret {decimals(sec['recommendation_regret'].iloc[0])} points over "
                      f"{int(sec['tasks'].iloc[0])} tasks, "
                      + ", ".join(f"{b} {decimals(sec.loc[b, 'versus_regret'])}" for b in cmp)
                      + f"; against the best fixed policy {decimals(sec.loc[BEST_FIXED, 'difference'], 2)} "
                      f"(Holm p {p_value(sec.loc[BEST_FIXED, 'p_holm'], 'scientific')})."]
        lines += ["", "Each fold: the way chosen on the other families (by its inner leave one family out regret) "
                  "and the policy it learned there:", "",
                  "| left out | way chosen | policy | training regret |", "|---|---|---|---|"]
        for _, f in folds[folds["adapter"] == adapter].iterrows():
            lines.append(f"| {f['family']} | {f['procedure']} | `{f['policy']}` | {decimals(f['train_regret'])} |")
        part = variants[variants["adapter"] == adapter]
        fams = [c for c in part.columns if c not in ("adapter", "procedure", "shipped", "regret")
                and part[c].notna().any()]
        lines += ["", "What was tried: each way of choosing, scored by plain leave one family out (each family by "
                  "what the way learns on the others), and the nested choice among them. The row in bold is the "
                  "way that ships.", "",
                  "| way | all tasks | " + " | ".join(fams) + " |", "|---|---|" + "---|" * len(fams)]
        for _, v in part.iterrows():
            row = "| " + " | ".join([v["procedure"], decimals(v["regret"]), *[decimals(v[f]) for f in fams]]) + " |"
            lines.append(row.replace("| ", "| **", 1).replace(" |", "** |", 1) if v["shipped"] else row)
        sig = signals[(signals["adapter"] == adapter) & (signals["scope"] == POOLED)]
        lines += ["", "Why a scorer works or not (pooled; per family in `signals.csv`): the mean within-task "
                  "Spearman correlation of its score with the target accuracy over the candidates, the share of "
                  "tasks where its best candidate is within 1 point of the best, its mean and worst regret.", "",
                  "| scorer | Spearman | within 1 point | mean regret | worst regret |", "|---|---|---|---|---|"]
        for _, r in sig.sort_values("spearman", ascending=False).iterrows():
            lines.append(f"| {r['scorer']} | {decimals(r['spearman'])} | {100 * r['within_1_point']:.0f} % | "
                         f"{decimals(r['mean_regret'])} | {decimals(r['worst_regret'])} |")
        lines.append("")
    if stability is not None and not stability.empty:
        lines += _stability_lines(stability, families or {})
    lines += ["Per-task regrets: `tasks.csv`; every comparison: `evaluation.csv`; the scorers' signals: "
              "`signals.csv`; the policies learned on every family, with their provenance: `policy.json`.", ""]
    return "\n".join(lines)


def _stability_lines(stability: pd.DataFrame, families: Mapping[str, str]) -> list[str]:
    """evaluation.md's section on row order (:func:`task_stability`): pooled, per family, and the tasks
    where a permutation changed the recommendation's inputs."""
    n = int(stability["permutations"].iloc[0])
    fam = stability["feature_set"].map(lambda fs: families.get(fs, fs))
    pooled = stability["same_answer"].sum() / stability["permutations"].sum()
    lines = ["## Row order", "",
             f"Each task's two domains with their rows permuted {n} times: the share of permutations under which "
             "the recommendation's inputs (the source rows its draws are taken from and the target rows, in the "
             "selector's order) are bit for bit those of the caches' row order, so that the same (ranker, k) comes "
             f"out. Pooled over {len(stability)} tasks: {100 * pooled:.0f} %; per task in `tasks.csv` "
             "(`permutation_share`).", "", "| family | tasks | same answer |", "|---|---|---|"]
    for family, group in stability.groupby(fam, sort=True):
        share = group["same_answer"].sum() / group["permutations"].sum()
        lines.append(f"| {family} | {len(group)} | {100 * share:.0f} % |")
    changed = stability[stability["same_answer"] < stability["permutations"]]
    lines += [""]
    if changed.empty:
        lines += ["No permutation changed any task's answer.", ""]
    else:
        lines += ["Tasks where a permutation changed the inputs: "
                  + ", ".join(f"{r.feature_set}/{r.pair} ({r.same_answer} of {r.permutations})"
                              for r in changed.itertuples()) + ".", ""]
    return lines


def _figure(tasks: pd.DataFrame, outputs: Mapping[str, str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_outputs

    adapters = sorted(set(tasks["adapter"]), key=lambda a: (a != "NA", a))
    policies = [RECOMMENDATION, *BASELINES, BEST_FIXED]
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
    save_outputs(fig, outputs, "Label-free recommendation: regret of each policy", dpi=120)


def _signal_figure(signals: pd.DataFrame, outputs: Mapping[str, str]) -> None:
    """Each scorer's pooled within-task Spearman correlation with the target accuracy, per adapter."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_outputs

    pooled = signals[signals["scope"] == POOLED]
    adapters = sorted(set(pooled["adapter"]), key=lambda a: (a != "NA", a))
    fig, axes = plt.subplots(1, len(adapters), figsize=(4.5 * len(adapters), 3.6), squeeze=False, sharey=True)
    for ax, adapter in zip(axes[0], adapters):
        part = pooled[pooled["adapter"] == adapter].sort_values("scorer")
        ax.barh(part["scorer"], part["spearman"], color="tab:blue")
        ax.axvline(0, color="black", lw=0.8)
        ax.axvline(0.5, color="tab:red", lw=0.8, ls="--")
        ax.set_xlim(-1, 1)
        ax.set_xlabel("mean within-task Spearman with the target accuracy")
        ax.set_title(f"adapter {adapter}", fontsize=10)
    fig.tight_layout()
    save_outputs(fig, outputs, "Label-free recommendation: each scorer's signal", dpi=120,
                 keys=tuple((k, f) for k, f in (("signals_png", "png"), ("signals_pdf", "pdf")) if k in outputs))


# -- one pair's recommendation --------------------------------------------------------------------------------
def run_pair(caches: Mapping[str, str], feature_set: str, pair: str, per_class, params: Mapping,
             outputs: Mapping[str, str], draws: int = 1, evaluated: bool = True) -> dict:
    """The selector on each of the pair's first ``draws`` iterations of the protocol (each its source subset and
    the whole target); the recommendation is the (ranker, k) chosen on the most draws (ties: the earliest draw's),
    with how often it wins. Writes ``json``, ``md``, ``pdf``, ``png``. ``evaluated``: whether this run also
    measures the policy on the benchmark's tasks (it needs the benchmark's data); the page says so where not.

    ``params``: the selector's parameters (``rankers``, ``adapter``, ``n_features_grid``, ``policy``,
    ``scorers``, ``classifier``, ``n_splits``, ``test_size``); each draw's ``random_state`` is derived from
    (feature set, pair, iteration, "recommend")."""
    from otfs.k_selection import LabelFreeFeatureSelector
    from otfs_workflow.data.cache import read_domains
    from otfs_workflow.protocol import derive_seed, iteration_source_subset, parse_pair
    from otfs_workflow.stages import source_classes

    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"recommend draws: a positive number of the protocol's iterations, got {draws!r}")
    source, target = parse_pair(pair)
    cache = read_domains({d: caches[d] for d in (source, target)})
    src, tgt = cache.domain(source), cache.domain(target, labels=False)  # the target's labels are never read
    classes = source_classes(cache, pair, selection=False)
    names = list(getattr(cache, "feature_names", None) or [f"f{i}" for i in range(cache.n_features)])
    Xs_all, ys_all, Xt = canonical_domains(src.X, src.y, tgt.X)
    Xt = pd.DataFrame(Xt, columns=names)
    fitted, sizes = [], []
    for it in range(draws):
        subset, _ = iteration_source_subset(feature_set, pair, it, ys_all, per_class, classes=classes,
                                            class_names=cache.class_names)
        selector = LabelFreeFeatureSelector(**dict(params), random_state=derive_seed(feature_set, pair, it, "recommend"))
        fitted.append(selector.fit(pd.DataFrame(Xs_all[subset], columns=names), ys_all[subset], X_target=Xt))
        sizes.append(int(len(subset)))
    choices = [(sel.ranker_, sel.k_) for sel in fitted]
    counts = {c: choices.count(c) for c in choices}
    winner = max(counts, key=lambda c: (counts[c], -choices.index(c)))
    selector = fitted[choices.index(winner)]
    rec = {"feature_set": feature_set, "pair": pair, "source_samples": sizes[choices.index(winner)],
           "target_samples": int(tgt.X.shape[0]), **selector.recommendation(),
           "draws": {"n": draws, "wins": counts[winner], "agreement": counts[winner] / draws,
                     "choices": [{"iteration": it, "ranker": r, "k": k} for it, (r, k) in enumerate(choices)]},
           "how_sure": selector.how_sure(data_profile([src.X, tgt.X])), "evaluated": bool(evaluated)}
    write_json(outputs["json"], rec, sealed=False)
    write_text(outputs["md"], pair_markdown(rec))
    _pair_figure(selector.candidates_, rec, outputs)
    return rec


def canonical_domains(Xs: np.ndarray, ys: np.ndarray, Xt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pair's source rows, their labels and the target rows, each domain in the selector's canonical order of
    its rows (:func:`otfs.k_selection._label_free.canonical_row_order`): what a pair's recommendation draws
    from, so that the same data with their rows permuted give the same draws and the same recommendation."""
    from otfs.k_selection._label_free import canonical_row_order

    order = canonical_row_order(Xs, ys)
    return Xs[order], ys[order], Xt[canonical_row_order(Xt)]


def _check_permutations(permutations) -> None:
    if isinstance(permutations, bool) or not isinstance(permutations, int) or permutations < 1:
        raise ValueError(f"recommend evaluation permutations: a positive number, got {permutations!r}")


def task_stability(fs: str, pair: str, src, tgt, permutations: int) -> dict:
    """Of ``permutations`` random row permutations of both domains of (feature set ``fs``, ``pair``) (each drawn
    from (feature set, pair, permutation, "row permutation")), how many leave the recommendation's inputs
    (:func:`canonical_domains`: the source rows and labels the draws are taken from, and the target) bit for bit
    those of the caches' order. The selector is deterministic given its inputs and ``random_state``, so these
    permutations give the same (ranker, k)."""
    _check_permutations(permutations)
    from otfs_workflow.protocol import derive_seed

    reference = canonical_domains(src.X, src.y, tgt.X)
    same = 0
    for p in range(permutations):
        rng = np.random.default_rng(derive_seed(fs, pair, p, "row permutation"))
        a, b = rng.permutation(src.X.shape[0]), rng.permutation(tgt.X.shape[0])
        got = canonical_domains(src.X[a], src.y[a], tgt.X[b])
        same += all(np.array_equal(g, r) for g, r in zip(got, reference, strict=True))
    return {"feature_set": fs, "pair": pair, "permutations": permutations, "same_answer": same,
            "permutation_share": same / permutations}


def pair_markdown(rec: Mapping) -> str:
    """One pair's recommendation as a page a user reads."""
    from otfs.k_selection._label_free import describe_policy

    policy = rec["policy"]
    lines = [f"# Recommendation for {rec['feature_set']}, {rec['pair']}", "",
             f"Keep **{rec['k']} of {rec['d']} features** ranked by **{rec['ranker']}** "
             f"(source: {rec['source_samples']} samples, target: {rec['target_samples']}, no target label read).",
             "", f"Policy: {describe_policy(policy)} (`{json.dumps(dict(policy), sort_keys=True)}`); the BH shift test "
             f"finds {rec['measures']['unshifted']} of {rec['d']} features unshifted "
             f"({100 * rec['measures']['unshifted_fraction']:.1f} %).", ""]
    draws = rec.get("draws")
    if draws:
        lines += [f"How sure: the same (ranker, k) wins on {draws['wins']} of the protocol's {draws['n']} source draws "
                  f"({100 * draws['agreement']:.0f} %); the draws chose "
                  + ", ".join(f"({c['ranker']}, {c['k']})" for c in draws["choices"]) + ".", ""]
    sure = rec.get("how_sure") or {}
    if sure.get("nested_regret") is not None:
        lines += [f"The shipped policy loses {sure['nested_regret']:.2f} points of target accuracy on average against "
                  "the best (ranker, k) in hindsight, measured by nested leave one family out on the benchmark's "
                  "tasks (`results/recommend/evaluation.md`).", ""]
        sim, prof = sure.get("similar_family"), sure.get("profile")
        if sim and prof:
            lines += [f"The family most like this pair by its number of features, of samples and its sparsity (d = "
                      f"{prof['d']}, n = {prof['n']}, {100 * prof['sparsity']:.0f} % of values at their feature's "
                      f"most common value) is **{sim['family']}** (d = {sim['d']:.0f}, n = {sim['n']:.0f}, "
                      f"{100 * sim['sparsity']:.0f} %): there the shipped policy loses {sim['nested_regret']:.2f} "
                      f"points, over {sim['tasks']} tasks.", ""]
    elif "nested_regret" in sure:
        lines += ["The shipped policy file records no nested regret: its expected regret is not measured "
                  "(`snakemake recommend` on the benchmark's data measures it).", ""]
    if not rec.get("evaluated", True):
        lines += ["This run does not measure the policy itself: its evaluation on the benchmark's tasks "
                  "(`results/recommend/evaluation.md`) needs the benchmark's data, the choice of k's rows of three "
                  "families or more, and this configuration has fewer.", ""]
    if "atc_target_accuracy" in sure:
        lines += [f"ATC estimates the chosen candidate's target accuracy (its validation classifier's) at "
                  f"{100 * sure['atc_target_accuracy']:.1f} %, beside {100 * sure['source_validation_accuracy']:.1f} % "
                  "on the source's validation samples.", ""]
    if sure.get("all_features"):
        lines += ["Every feature is kept: no ranking plays a part in this choice (a random order keeps the same "
                  "features).", ""]
    if sure.get("random_ties_or_beats"):
        lines += ["**No ranker beats a random order here**: a random order's best candidate scores at least as well "
                  "as the choice under the policy's scores. The ranking is not to be trusted on this pair.", ""]
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
    from otfs_workflow.plotting import save_outputs

    rules = [c[:-6] for c in candidates.columns if c.endswith(":score")]
    used = policy_rules(rec["policy"])
    ncol = min(3, len(rules))
    nrow = int(np.ceil(len(rules) / ncol))
    counts = sorted(set(candidates["k"]))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.0 * nrow + 0.6), squeeze=False)
    chosen = candidates[candidates["chosen"]].iloc[0]
    handles = {}
    for ax, rule in zip(axes.ravel(), rules):
        values = candidates[f"{rule}:score"].to_numpy(dtype=float)
        for ranker, group in candidates.groupby("ranker", sort=False):
            (line,) = ax.plot(group["k"], group[f"{rule}:score"], marker="o", ms=3, label=ranker)
            handles.setdefault(ranker, line)
        ax.plot([chosen["k"]], [chosen[f"{rule}:score"]], marker="*", ms=14, color="black", ls="none")
        ax.set_xscale("log")
        ax.set_xticks(counts, [str(k) for k in counts], fontsize=7)
        ax.minorticks_off()
        finite = values[np.isfinite(values)]
        if finite.size > 3:  # far low outliers off the scale, so that they do not flatten the rest; the best kept
            q1, q3 = np.percentile(finite, [25, 75])
            floor = q1 - 3 * (q3 - q1)
            if q3 > q1 and finite.min() < floor:
                top = finite.max()
                ax.set_ylim(floor - 0.05 * (top - floor), top + 0.05 * (top - floor))
                ax.text(0.01, 0.01, f"{int((finite < floor).sum())} low outlier(s) off the scale",
                        transform=ax.transAxes, fontsize=6, color="grey")
        ax.set_title(f"{rule} (the policy's)" if rule in used else rule, fontsize=9,
                     fontweight="bold" if rule in used else "normal")
        ax.set_xlabel("k, features kept", fontsize=8)
        ax.set_ylabel("score (higher is better)", fontsize=8)
    for ax in axes.ravel()[len(rules):]:
        ax.axis("off")
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(len(handles), 7), fontsize=7,
               frameon=False)
    fig.suptitle(f"{rec['feature_set']} {rec['pair']}: candidates' label-free scores; ★ the choice "
                 f"({rec['ranker']}, k = {rec['k']})", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    save_outputs(fig, outputs, f"Label-free recommendation: {rec['feature_set']} {rec['pair']}", dpi=110)

