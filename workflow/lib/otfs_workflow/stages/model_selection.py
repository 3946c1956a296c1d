"""Stage ``model_selection``: the number of features each label-free rule picks, and what that choice costs.

Two steps (:mod:`otfs.k_selection._base` explains the rules):

- :func:`run_pair`, one job per (feature set, ranker, pair): for every
  adapter, iteration and number of features of the grid, the adapted
  domains, the paper's 1-NN target accuracy on them (and a second
  classifier's, ``second_classifier``), each scorer rule's score and each
  data rule's choice; one TSV row per (adapter, iteration, number of
  features). An ensemble rule (EnsV) scores a candidate against the others:
  its rows keep the scorers' classifier's target probabilities
  (``target_proba``, :func:`otfs.k_selection.encode_proba`), and
  :func:`otfs.k_selection.with_ensemble_scores`
  computes its column where the candidates are gathered (a run's grid in
  :func:`choices`; every (ranker, k) of a task in the recommendation);
- :func:`report`, one job: each rule's k* per (dataset, pair, ranker,
  adapter, iteration), the target accuracy there, its regret against the
  oracle (best k in hindsight) and its gain over all features; summaries per
  dataset and ranker x adapter, and pooled over the rankers; the regret
  figure; provenance.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.io import atomic_path, read_json, read_tsv, write_csv, write_json, write_text, write_tsv
from otfs_workflow.protocol import derive_seed, read_iterations, resolve_feature_counts

__all__ = ["choices", "data_choices", "report", "run_pair", "run_pair_all_features", "summarise"]

#: The keys of one run: a (dataset, pair, ranker, adapter, iteration).
RUN = ["feature_set", "pair", "ranker", "adapter", "iteration"]


def data_choices(data_rules: Mapping, Xs, Xt, counts) -> dict:
    """Each data rule's k* on the two domains and what the choice rests on, as the columns ``<rule>:k`` and
    ``<rule>:<key>`` of the per-pair tables (and of a regression family's long rows)."""
    out = {}
    for name, rule in data_rules.items():
        k, info = rule.choose_count(Xs, Xt, counts)
        out[f"{name}:k"] = int(k)
        out.update({f"{name}:{key}": v for key, v in info.items()})
    return out


def run_pair(caches: Mapping[str, str], ranking_path, adapters: Mapping[str, Mapping | None],
             rules: Mapping[str, Mapping | None], counts, classifier, n_splits: int, test_size: float,
             output, iterations: int | None = None, shared: dict | None = None, ends=None,
             second_classifier=None) -> pd.DataFrame:
    """Score every (adapter, iteration, number of features) of one ranking; write one TSV.

    Parameters
    ----------
    caches : the domains' HDF5 caches
    ranking_path : the ranking stage's JSON of this (feature set, ranker, pair)
    adapters : adapter name -> hyper-parameters (None: its defaults)
    rules : selection-rule name -> parameters; the oracle rules need nothing here
    counts : the grid's numbers of features (integers or fractions such as ``"d/4"``)
    classifier : the probabilistic classifier of the scorers (a name or ``{"name": ..., **params}``)
    n_splits, test_size : the validation splits of the scorers
    output : the TSV
    second_classifier : a classifier spec (:func:`otfs.classification.make_classifier`) or None
        Fitted on each point's adapted source and scored on its target beside the 1-NN
        (:func:`otfs.classification.second_classifier_scores`: ``second_accuracy``,
        ``second_balanced_accuracy``, ``second_auc``).
    iterations : only the first so many iterations of the ranking (all by default)
    shared : a dict kept across calls on the same pair (several rankers in one job, rule run_family_pair): the
        data rules' choices, which depend on the iteration's source subset and the target alone, are computed
        once per subset, and so is the point of all ``d`` features; an adaptation the curves kept there (their
        ``reuse``) is taken instead of computed again
    ends : the TSV of :func:`run_pair_all_features` for this pair (rule score_model_selection_all_features): its
        rows of all ``d`` features, computed once for every ranker, are taken where their source subset is this
        ranking's, and so are the data rules' choices they record (the same subset and target: the same
        numbers, in the file's decimals, which are what this job writes); a file of other settings is an error
        naming it

    The point of all ``d`` features is computed on the features in the data's order, as the curves' (the
    leaderboard's :func:`otfs_workflow.stages.classification.run_all_features`, and
    :func:`~otfs_workflow.stages.classification.run_adapters` with ``shared``): the same accuracies.
    """
    from otfs_workflow.stages.classification import KeptAdaptations, second_key

    rank = read_json(ranking_path)
    scoring = _Scoring(caches, rank["source"], rank["target"], adapters, rules, counts, classifier, n_splits,
                       test_size, second_classifier)
    cache, src, tgt, counts = scoring.cache, scoring.src, scoring.tgt, scoring.counts
    d = cache.n_features
    if ends is not None:
        shared = {} if shared is None else shared
        _take_ends(ends, rank, scoring, shared)
    rows = []
    # the points' columns are gathered from column-major copies: the same arrays as from the cache's, faster
    Xt_columns = np.asfortranarray(tgt.X)
    for r_it in read_iterations(rank, ranking_path, iterations):
        it = r_it["iteration"]
        subset = r_it["source_subset"]
        Xs, ys = src.X[subset], src.y[subset]
        Xs_columns = np.asfortranarray(Xs)
        order = np.asarray(r_it["orders"]["Descending"])
        seed = derive_seed(rank["feature_set"], rank["pair"], it, "model_selection")
        memo = scoring.data_key(rank["feature_set"], rank["pair"], _digest(subset))
        data_choice = None if shared is None else shared.get(memo)
        if data_choice is None:
            data_choice = data_choices(scoring.data_rules, Xs, tgt.X, counts)
            if shared is not None:
                shared[memo] = data_choice
        for adapter in adapters:
            for n in counts:
                end = None
                if shared is not None and n == d:  # every ranker's all-features point: the same
                    end = scoring.end_key(rank["feature_set"], rank["pair"], adapter, seed, _digest(subset))
                    if end in shared:
                        rows.append({**shared[end], "iteration": it})
                        continue
                # all d features in the data's order, as the leaderboard's point of all features
                # (classification.run_all_features): a ranker's order would only permute the columns
                cols = np.arange(n) if n == d else order[:n]
                Xs_n, Xt_n = Xs_columns[:, cols], Xt_columns[:, cols]
                kept = None if shared is None else KeptAdaptations(shared).take(adapter, adapters[adapter], Xs_n,
                                                                                 ys, Xt_n)
                second = None
                if shared is not None and scoring.settings["second_classifier"] is not None:
                    second = shared.get(second_key(rank["feature_set"], rank["pair"], adapter, adapters[adapter],
                                                   scoring.settings["second_classifier"], subset, cols))
                row = {"iteration": it, **scoring.point(adapter, Xs_n, ys, Xt_n, n, seed, kept, second)}
                row.update(data_choice)
                rows.append(row)
                if end is not None:
                    shared[end] = row
    df = pd.DataFrame(rows)
    for key in ("feature_set", "pair", "source", "target", "ranker"):
        df.insert(0, key, rank[key])
    df.insert(0, "d", cache.n_features)
    write_tsv(df, output)
    return df


def run_pair_all_features(caches: Mapping[str, str], feature_set: str, pair: str,
                          adapters: Mapping[str, Mapping | None], rules: Mapping[str, Mapping | None], counts,
                          classifier, n_splits: int, test_size: float, iterations: Sequence[int], per_class,
                          output, second_classifier=None) -> pd.DataFrame:
    """:func:`run_pair`'s rows of all ``d`` features, once for every ranker of the pair; write one TSV.

    With all the features a ranker's order only permutes the columns, and :func:`run_pair` computes this point
    on the data's order: each iteration's row (adaptation, 1-NN accuracy, the scorers' scores, the data rules'
    choices) is the same for every ranker. The source subsets are the ranking job's
    (:func:`otfs_workflow.protocol.iteration_source_subset`); each row records its subset's digest and a
    fingerprint of the settings, which :func:`run_pair` (``ends``) checks.
    """
    from otfs_workflow.protocol import iteration_source_subset, parse_pair
    from otfs_workflow.stages import source_classes

    source, target = parse_pair(pair)
    scoring = _Scoring(caches, source, target, adapters, rules, counts, classifier, n_splits, test_size,
                       second_classifier)
    cache, src, tgt, counts = scoring.cache, scoring.src, scoring.tgt, scoring.counts
    d = cache.n_features
    classes = source_classes(cache, pair, selection=False)
    rows = []
    for it in iterations:
        subset, _ = iteration_source_subset(feature_set, pair, it, src.y, per_class, classes=classes,
                                            class_names=cache.class_names)
        Xs, ys = src.X[subset], src.y[subset]
        seed = derive_seed(feature_set, pair, it, "model_selection")
        data_choice = data_choices(scoring.data_rules, Xs, tgt.X, counts)
        for adapter in adapters:
            row = {"iteration": int(it), **scoring.point(adapter, Xs, ys, tgt.X, d, seed, None), **data_choice,
                   "subset_digest": _digest(subset), "settings": scoring.fingerprint(adapter)}
            rows.append(row)
    df = pd.DataFrame(rows)
    df.insert(0, "pair", pair)
    df.insert(0, "feature_set", feature_set)
    write_tsv(df, output)
    return df


def _digest(subset) -> str:
    import hashlib

    return hashlib.blake2b(np.asarray(subset, dtype=np.int64).tobytes(), digest_size=16).hexdigest()


class _Scoring:
    """What :func:`run_pair` and :func:`run_pair_all_features` compute one point with: the pair's domains, the
    built rules, scorers, classifier and adapters, and the settings of the point."""

    def __init__(self, caches, source, target, adapters, rules, counts, classifier, n_splits, test_size,
                 second_classifier=None):
        from otfs.adapters import get_adapter
        from otfs.classification import make_classifier
        from otfs.k_selection._base import get_rule
        from otfs_workflow.data.cache import read_domains

        self.cache = read_domains({d: caches[d] for d in (source, target)})
        self.src, self.tgt = self.cache.domain(source), self.cache.domain(target)
        self.counts = sorted(set(resolve_feature_counts(counts, self.cache.n_features)))
        if self.counts[-1] != self.cache.n_features:
            raise ValueError(f"the grid's numbers of features {self.counts} must include d = "
                             f"{self.cache.n_features}: the rules are compared with all features")
        built = {name: get_rule(name, **(params or {})) for name, params in rules.items()}
        self.scorers = {n: r for n, r in built.items() if r.kind == "scorer"}
        self.data_rules = {n: r for n, r in built.items() if r.kind == "data"}
        self.clf = make_classifier(classifier)
        self.adapters = {name: get_adapter(name, **(params or {})) for name, params in adapters.items()}
        for adapter, ad in self.adapters.items():
            if getattr(ad, "predicts_labels", False):
                raise ValueError(f"model_selection.adapters: {adapter!r} predicts labels without adapted samples;"
                                 " the label-free scorers need adapted samples (an adapter whose adapt returns them)")
        self.settings = {"adapters": dict(adapters), "rules": rules, "classifier": classifier,
                         "n_splits": n_splits, "test_size": test_size, "second_classifier": second_classifier}
        self.ensemble = any(getattr(r, "ensemble", False) for r in self.scorers.values())

    def point(self, adapter: str, Xs, ys, Xt, n: int, seed: int, kept, second=None) -> dict:
        """One row's numbers: ``Xs``, ``Xt`` are the point's columns; ``kept``: the curves' adaptation of them;
        ``second``: the curves' scores of the second classifier on the same adapted samples (rule
        run_family_pair), taken instead of fitting it again."""
        from otfs.classification import one_nn_accuracies, second_classifier_scores
        from otfs.k_selection._base import encode_proba, score_adapted
        from otfs_workflow.stages.classification import SECOND_COLUMNS

        if kept is None:
            start = time.perf_counter()
            Zs, Zt = self.adapters[adapter].adapt(Xs, ys, Xt)
            seconds = time.perf_counter() - start
        else:  # the curves' adaptation of the same samples (rule run_family_pair)
            Zs, Zt, seconds = kept
        row = {"adapter": adapter, "n_features": n, **one_nn_accuracies(Zs, ys, Zt, self.tgt.y), "seconds": seconds}
        if second is not None:
            row.update({c: second[c] for c in SECOND_COLUMNS})
        elif self.settings["second_classifier"] is not None:
            row.update(second_classifier_scores(self.settings["second_classifier"], Zs, ys, Zt, self.tgt.y))
        if self.scorers:
            start = time.perf_counter()
            proba = [] if self.ensemble else None
            scored = score_adapted(Zs, ys, Zt, self.scorers, self.clf, self.settings["n_splits"],
                                   self.settings["test_size"], seed, target_proba=proba)
            row["scoring_seconds"] = time.perf_counter() - start
            for name, rec in scored.items():
                row.update({f"{name}:{key}": v for key, v in rec.items()})
            if proba:
                row["target_proba"] = encode_proba(proba[0])
        return row

    def fingerprint(self, adapter: str) -> str:
        """A digest of everything an all-features row of ``adapter`` depends on besides the data and the seed."""
        import hashlib

        s = self.settings
        text = repr((adapter, repr(s["adapters"][adapter]), repr(s["rules"]), repr(s["classifier"]), s["n_splits"],
                     s["test_size"], tuple(self.counts), repr(s["second_classifier"])))
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    def end_key(self, feature_set: str, pair: str, adapter: str, seed: int, digest: str) -> tuple:
        """The ``shared`` key of the all-features row of one (pair, adapter, settings, seed, source subset's
        :func:`_digest`)."""
        return ("all features", feature_set, pair, adapter, self.fingerprint(adapter), seed, digest)

    def data_key(self, feature_set: str, pair: str, digest: str) -> tuple:
        """The ``shared`` key of the data rules' choices on one (pair, source subset's :func:`_digest`): they
        depend on the rules, the grid and the two domains' samples, not on the ranker or the adapter."""
        return ("data rules", feature_set, pair, repr(self.settings["rules"]), tuple(self.counts), digest)


def _take_ends(path, rank: Mapping, scoring: _Scoring, shared: dict) -> None:
    """Put the rows of :func:`run_pair_all_features`'s file ``path`` into ``shared``; an error naming the file where
    it is of another pair or of other settings."""
    ends = read_tsv(path)
    where = set(zip(ends["feature_set"], ends["pair"]))
    if where != {(rank["feature_set"], rank["pair"])}:
        raise ValueError(f"{path}: the all-features rows of {sorted(where)}, read for "
                         f"{rank['feature_set']}/{rank['pair']}")
    data_columns = _data_columns(ends.columns, scoring)
    for adapter in scoring.adapters:
        held = ends[ends["adapter"] == adapter]
        if held.empty or set(held["settings"]) != {scoring.fingerprint(adapter)}:
            raise ValueError(f"{path}: no all-features rows of the adapter {adapter!r} with this job's settings "
                             "(adapters' parameters, rules, classifier, splits, numbers of features): the file is stale")
        for rec in held.drop(columns=["feature_set", "pair", "settings"]).to_dict("records"):
            digest = rec.pop("subset_digest")
            seed = derive_seed(rank["feature_set"], rank["pair"], int(rec["iteration"]), "model_selection")
            shared[scoring.end_key(rank["feature_set"], rank["pair"], adapter, seed, digest)] = rec
            if data_columns is not None:  # the same on every adapter's row of the subset
                shared.setdefault(scoring.data_key(rank["feature_set"], rank["pair"], digest),
                                  {c: rec[c] for c in data_columns})


def _data_columns(columns, scoring: _Scoring) -> list | None:
    """The columns of the data rules' choices among an all-features file's ``columns`` (:func:`data_choices`
    names them ``<rule>:<key>``), or None where a column could be another rule's too (a scorer's name
    followed by a colon starts it) or a rule has no ``<rule>:k``: then the choices are computed again."""
    data, scorers = tuple(f"{n}:" for n in scoring.data_rules), tuple(f"{n}:" for n in scoring.scorers)
    cols = [c for c in columns if c.startswith(data)]
    if any(c.startswith(scorers) for c in cols) or any(f"{n}:k" not in cols for n in scoring.data_rules):
        return None
    return cols


def choices(long: pd.DataFrame, rules: Mapping[str, Mapping | None]) -> pd.DataFrame:
    """Each rule's k* per run, with the target accuracy there, the oracle's and all features'.

    One row per (run, rule): ``k``, ``fraction`` (k / d), ``accuracy``,
    ``oracle_accuracy``, ``all_accuracy``, ``regret`` (oracle minus
    accuracy, in points) and ``gain`` (accuracy minus all features'), and
    ``reads_target_labels``. An ensemble rule's ensemble is the run's grid
    (the ranker's numbers of features).
    """
    from otfs.k_selection import choose_k, get_rule, with_ensemble_scores

    built = {name: get_rule(name, **(params or {})) for name, params in rules.items()}
    missing = [n for n in ("oracle", "all-features") if n not in built]
    if missing:
        raise ValueError(f"the rules must include the references {missing}: regret and gain are measured against them")
    out = []
    for key, group in long.groupby(RUN, sort=False):
        group = with_ensemble_scores(group.sort_values("n_features"), built, where=f"run {dict(zip(RUN, key))}")
        counts, acc = group["n_features"].to_numpy(), group["accuracy"].to_numpy()
        if counts[-1] != group["d"].iloc[0]:
            raise ValueError(f"run {dict(zip(RUN, key))}: the largest number of features {counts[-1]} is not d")
        by_k = dict(zip(counts.tolist(), acc.tolist()))
        oracle, everything = by_k[choose_k(counts, acc)], by_k[int(counts[-1])]
        for name, rule in built.items():
            if rule.kind == "scorer":
                col = f"{name}:score"
                if col not in group:
                    raise ValueError(f"no scores of the rule {name!r} in the per-pair tables (column {col!r})")
                k = choose_k(counts, group[col].to_numpy())
            elif rule.kind == "data":
                k = int(group[f"{name}:k"].iloc[0])
            else:
                k = rule.choose_from(counts, acc)
            out.append({**dict(zip(RUN, key)), "dataset": key[0], "rule": name, "kind": rule.kind,
                        "reads_target_labels": rule.reads_target_labels, "k": k, "d": int(counts[-1]),
                        "fraction": k / counts[-1], "accuracy": by_k[k], "oracle_accuracy": oracle,
                        "all_accuracy": everything, "regret": oracle - by_k[k], "gain": by_k[k] - everything})
    return pd.DataFrame(out)


def summarise(chosen: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Means over runs of each rule: accuracy at k*, oracle's, all features', regret, gain, how often the
    rule beats / ties / loses to all features, and the mean fraction of features kept."""
    g = chosen.groupby([*by, "rule"], sort=False)
    out = g.agg(runs=("accuracy", "size"), fraction=("fraction", "mean"), accuracy=("accuracy", "mean"),
                oracle_accuracy=("oracle_accuracy", "mean"), all_accuracy=("all_accuracy", "mean"),
                regret=("regret", "mean"), gain=("gain", "mean"),
                beats_all=("gain", lambda s: float(np.mean(s > 0))),
                ties_all=("gain", lambda s: float(np.mean(s == 0))),
                loses_all=("gain", lambda s: float(np.mean(s < 0))))
    return out.reset_index()


def report(pair_tables: Sequence[str], rules: Mapping[str, Mapping | None], provenance: Mapping,
           outputs: Mapping[str, str], caption: str) -> dict:
    """Write the choices (Parquet), the summaries (CSV, Markdown), the regret figure and the provenance.

    ``outputs`` keys: ``choices`` (Parquet), ``summary_csv``/``summary_md`` (per dataset, ranker,
    adapter and rule), ``table_csv``/``table_md`` (per dataset and adapter, pooled over the rankers, and
    over every dataset as ``all``), ``regret_pdf``/``regret_png``, ``provenance``.
    """
    import json

    long = pd.concat([read_tsv(p) for p in pair_tables], ignore_index=True)
    chosen = choices(long, rules)
    for col, value in (("versions", json.dumps(provenance["versions"], sort_keys=True)),
                       ("git_commit", provenance.get("git_commit", "unknown"))):
        chosen[col] = value
    with atomic_path(outputs["choices"]) as tmp:
        chosen.to_parquet(tmp, index=False)
    summary = summarise(chosen, ["dataset", "ranker", "adapter"])
    pooled = pd.concat([summarise(chosen, ["dataset", "adapter"]),
                        summarise(chosen.assign(dataset="all"), ["dataset", "adapter"])], ignore_index=True)
    for key, df, text in (("summary", summary, "per dataset, ranker and adapter"),
                          ("table", pooled, "per dataset and adapter, pooled over the rankers")):
        write_csv(df, outputs[f"{key}_csv"], float_format="%.4g")
        write_text(outputs[f"{key}_md"], f"{caption} Means over runs, {text}; accuracy in %, regret and gain "
                   "in points.\n\n" + _markdown(df) + "\n")
    _regret_figure(chosen, outputs)
    write_json(outputs["provenance"], dict(provenance))
    return {"choices": chosen, "summary": summary, "table": pooled}


def _markdown(df: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |")
    return "\n".join(lines)


def _regret_figure(chosen: pd.DataFrame, outputs) -> None:
    """Mean regret (points below the oracle) of each rule, per dataset, one bar per adapter; whiskers: the
    standard error over runs."""
    from otfs_workflow.plotting import plt, save_outputs  # Agg, before any figure

    datasets = list(dict.fromkeys(chosen["dataset"]))
    rules = [r for r in dict.fromkeys(chosen["rule"]) if r != "oracle"]
    adapters = list(dict.fromkeys(chosen["adapter"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(1.2 + 0.55 * len(rules) * len(datasets) + 1.5, 3.4),
                             squeeze=False, sharey=True)
    width = 0.8 / len(adapters)
    for ax, ds in zip(axes[0], datasets):
        sub = chosen[chosen["dataset"] == ds]
        for j, adapter in enumerate(adapters):
            stats = sub[sub["adapter"] == adapter].groupby("rule")["regret"].agg(["mean", "sem"]).reindex(rules)
            ax.bar(np.arange(len(rules)) + (j - (len(adapters) - 1) / 2) * width, stats["mean"], width,
                   yerr=stats["sem"].fillna(0), label=adapter, capsize=2)
        ax.set_xticks(np.arange(len(rules)), rules, rotation=45, ha="right")
        ax.set_title(ds)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("regret vs oracle k (accuracy points)")
    axes[0][-1].legend(title="adapter", fontsize=8)
    fig.tight_layout()
    save_outputs(fig, {"pdf": outputs["regret_pdf"], "png": outputs["regret_png"]},
                 "Label-free choice of the number of features: regret against the oracle")
