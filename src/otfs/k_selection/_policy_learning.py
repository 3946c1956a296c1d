"""Learning a label-free policy from labelled tasks, and scoring it on families it never saw.

Shared code of the selection rules' folder (not a rule). :class:`~otfs.k_selection.LabelFreeFeatureSelector`
picks one candidate (ranker, k) by a **policy** (:func:`~otfs.k_selection.choose_candidate`); which policy to
trust is learned here, from tasks whose target labels are known, and measured on tasks of other families.

A *task* is a (feature set, pair) under one adapter; a *run* one of its iterations. Each run's candidates are
every (ranker, k) of a grid, with their label-free scores and their target accuracy (the long table
:func:`candidate_runs` reads: one row per run and candidate). A policy's accuracy on a task is the mean over the
runs of its pick's accuracy, and its **regret** the best (ranker, k) in hindsight (the largest mean accuracy over
the runs) minus that, in points.

- :func:`policy_menu`: the single policies (each scorer's best candidate, the rank average, every (ranker, k
  rule) held fixed, all features);
- :func:`learn_policy`: the menu's policy of the least training regret, or a *gate* on the share of features
  the BH shift test finds unshifted where it gains more than a margin; :func:`learn_switch`: the conservative
  switch (a fixed policy kept unless a scorer's pick beats its score by a margin);
- :func:`nested_family_out`: nested leave one family out [2]_ of the ways of choosing a policy
  (:func:`policy_procedures`); :func:`leave_one_family_out`: the baselines a user could follow instead;
- :func:`evaluate_policies`: all of it for one adapter's runs, what the pipeline's meta-evaluation reports and
  the policy it ships (``label_free_policy.json``).

A user with labelled tasks of their own learns the policy the same way and gives it to the selector
(``LabelFreeFeatureSelector(policy=...)``).

References
----------
.. [1] Y. Lalou et al. SKADA-Bench: Benchmarking Unsupervised Domain Adaptation Methods with Realistic
   Validation. 2024.
.. [2] S. Varma, R. Simon. Bias in error estimation when using cross-validation for model selection. BMC
   Bioinformatics 7:91, 2006.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs.k_selection._base import get_rule, with_ensemble_scores
from otfs.k_selection._label_free import choose_candidate

__all__ = ["BASELINES", "BEST_FIXED", "RECOMMENDATION", "RUN_COLUMNS", "PolicyRuns", "candidate_runs",
           "evaluate_policies", "fixed_policy_names", "leave_one_family_out", "learn_policy", "learn_switch",
           "nested_family_out", "policy_menu", "policy_procedures", "switch_policy"]

#: The baselines the learned policy is compared with (:func:`leave_one_family_out`), in the tables' order.
BASELINES = ("always OT", "always source-ANOVA", "best-on-average ranker", "all features")
#: The column of the nested choice's per-task regret (:func:`evaluate_policies`).
RECOMMENDATION = "recommendation"
#: The fixed policy of the least pooled regret in hindsight (the simplest rule to beat).
BEST_FIXED = "best fixed policy"
#: The thresholds of the share of unshifted features a gate is learned among.
THRESHOLDS = tuple(np.round(np.arange(0.05, 1.0, 0.05), 2))


def policy_menu(rankers: Sequence[str], scorers: Sequence[str], data_rules: Sequence[str],
                pair: Sequence[str] = ()) -> dict[str, dict]:
    """The single policies a policy is learned among, by name (``scorer:IW``, ``fixed:ot/IW``, ...); ``pair``:
    two rankers (the fixed policies' two) a scorer or the rank average also chooses between alone."""
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


#: The columns of :func:`candidate_runs`' rows that describe the run; the others are the menu policies' picks
#: (``acc|<policy>``, ``view|<view>|<policy>``, ``picked|<rule>|<policy>``), the scorers' signal
#: (``spearman|<rule>``) and the rankers' mean accuracies (``mean|<ranker>``, ``mean:<view>|<ranker>``).
RUN_COLUMNS = ("family", "feature_set", "pair", "adapter", "iteration", "unshifted_fraction", "oracle")


def candidate_runs(long: pd.DataFrame, families: Mapping[str, str], rankers: Sequence[str],
                   scorers: Sequence[str], data_rules: Sequence[str], pair: Sequence[str] = (),
                   views: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per run of the candidates' rows ``long``: :data:`RUN_COLUMNS`, each menu policy's chosen
    accuracy (``acc|<policy>``; ``view|<view>|<policy>`` judged by a ``views`` column), the score under each scorer
    of each policy's pick (``picked|<rule>|<policy>``), each scorer's within-run Spearman correlation with the
    accuracy (``spearman|<rule>``) and each ranker's mean accuracy over the task's rows (``mean|<ranker>``,
    ``mean:<view>|<ranker>``). What :class:`PolicyRuns` reads; each task's rows give its runs alone, so that
    tasks are computed apart and gathered.

    ``long`` has one row per (feature set, pair, adapter, iteration, ranker, ``n_features``): ``d``, the
    target ``accuracy`` (in points), each scorer's ``<rule>:score`` (``target_proba`` for an ensemble rule,
    :func:`~otfs.k_selection.encode_proba`), each data rule's ``<rule>:k`` and ``shift-test:unshifted`` (the
    features the BH shift test finds unshifted): a fitted selector's ``candidates_`` with those columns added
    (its ``k`` is read as ``n_features``). ``families`` maps each feature set to its family."""
    if "n_features" not in long.columns and "k" in long.columns:
        long = long.rename(columns={"k": "n_features"})
    built = {n: get_rule(n) for n in scorers}
    ensemble = {n: r for n, r in built.items() if getattr(r, "ensemble", False)}
    missing = [c for c in ("feature_set", "pair", "adapter", "iteration", "ranker", "n_features", "d", "accuracy",
                           "shift-test:unshifted", *(f"{r}:score" for r in scorers if r not in ensemble),
                           *(f"{r}:k" for r in data_rules)) if c not in long.columns]
    if missing:
        raise ValueError(f"the candidates' rows lack the columns {missing}")
    long = long[long["ranker"].isin(rankers)]
    if long.empty:
        raise ValueError(f"no rows of the candidate rankers {list(rankers)} in the per-pair tables")
    unknown = sorted(set(long["feature_set"]) - set(families))
    if unknown:
        raise ValueError(f"feature sets {unknown} belong to no family of `families`")
    policies = policy_menu(rankers, scorers, data_rules, pair)
    order = {r: i for i, r in enumerate(rankers)}
    task_keys = ["feature_set", "pair", "adapter"]
    views = dict(views or {})
    by_k = long.groupby([*task_keys, "ranker", "n_features"])
    oracle = by_k["accuracy"].mean().groupby(level=task_keys).max()
    view_oracle = {v: by_k[col].mean().groupby(level=task_keys).max() for v, col in views.items()}
    by_ranker = long.groupby([*task_keys, "ranker"])
    means = {"": by_ranker["accuracy"].mean(), **{f":{v}": by_ranker[col].mean() for v, col in views.items()}}
    out = []
    for key, group in long.groupby([*task_keys, "iteration"], sort=True):
        fs, pair_name, adapter, it = key
        present = sorted(set(group["ranker"]), key=order.get)
        if present != list(rankers):
            raise ValueError(f"{fs}/{pair_name}, adapter {adapter}, iteration {it}: rows of the rankers {present}, "
                             f"the candidates are {list(rankers)}")
        table = group.assign(_o=group["ranker"].map(order)).sort_values(["_o", "n_features"])
        table = table.rename(columns={"n_features": "k"}).reset_index(drop=True)
        if ensemble:
            table = with_ensemble_scores(table, ensemble, where=f"{fs}/{pair_name}, adapter {adapter}, iteration {it}")
        d = int(table["d"].iloc[0])
        measures = {"unshifted_fraction": float(table["shift-test:unshifted"].iloc[0]) / d}
        picks = [choose_candidate(table, p, measures) for p in policies.values()]
        task = (fs, pair_name, adapter)
        row = {"family": families[fs], "feature_set": fs, "pair": pair_name, "adapter": adapter, "iteration": int(it),
               "unshifted_fraction": measures["unshifted_fraction"], "oracle": float(oracle.loc[task]),
               **{f"oracle:{v}": float(o.loc[task]) for v, o in view_oracle.items()}}
        accuracy = table["accuracy"].to_numpy(dtype=float)[picks]
        row.update({f"acc|{n}": a for n, a in zip(policies, accuracy)})
        for v, col in views.items():
            row.update({f"view|{v}|{n}": a for n, a in zip(policies, table[col].to_numpy(dtype=float)[picks])})
        for rule in scorers:
            row.update({f"picked|{rule}|{n}": s
                        for n, s in zip(policies, table[f"{rule}:score"].to_numpy(dtype=float)[picks])})
        row.update({f"spearman|{rule}": rho for rule, rho in _spearmans(table, scorers).items()})
        for prefix, m in means.items():
            row.update({f"mean{prefix}|{r}": float(m.loc[(*task, r)]) for r in rankers})
        if "metric" in table.columns:
            row["metric"] = str(table["metric"].iloc[0])
        out.append(row)
    return pd.DataFrame(out)


class PolicyRuns:
    """Every run's candidates, and each menu policy's accuracy: what a policy is learned from.

    Built from :func:`candidate_runs` rows; :meth:`from_long` builds them from the candidates' rows.

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
    means : Series
        Each ranker's mean accuracy over a task's rows (iterations and k), by (feature set, pair, adapter, ranker).
    """

    def __init__(self, rows: pd.DataFrame, rankers: Sequence[str], scorers: Sequence[str],
                 data_rules: Sequence[str], pair: Sequence[str] = ()):
        self.policies = policy_menu(rankers, scorers, data_rules, pair)
        self.names = list(self.policies)
        missing = [n for n in self.names if f"acc|{n}" not in rows.columns]
        if missing:
            raise ValueError(f"the runs' rows lack the menu policies {missing[:3]}{'...' if len(missing) > 3 else ''} "
                             "(rows of another menu: build the task summaries again)")
        rows = rows.reset_index(drop=True)
        views = [c.split(":", 1)[1] for c in rows.columns if c.startswith("oracle:")]
        self.runs = rows[[*RUN_COLUMNS, *(f"oracle:{v}" for v in views)]].copy()
        self.runs["task"] = self.runs.groupby(["feature_set", "pair", "adapter"], sort=False).ngroup()
        self.accuracy = rows[[f"acc|{n}" for n in self.names]].to_numpy(dtype=float)
        self._views = {v: rows[[f"view|{v}|{n}" for n in self.names]].to_numpy(dtype=float) for v in views}
        #: {rule: (runs, policies)}: the score under ``rule`` of each menu policy's pick, for the switches
        self.picked = {rule: rows[[f"picked|{rule}|{n}" for n in self.names]].to_numpy(dtype=float)
                       for rule in scorers}
        self.scorers, self.rankers = list(scorers), list(rankers)
        #: one row per run and scorer: the within-run Spearman correlation of its score with the accuracy
        keys = rows[["feature_set", "pair", "adapter", "iteration"]]
        self.signals = pd.DataFrame({**{c: np.repeat(keys[c].to_numpy(), len(scorers)) for c in keys.columns},
                                     "scorer": np.tile(np.asarray(scorers, dtype=object), len(rows)),
                                     "spearman": rows[[f"spearman|{r}" for r in scorers]].to_numpy(
                                         dtype=float).ravel()})
        first = rows.drop_duplicates(["feature_set", "pair", "adapter"])
        self.means = self._means(first, "")
        self._view_means = {v: self._means(first, f":{v}") for v in views}
        #: each feature set's metric (the column its accuracy is), where the rows name it
        self.metric = (first.drop_duplicates("feature_set").set_index("feature_set")["metric"]
                       if "metric" in first.columns else pd.Series(dtype=object))
        self.tasks = (self.runs.groupby("task", sort=True)
                      .agg(family=("family", "first"), feature_set=("feature_set", "first"), pair=("pair", "first"),
                           adapter=("adapter", "first"), oracle=("oracle", "first"), runs=("iteration", "size"))
                      .reset_index())
        # each run weighs 1 / its task's runs: a task's regret is the mean over its runs
        self.task_weight = 1.0 / self.runs["task"].map(self.tasks.set_index("task")["runs"]).to_numpy()
        # each family weighs the same: a run weighs 1 / (its task's runs x its family's tasks)
        tasks_per_family = self.tasks.groupby("family")["task"].size()
        self.family_weight = self.task_weight / self.runs["family"].map(tasks_per_family).to_numpy()

    def _means(self, first: pd.DataFrame, prefix: str) -> pd.Series:
        cols = [f"mean{prefix}|{r}" for r in self.rankers]
        wide = first.set_index(["feature_set", "pair", "adapter"])[cols]
        wide.columns = pd.Index(self.rankers, name="ranker")
        return wide.stack().sort_index()

    @classmethod
    def from_long(cls, long: pd.DataFrame, families: Mapping[str, str], rankers: Sequence[str],
                  scorers: Sequence[str], data_rules: Sequence[str], pair: Sequence[str] = (),
                  views: Mapping[str, str] | None = None) -> PolicyRuns:
        """The runs of the candidates' rows ``long`` (:func:`candidate_runs`)."""
        return cls(candidate_runs(long, families, rankers, scorers, data_rules, pair, views), rankers, scorers,
                   data_rules, pair)

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

    def view(self, name: str) -> PolicyRuns:
        """The same runs and picks judged by another accuracy (``views`` of the constructor: a column of the
        rows, such as the second classifier's): its accuracies and oracles in place of the first ones. The
        policies pick the same candidates, so nothing is chosen again."""
        import copy

        if name not in self._views:
            raise ValueError(f"no view {name!r} of the runs (views: {sorted(self._views)})")
        out = copy.copy(self)
        out.accuracy = self._views[name]
        out.runs = self.runs.assign(oracle=self.runs[f"oracle:{name}"])
        out.tasks = self.tasks.assign(oracle=self.tasks["task"].map(out.runs.groupby("task")["oracle"].first()))
        out.means = self._view_means[name]
        out._views, out._view_means = {}, {}
        return out


def _weights(runs: PolicyRuns, weighting: str) -> np.ndarray:
    if weighting not in ("task", "family"):
        raise ValueError(f"weighting: 'task' or 'family', got {weighting!r}")
    return runs.task_weight if weighting == "task" else runs.family_weight


def _mean_regret(runs: PolicyRuns, rows: np.ndarray, cols: np.ndarray | None = None, weighting: str = "task") -> np.ndarray:
    """The mean over the tasks of ``rows`` (a run mask) of each menu policy's regret (or the columns ``cols``),
    each task weighing the same (``weighting="task"``) or each family (``"family"``)."""
    acc = runs.accuracy[rows] if cols is None else runs.accuracy[rows][:, cols]
    w = _weights(runs, weighting)[rows]
    return (runs.regret(acc, rows) * w[:, None]).sum(axis=0) / w.sum()


def learn_policy(runs: PolicyRuns, rows: np.ndarray, gate_margin: float | None, weighting: str = "family") -> dict:
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


def _apply(runs: PolicyRuns, policy: Mapping, rows: np.ndarray) -> np.ndarray:
    """The per-run accuracies of a learned policy (a menu policy, a gate, or a switch from a menu policy to a
    scorer's best candidate) on the runs ``rows`` (NaN elsewhere)."""
    out = np.full(len(runs.runs), np.nan)
    if policy["kind"] == "switch":
        default = next(n for n, p in runs.policies.items() if p == dict(policy["default"]))
        out[rows] = _switch_accuracy(runs, default, policy["rule"], policy["margin"])[rows]
        return out
    if policy["kind"] == "gate":
        m = runs.runs["unshifted_fraction"].to_numpy()
        below = m < policy["threshold"]
        a, b = _apply(runs, policy["below"], rows), _apply(runs, policy["above"], rows)
        out[rows] = np.where(below, a, b)[rows]
        return out
    name = next(n for n, p in runs.policies.items() if p == dict(policy))
    out[rows] = runs.column(name)[rows]
    return out


def _fixed_choice(runs: PolicyRuns, rows: np.ndarray, ranker: str, weighting: str = "family") -> str:
    """The fixed-ranker policy of ``ranker`` whose k rule has the least mean regret on ``rows``."""
    names = [n for n in runs.names if n.startswith(f"fixed:{ranker}/")]
    regret = _mean_regret(runs, rows, np.array([runs.names.index(n) for n in names]), weighting)
    return names[int(np.argmin(regret))]


def _best_ranker(long_means: pd.DataFrame, tasks: set) -> str:
    """The ranker of the best mean accuracy over the grid (iterations and k averaged) on the tasks ``tasks``."""
    part = long_means[long_means.index.droplevel("ranker").isin(tasks)]
    return str(part.groupby(level="ranker").mean().idxmax())


def leave_one_family_out(runs: PolicyRuns, rankers: Sequence[str], reference: str = "ot", relevance: str = "source-anova",
                         weighting: str = "family") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each family's runs scored by the baselines' free choices learned on the other families: per-run
    accuracies of each of :data:`BASELINES`, and the choices made per fold (the learned policy's own folds are
    :func:`nested_family_out`'s)."""
    fam = runs.runs["family"].to_numpy()
    task_key = list(zip(runs.runs["feature_set"], runs.runs["pair"], runs.runs["adapter"]))
    means = runs.means[runs.means.index.get_level_values("ranker").isin(rankers)]
    per_run = {name: np.full(len(runs.runs), np.nan) for name in BASELINES}
    folds = []
    for family in sorted(set(fam)):
        test, train = fam == family, fam != family
        if not train.any():
            raise ValueError(f"leave one family out needs two families or more; only {family!r} has rows")
        train_tasks = {k for k, t in zip(task_key, train) if t}
        best = _best_ranker(means, train_tasks)
        choice = {"always OT": _fixed_choice(runs, train, reference, weighting),
                  "always source-ANOVA": _fixed_choice(runs, train, relevance, weighting),
                  "best-on-average ranker": _fixed_choice(runs, train, best, weighting),
                  "all features": "all-features"}
        for name, policy in choice.items():
            per_run[name][test] = runs.column(policy)[test]
        folds.append({"family": family, **{f"{k} (policy)": v for k, v in choice.items()}})
    return pd.DataFrame(per_run), pd.DataFrame(folds)


# -- the ways of choosing a policy, and their nested validation ------------------------------------------------
#: Margins of a switch are learned among these quantiles of its challengers' positive score gains (and 0).
SWITCH_QUANTILES = (0.25, 0.5, 0.75, 0.9)


def _spearmans(table: pd.DataFrame, scorers: Sequence[str]) -> dict[str, float]:
    """One run's signal quality: per scorer, the Spearman correlation over the candidates of its score with the
    target accuracy (NaN where either is constant or fewer than three scores are finite)."""
    from scipy.stats import spearmanr

    acc = table["accuracy"].to_numpy(dtype=float)
    out = {}
    for rule in scorers:
        s = table[f"{rule}:score"].to_numpy(dtype=float)
        ok = np.isfinite(s)
        out[rule] = (float(spearmanr(s[ok], acc[ok]).statistic)
                     if ok.sum() > 2 and np.ptp(s[ok]) > 0 and np.ptp(acc[ok]) > 0 else float("nan"))
    return out


def fixed_policy_names(runs: PolicyRuns, k_rule: str) -> list[str]:
    """The fixed policies a user could follow without learning anything: all features, and every ranker at
    ``k_rule``'s k."""
    names = ["all-features", *(f"fixed:{r}/{k_rule}" for r in runs.rankers)]
    missing = [n for n in names if n not in runs.names]
    if missing:
        raise ValueError(f"fixed_k_rule: {k_rule!r} is not a rule of the rows (fixed policies "
                         f"{missing} are not on the menu)")
    return names


def _switch_accuracy(runs: PolicyRuns, default: str, rule: str, margin: float) -> np.ndarray:
    """Per-run accuracy of the switch from the menu policy ``default`` to ``scorer:<rule>`` where the latter's
    pick scores more than ``margin`` above the default's (the library's ``switch`` kind)."""
    d, c = runs.names.index(default), runs.names.index(f"scorer:{rule}")
    gain = runs.picked[rule][:, c] - runs.picked[rule][:, d]
    switch = np.isfinite(gain) & (gain > margin)
    return np.where(switch, runs.accuracy[:, c], runs.accuracy[:, d])


def switch_policy(runs: PolicyRuns, default: str, rule: str, margin: float) -> dict:
    """The library's policy of :func:`_switch_accuracy`."""
    return {"kind": "switch", "default": runs.policies[default], "challenger": runs.policies[f"scorer:{rule}"],
            "rule": rule, "margin": float(margin)}


def _task_regret(runs: PolicyRuns, accuracy: np.ndarray, rows: np.ndarray, weighting: str) -> float:
    """The weighted mean regret over the runs ``rows`` of one per-run accuracy vector."""
    w = _weights(runs, weighting)[rows]
    return float((runs.regret(accuracy[rows], rows) * w).sum() / w.sum())


def learn_switch(runs: PolicyRuns, rows: np.ndarray, fixed: Sequence[str], weighting: str = "family") -> dict:
    """The switch of the least mean regret on ``rows``: a fixed policy kept unless a scorer's pick beats its
    score by a margin, the margin among the quantiles of the training gains (:data:`SWITCH_QUANTILES`) and 0.
    Ties go to the larger margin (the more conservative switch), then to the earlier fixed policy and
    scorer."""
    best = None
    for default in fixed:
        d = runs.names.index(default)
        for rule in runs.scorers:
            c = runs.names.index(f"scorer:{rule}")
            gain = (runs.picked[rule][:, c] - runs.picked[rule][:, d])[rows]
            positive = gain[np.isfinite(gain) & (gain > 0)]
            margins = sorted({0.0, *(float(q) for q in np.quantile(positive, SWITCH_QUANTILES))}
                             if positive.size else {0.0}, reverse=True)
            for m in margins:
                r = _task_regret(runs, _switch_accuracy(runs, default, rule, m), rows, weighting)
                if best is None or r < best[0] - 1e-9:
                    best = (r, default, rule, m)
    r, default, rule, m = best
    return {"name": f"switch({default} -> scorer:{rule} above {m:.4g})", "policy": switch_policy(runs, default, rule, m),
            "train_regret": r}


def policy_procedures(runs: PolicyRuns, fixed: Sequence[str], gate_margin: float | None, weighting: str) -> dict:
    """The ways of choosing a policy, by name, simplest first (ties go to the earlier): each fixed policy as it
    is, the best fixed policy on the training families, the conservative switch, and the menu's policy (or gate)
    of the least training regret. Each maps a run mask (the training runs) to ``{"name", "policy",
    "train_regret"}``."""
    out = {}
    for name in fixed:
        out[name] = (lambda rows, name=name: {"name": name, "policy": runs.policies[name],
                                             "train_regret": _task_regret(runs, runs.column(name), rows, weighting)})

    def best_fixed(rows):
        regrets = [_task_regret(runs, runs.column(n), rows, weighting) for n in fixed]
        i = int(np.argmin(regrets))
        return {"name": fixed[i], "policy": runs.policies[fixed[i]], "train_regret": float(regrets[i])}

    out["best fixed"] = best_fixed
    out["switch"] = lambda rows: learn_switch(runs, rows, fixed, weighting)
    out["least regret"] = lambda rows: learn_policy(runs, rows, gate_margin, weighting)
    return out


def family_out(runs: PolicyRuns, procedure, rows: np.ndarray) -> tuple[np.ndarray, list[dict]]:
    """Leave one family out within the runs ``rows``: each family's runs scored by what ``procedure`` learns on
    the other families of ``rows``; the per-run accuracies (NaN outside ``rows``) and each fold's choice."""
    fam = runs.runs["family"].to_numpy()
    out, folds = np.full(len(runs.runs), np.nan), []
    families = sorted(set(fam[rows]))
    if len(families) < 2:
        raise ValueError(f"leave one family out needs two families or more; only {families} have rows")
    for family in families:
        test, train = rows & (fam == family), rows & (fam != family)
        learned = procedure(train)
        out[test] = _apply(runs, learned["policy"], test)[test]
        folds.append({"family": family, **learned})
    return out, folds


def nested_family_out(runs: PolicyRuns, procs: Mapping, weighting: str) -> tuple[np.ndarray, pd.DataFrame, dict]:
    """Nested leave one family out. For each family left out, every way of choosing (``procs``) is scored by
    leave one family out on the other families alone, the one of the least mean regret there is learned on all
    of them, and the family left out scores that. Returns the per-run accuracies, the outer folds (the way
    chosen, its inner regrets, the policy) and the choice on every family (what ships): the way of the least
    regret in a plain leave one family out over all families, learned on every family."""
    fam = runs.runs["family"].to_numpy()
    every = np.ones(len(fam), dtype=bool)
    if len(set(fam)) < 3:
        raise ValueError(f"a nested leave one family out needs three families or more; the rows have "
                         f"{sorted(set(fam))}")
    out, folds = np.full(len(fam), np.nan), []
    for family in sorted(set(fam)):
        test, train = fam == family, fam != family
        inner = {name: _task_regret(runs, family_out(runs, proc, train)[0], train, weighting)
                 for name, proc in procs.items()}
        chosen = min(inner, key=lambda n: (round(inner[n], 9), list(procs).index(n)))
        learned = procs[chosen](train)
        out[test] = _apply(runs, learned["policy"], test)[test]
        folds.append({"family": family, "procedure": chosen, "policy": learned["name"],
                      "train_regret": learned["train_regret"], **{f"inner: {n}": v for n, v in inner.items()}})
    plain = {name: family_out(runs, proc, every)[0] for name, proc in procs.items()}
    top = {name: _task_regret(runs, acc, every, weighting) for name, acc in plain.items()}
    chosen = min(top, key=lambda n: (round(top[n], 9), list(procs).index(n)))
    final = {"procedure": chosen, **procs[chosen](every), "plain_regret": top, "plain_accuracy": plain}
    return out, pd.DataFrame(folds), final




def evaluate_policies(runs: PolicyRuns, rankers: Sequence[str], reference: str = "ot", relevance: str = "source-anova",
                      weighting: str = "family", fixed_k_rule: str = "circular",
                      gate_margin: float | None = None) -> dict:
    """One adapter's runs, evaluated: the baselines by leave one family out (:func:`leave_one_family_out`),
    the ways of choosing a policy (:func:`policy_procedures`) by :func:`nested_family_out`, and the policy chosen
    on every family (``final["policy"]``: what the selector takes).

    Returns a mapping: ``runs``, ``procs``, ``outer`` (the outer folds), ``final``, ``baseline_folds``,
    ``fixed`` (the fixed policies' names), ``regret`` (per task: the nested choice's regret in
    :data:`RECOMMENDATION`, each baseline's and each fixed policy's), ``best_fixed`` and ``tasks`` (the runs'
    tasks beside their regrets). Fewer than three families is an error."""
    if gate_margin is not None and not gate_margin >= 0:
        raise ValueError(f"gate_margin: a number of points >= 0 or None, got {gate_margin!r}")
    per_run, baseline_folds = leave_one_family_out(runs, rankers, reference, relevance, weighting)
    fixed = fixed_policy_names(runs, fixed_k_rule)
    procs = policy_procedures(runs, fixed, gate_margin, weighting)
    nested_acc, outer, final = nested_family_out(runs, procs, weighting)
    per_run[RECOMMENDATION] = nested_acc
    for name in fixed:
        per_run[name] = runs.column(name)
    regret = pd.DataFrame({c: runs.task_means(runs.regret(per_run[c].to_numpy())) for c in per_run.columns})
    best_fixed = min(fixed, key=lambda n: float(regret[n].mean()))
    regret[BEST_FIXED] = regret[best_fixed]
    tasks = pd.concat([runs.tasks.reset_index(drop=True), regret], axis=1)
    tasks.insert(tasks.columns.get_loc("adapter") + 1, "metric",
                 tasks["feature_set"].map(runs.metric))
    return {"runs": runs, "procs": procs, "outer": outer, "final": final, "baseline_folds": baseline_folds,
            "fixed": fixed, "regret": regret, "best_fixed": best_fixed, "tasks": tasks}

