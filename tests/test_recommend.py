"""The recommendation's meta-evaluation (otfs.k_selection's policy learning and otfs_workflow.stages.recommend)
on made-up rows of the choice of k.

Leave one family out is checked where it could leak (a family's own rows never reach its policy), the regrets
against hand computations, the statistics against SciPy's and statsmodels' own calls.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from otfs.k_selection import PolicyRuns, data_profile, fixed_policy_names, learn_policy, most_similar_family, switch_policy
from otfs.k_selection._policy_learning import _switch_accuracy
from otfs_workflow.io import read_parquet, write_parquet
from otfs_workflow.stages import recommend

RANKERS = ["ot", "source-anova"]
SCORERS = ["IW", "circular"]
DATA = ["shift-test"]
OUTPUTS = ("csv", "tasks", "md", "pdf", "png", "signals", "signals_png", "signals_pdf", "policy", "provenance")


def _rows(best: dict[str, str], noise=None, seed=0) -> pd.DataFrame:
    """Three families of two tasks each, 2 iterations, k in (2, 4, 8): in each family ``best[family]`` is the
    better ranker, at k = 4; IW's score is the accuracy (a perfect scorer), circular's its opposite."""
    rng, noise_rng = np.random.default_rng(seed), np.random.default_rng(seed + 1)  # noise apart: same accuracies
    rows = []
    for family, winner in best.items():
        for task in range(2):
            for it in range(2):
                for ranker in RANKERS:
                    for k in (2, 4, 8):
                        acc = 60.0 + (10 if ranker == winner else 0) * (k == 4) + rng.integers(0, 3)
                        if k == 8:
                            acc = 55.0  # all features: the same for both rankers
                        iw = acc / 100 if noise is None or family not in noise else noise_rng.random()
                        rows.append({"d": 8, "ranker": ranker, "pair": f"s{task}-t{task}", "feature_set": family,
                                     "iteration": it, "adapter": "NA", "n_features": k, "accuracy": acc,
                                     "IW:score": iw, "circular:score": -acc, "shift-test:k": 4,
                                     "shift-test:unshifted": 5 if family == "A" else 2})
    return pd.DataFrame(rows)


def _evaluate(tmp_path, long: pd.DataFrame, margin=0.25, metrics=None, **kw):
    """The evaluation of ``long`` as the pipeline runs it: one task summary per (feature set, pair), written and
    read back as Parquet, then the evaluation of them all."""
    families = {f: f for f in set(long["feature_set"])}
    pair = (kw.get("reference", "ot"), kw.get("relevance", "source-anova"))
    summaries = []
    for (fs, pair_name), part in long.groupby(["feature_set", "pair"]):
        path = tmp_path / f"{fs}_{pair_name}.parquet"
        write_parquet(recommend.task_summary(part, families, RANKERS, SCORERS, DATA, pair, metrics), path)
        summaries.append(read_parquet(path))
    outputs = {k: str(tmp_path / f"out.{k}") for k in OUTPUTS}
    res = recommend.evaluate(summaries, families, RANKERS, SCORERS, DATA, margin, 0.05, {"git_commit": "test"},
                             outputs, **kw)
    return res, outputs


def test_regrets_against_a_hand_computation(tmp_path):
    long = _rows({"A": "ot", "B": "source-anova", "C": "source-anova"})
    res, outputs = _evaluate(tmp_path, long)
    tasks = res["tasks"].set_index(["feature_set", "pair"])
    # IW is a perfect scorer: on any two families the ways that learn it (the switch to IW, the least regret) have
    # no regret, the fixed policies some: the nested choice takes one of them, and loses nothing on any task
    assert set(res["folds"]["procedure"]) <= {"switch", "least regret"}
    assert (tasks["recommendation"] == 0).all()
    assert res["policies"]["NA"]["nested_regret"] == 0
    # by hand: the oracle is the best (ranker, k)'s mean over the two iterations; always OT at its best k rule
    # (IW: no regret on OT's own k) loses, on B and C, what OT's best k lacks of source ANOVA's
    for (fs, pair), row in tasks.iterrows():
        part = long[(long["feature_set"] == fs) & (long["pair"] == pair)]
        means = part.groupby(["ranker", "n_features"])["accuracy"].mean()
        oracle = means.max()
        ot_best = part[part["ranker"] == "ot"].groupby("iteration")["accuracy"].max().mean()
        assert row["always OT"] == pytest.approx(oracle - ot_best)
        assert row["all features"] == pytest.approx(oracle - 55.0)
    # the outputs: the comparisons, a page that says which goals are met, a figure, the policy with provenance
    table = pd.read_csv(outputs["csv"])
    assert set(table["scope"]) == {"A", "B", "C", recommend.POOLED}
    for key in ("pdf", "signals_pdf"):  # no creation date: a rerun writes the same bytes
        pdf = open(outputs[key], "rb").read()
        assert pdf.startswith(b"%PDF") and b"/CreationDate" not in pdf, key
    assert set(table["versus"]) == {*recommend.BASELINES, recommend.BEST_FIXED}
    md = open(outputs["md"]).read()
    # each fixed policy loses somewhere (the best-on-average ranker, learned on B and C, on A), IW nowhere
    shipped = json.load(open(outputs["policy"]))
    # the shipped policy, read by the library, picks IW's best candidate on every run
    from otfs.k_selection import choose_candidate
    from otfs.k_selection._label_free import check_policy

    policy = check_policy(shipped["policies"]["NA"])
    for _, run in long.groupby(["feature_set", "pair", "iteration"]):
        table = run.sort_values(["ranker", "n_features"]).rename(columns={"n_features": "k"}).reset_index(drop=True)
        assert (table["accuracy"].iloc[choose_candidate(table, policy, {"unshifted_fraction": 0.5})]
                == table["accuracy"].iloc[choose_candidate(table, {"kind": "scorer", "rule": "IW"})])
    assert shipped["provenance"]["git_commit"] == "test"
    assert "Never worse than the simplest rule: nested regret at most the best fixed policy's, pooled: **met**" in md
    signals = pd.read_csv(outputs["signals"]).set_index(["scorer", "scope"])
    # IW's score is the accuracy: a within-task Spearman of 1; circular's its opposite: -1
    assert signals.loc[("IW", recommend.POOLED), "spearman"] == pytest.approx(1.0)
    assert signals.loc[("circular", recommend.POOLED), "spearman"] == pytest.approx(-1.0)
    assert signals.loc[("IW", recommend.POOLED), "within_1_point"] == 1.0
    assert open(outputs["png"], "rb").read().startswith(b"\x89PNG")


def test_a_familys_own_rows_never_reach_its_policy(tmp_path):
    # family A's IW scores made random: A's fold learns on B and C alone, so its policy does not move, while the
    # policy learned on every family does
    clean, _ = _evaluate(tmp_path / "clean", _mkdir(tmp_path / "clean", _rows({"A": "ot", "B": "ot", "C": "ot"})))
    noisy_rows = _rows({"A": "ot", "B": "ot", "C": "ot"}, noise={"A"})
    noisy, _ = _evaluate(tmp_path / "noisy", _mkdir(tmp_path / "noisy", noisy_rows))
    fold = lambda res, f: res["folds"].set_index("family").loc[f]  # noqa: E731
    same = ["procedure", "policy", "train_regret", *[c for c in clean["folds"] if c.startswith("inner: ")]]
    pd.testing.assert_series_equal(fold(clean, "A")[same], fold(noisy, "A")[same])
    # A's rows do reach the other folds: B's training (on A and C) sees IW's noise, and so does the nested figure
    inner = [c for c in same if c.startswith("inner: ")]
    assert not fold(clean, "B")[inner].equals(fold(noisy, "B")[inner])
    assert clean["policies"]["NA"]["nested_regret"] == 0 < noisy["policies"]["NA"]["nested_regret"]


def _mkdir(path, long):
    path.mkdir(parents=True, exist_ok=True)
    return long


def test_a_gate_is_learned_where_the_families_split_by_their_shift(tmp_path):
    # A (5 of 8 features unshifted) wants OT, B and C (2 of 8) source ANOVA, and IW is no help (its opposite):
    # on every family together the gate on the share of unshifted features beats every single policy
    long = _rows({"A": "ot", "B": "source-anova", "C": "source-anova"})
    long["IW:score"] = -long["accuracy"]
    runs = PolicyRuns.from_long(long, {f: f for f in "ABC"}, RANKERS, SCORERS, DATA)
    learned = learn_policy(runs, np.ones(len(runs.runs), dtype=bool), gate_margin=0.25)
    assert learned["policy"]["kind"] == "gate" and learned["train_regret"] < 1.5
    assert learned["policy"]["below"]["ranker"] == "source-anova" and learned["policy"]["above"]["ranker"] == "ot"
    assert 0.25 < learned["policy"]["threshold"] <= 0.625
    # a margin larger than the gain keeps the best single policy
    single = learn_policy(runs, np.ones(len(runs.runs), dtype=bool), gate_margin=100)
    assert single["policy"]["kind"] != "gate"


def test_the_statistics_are_scipys_and_statsmodels():
    from scipy.stats import wilcoxon
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(1)
    tasks = pd.DataFrame({name: rng.random(12) * 3 for name in (recommend.RECOMMENDATION, *recommend.BASELINES)})
    out = recommend.compare(tasks, "x").set_index("versus")
    ps = [wilcoxon(tasks[recommend.RECOMMENDATION] - tasks[b]).pvalue for b in recommend.BASELINES]
    np.testing.assert_allclose(out.loc[list(recommend.BASELINES), "p"], ps)
    np.testing.assert_allclose(out.loc[list(recommend.BASELINES), "p_holm"], multipletests(ps, method="holm")[1])
    diff = tasks[recommend.RECOMMENDATION] - tasks["all features"]
    assert out.loc["all features", "wins"] == (diff < 0).sum() and out.loc["all features", "losses"] == (diff > 0).sum()


def test_rows_of_a_missing_ranker_or_an_unknown_feature_set_are_errors():
    long = _rows({"A": "ot", "B": "ot"})
    with pytest.raises(ValueError, match="belong to no family"):
        PolicyRuns.from_long(long, {"A": "A"}, RANKERS, SCORERS, DATA)
    with pytest.raises(ValueError, match=r"rows of the rankers \['ot'\], the candidates are \['ot', 'source-anova'\]"):
        PolicyRuns.from_long(long[long["ranker"] == "ot"].assign(), {"A": "A", "B": "B"}, RANKERS, SCORERS, DATA)


def _tables(long):
    for key, run in long.groupby(["feature_set", "pair", "adapter", "iteration"]):
        order = {r: i for i, r in enumerate(RANKERS)}
        yield key, (run.assign(_o=run["ranker"].map(order)).sort_values(["_o", "n_features"])
                    .rename(columns={"n_features": "k"}).reset_index(drop=True))


def test_the_evaluations_switch_is_the_librarys():
    # random scores: every (default, scorer, margin) of the evaluation's vectorised switch picks, run by run, the
    # accuracy the library's switch policy picks on that run's candidates
    from otfs.k_selection import choose_candidate

    rng = np.random.default_rng(3)
    long = _rows({"A": "ot", "B": "source-anova", "C": "ot"})
    long["IW:score"] = rng.random(len(long))
    long["circular:score"] = rng.random(len(long))
    runs = PolicyRuns.from_long(long, {f: f for f in "ABC"}, RANKERS, SCORERS, DATA)
    tables = dict(_tables(long))
    keys = list(zip(runs.runs["feature_set"], runs.runs["pair"], runs.runs["adapter"], runs.runs["iteration"]))
    for default in fixed_policy_names(runs, "circular"):
        for rule in SCORERS:
            for margin in (0.0, 0.1, 0.3, 2.0):
                acc = _switch_accuracy(runs, default, rule, margin)
                policy = switch_policy(runs, default, rule, margin)
                expect = [tables[k]["accuracy"].iloc[choose_candidate(tables[k], policy)] for k in keys]
                np.testing.assert_array_equal(acc, expect)


def test_the_nested_choice_keeps_a_fixed_policy_where_learning_does_not_transfer(tmp_path):
    # four families; in each one scorer is perfect and the other picks the worst candidate, and which one changes
    # from family to family: on any three families a scorer looks good in sample, and fails on the fourth.
    # All features loses 3 points everywhere: the nested choice keeps it, and its regret is all features'.
    rows = []
    for f, good in zip("ABCD", ("IW", "IW", "circular", "circular")):
        for it in range(2):
            for ranker in RANKERS:
                for k in (2, 4, 8):
                    acc = {2: 50.0, 4: 70.0 if ranker == "ot" else 40.0, 8: 67.0}[k] + it
                    perfect, worst = acc, -acc
                    rows.append({"d": 8, "ranker": ranker, "pair": "s-t", "feature_set": f, "iteration": it,
                                 "adapter": "NA", "n_features": k, "accuracy": acc,
                                 "IW:score": perfect if good == "IW" else worst,
                                 "circular:score": perfect if good == "circular" else worst,
                                 "shift-test:k": 2, "shift-test:unshifted": 4})
    long = pd.DataFrame(rows)
    res, outputs = _evaluate(tmp_path, long)
    tasks = res["tasks"]
    assert tasks["recommendation"].mean() <= tasks["all-features"].mean() + 1e-9
    # every outer fold: on its three other families, learning a scorer loses on the one left out of them
    assert (res["folds"]["procedure"] == "all-features").all()
    assert res["policies"]["NA"]["nested_regret"] == pytest.approx(3.0)
    assert (tasks["recommendation"] == tasks["all-features"]).all()


def test_each_family_is_judged_by_its_own_metric(tmp_path):
    long = _rows({"A": "ot", "B": "source-anova", "C": "ot"})
    long["balanced_accuracy"] = long["accuracy"] - 10 * (long["feature_set"] == "B")
    judged = recommend.judged_by(long, {f: f for f in "ABC"}, {"B": "balanced_accuracy", "C": "second_auc"})
    b = (judged["feature_set"] == "B").to_numpy()
    np.testing.assert_array_equal(judged.loc[b, "accuracy"], long.loc[b, "accuracy"] - 10)
    np.testing.assert_array_equal(judged.loc[~b, "accuracy"], long.loc[~b, "accuracy"])
    assert set(judged.loc[b, "metric"]) == {"balanced_accuracy"} and set(judged.loc[~b, "metric"]) == {"accuracy"}
    with pytest.raises(ValueError, match="family 'B' is judged by 'balanced_accuracy'.*which its choice-of-k rows lack"):
        recommend.judged_by(long.drop(columns="balanced_accuracy"), {f: f for f in "ABC"}, {"B": "balanced_accuracy"})
    res, _ = _evaluate(tmp_path, long, None, metrics={"B": "balanced_accuracy"})
    assert dict(zip(res["tasks"]["feature_set"], res["tasks"]["metric"])) == {"A": "accuracy", "B": "balanced_accuracy",
                                                                             "C": "accuracy"}


def test_a_pairs_recommendation_reads_every_draw_and_says_how_sure(tmp_path):
    # the selector on each of 3 draws of the protocol, by hand: the page's choice is the most frequent one, with
    # its share of the draws, and a random order that does as well is said plainly
    from otfs.k_selection import LabelFreeFeatureSelector
    from otfs.k_selection._label_free import canonical_row_order
    from otfs_workflow.data.cache import read_domains
    from otfs_workflow.protocol import derive_seed, iteration_source_subset

    from .conftest import toy_caches

    caches, _ = toy_caches(tmp_path, seed=2)
    params = {"rankers": ["ks", "random"], "adapter": "NA", "n_features_grid": ["d/4", "d/2"], "policy": "circular",
              "scorers": ["circular", "ATC"], "classifier": {"name": "knn", "n_neighbors": 5}, "n_splits": 2,
              "test_size": 0.5}
    outputs = {k: str(tmp_path / f"r.{k}") for k in ("json", "md", "pdf", "png")}
    rec = recommend.run_pair(caches, "toy", "src-tgt", 10, params, outputs, draws=3, evaluated=False)
    cache = read_domains(caches)
    src, tgt = cache.domain("src"), cache.domain("tgt")
    order = canonical_row_order(src.X, src.y)  # the draws are of the source's rows in their canonical order
    Xs, ys = src.X[order], src.y[order]
    by_hand = []
    for it in range(3):
        subset, _ = iteration_source_subset("toy", "src-tgt", it, ys, 10, class_names=cache.class_names)
        sel = LabelFreeFeatureSelector(**params, random_state=derive_seed("toy", "src-tgt", it, "recommend"))
        sel.fit(Xs[subset], ys[subset], X_target=tgt.X)
        by_hand.append((sel.ranker_, sel.k_))
    assert [(c["ranker"], c["k"]) for c in rec["draws"]["choices"]] == by_hand
    winner = max(set(by_hand), key=lambda c: (by_hand.count(c), -by_hand.index(c)))
    assert (rec["ranker"], rec["k"]) == winner and rec["draws"]["wins"] == by_hand.count(winner)
    assert b"/CreationDate" not in open(outputs["pdf"], "rb").read()
    md = open(outputs["md"]).read()
    assert f"wins on {by_hand.count(winner)} of the protocol's 3 source draws" in md
    assert "needs the benchmark's data" in md  # evaluated=False
    chosen = next(c for c in rec["candidates"] if c["chosen"])
    assert rec["how_sure"]["atc_target_accuracy"] == pytest.approx(chosen["ATC:score"], abs=1e-9)
    best_random = max(c["circular:score"] for c in rec["candidates"] if c["ranker"] == "random")
    ties = rec["ranker"] == "random" or best_random >= chosen["circular:score"]
    every = rec["k"] == cache.n_features  # every feature kept: no ranking plays a part, random's included
    assert rec["how_sure"]["all_features"] == every and ("Every feature is kept" in md) == every
    assert rec["how_sure"].get("random_ties_or_beats", False) == (ties and not every)
    assert ("No ranker beats a random order here" in md) == (ties and not every)
    with pytest.raises(ValueError, match="recommend draws: a positive number"):
        recommend.run_pair(caches, "toy", "src-tgt", 10, params, outputs, draws=0)


def test_a_pairs_recommendation_does_not_depend_on_the_order_of_the_rows(tmp_path):
    """The same raw data with the rows of each domain permuted, z-scored by the cache (whose sums then run in
    another order), give the same recommendation, draw by draw."""
    from otfs_workflow.data.cache import DomainData, write_cache

    from .conftest import shifted_domains

    Xs, ys, Xt, _, _ = shifted_domains(n_s=60, n_t=70, d=12, k=2, n_classes=3, seed=4)
    params = {"rankers": ["ks", "mmd", "random"], "adapter": "NA", "n_features_grid": ["d/4", "d/2"],
              "policy": "circular", "scorers": ["circular"], "classifier": {"name": "knn", "n_neighbors": 5},
              "n_splits": 2, "test_size": 0.5}
    answers = []
    for p in range(3):
        rng = np.random.default_rng(p)
        ps, pt = (np.arange(len(ys)), np.arange(len(Xt))) if p == 0 else (rng.permutation(len(ys)),
                                                                          rng.permutation(len(Xt)))
        folder = tmp_path / f"p{p}"
        folder.mkdir()
        caches = {}
        for dom, X, y in (("src", Xs[ps], ys[ps] + 1), ("tgt", Xt[pt], np.ones(len(pt), dtype=int))):
            caches[dom] = str(folder / f"{dom}.h5")
            write_cache(caches[dom], feature_set="toy", dataset="toy", domains={dom: DomainData(dom, X, y)},
                        class_names=["a", "b", "c"], preprocessing=["zscore"])
        outputs = {k: str(folder / f"r.{k}") for k in ("json", "md", "pdf", "png")}
        rec = recommend.run_pair(caches, "toy", "src-tgt", 10, params, outputs, draws=2, evaluated=False)
        answers.append(((rec["ranker"], rec["k"]), rec["draws"]["choices"]))
    assert answers[1] == answers[0] and answers[2] == answers[0]


def test_the_second_classifier_judges_the_same_procedure(tmp_path):
    """Rows with a second classifier's accuracy: the evaluation reruns the nested procedure on it and reports it
    beside the 1-NN's (evaluation.csv's classifier column, a sentence of evaluation.md); the same accuracies give
    the same regrets."""
    long = _rows({"A": "ot", "B": "source-anova", "C": "source-anova"})
    long = long.assign(second_accuracy=long["accuracy"] - 1.0)  # every candidate 1 point lower: the same regrets
    res, outputs = _evaluate(tmp_path, long)
    table = res["table"]
    first = table[(table["classifier"] == recommend.FIRST) & (table["scope"] == recommend.POOLED)]
    second = table[table["classifier"] == recommend.SECOND]
    assert set(second["scope"]) == {recommend.POOLED}
    pd.testing.assert_series_equal(first.set_index("versus")["versus_regret"],
                                   second.set_index("versus")["versus_regret"])
    assert "Judged by the second classifier" in open(outputs["md"]).read()
    # judged by a second classifier that disagrees with the 1-NN: the regrets are its own, by hand for all features
    other = long.assign(second_accuracy=200.0 - 2 * long["accuracy"] + long["iteration"])
    res2, _ = _evaluate(tmp_path, other)
    sec = res2["table"][res2["table"]["classifier"] == recommend.SECOND].set_index("versus")
    by_hand = []
    for _, task in other.groupby(["feature_set", "pair"]):
        means = task.groupby(["ranker", "n_features"])["second_accuracy"].mean()
        by_hand.append(means.max() - task[task["n_features"] == 8].groupby("iteration")["second_accuracy"].first().mean())
    assert sec.loc["all features", "versus_regret"] == pytest.approx(np.mean(by_hand))
    assert sec.loc["all features", "versus_regret"] != pytest.approx(
        first.set_index("versus").loc["all features", "versus_regret"])
    with pytest.raises(ValueError, match=r"the choice-of-k rows of \['A'\] lack the second classifier's accuracy"):
        _evaluate(tmp_path, long.assign(second_accuracy=np.where(long["feature_set"] == "A", np.nan,
                                                                 long["second_accuracy"])))


def test_ensv_is_scored_across_every_candidate_of_a_run(tmp_path):
    """EnsV in the evaluation: its score is computed from the rows' target probabilities over all (ranker, k) of
    a run (the all-features point once), as the library's rule computes it; rows without them are an error."""
    from otfs.k_selection import decode_proba, encode_proba, get_rule

    long = _rows({"A": "ot", "B": "source-anova", "C": "source-anova"})
    rng = np.random.default_rng(5)
    long["target_proba"] = [encode_proba(rng.dirichlet(np.ones(2), size=6)) for _ in range(len(long))]
    every = long["n_features"] == 8
    first_every = long[every].groupby(["feature_set", "pair", "iteration"])["target_proba"].transform("first")
    long.loc[every, "target_proba"] = first_every  # the all-features point: one model for both rankers
    runs = PolicyRuns.from_long(long, {f: f for f in "ABC"}, RANKERS, ["IW", "EnsV"], DATA)
    run = long[(long["feature_set"] == "B") & (long["pair"] == "s1-t1") & (long["iteration"] == 1)]
    run = run.sort_values(["ranker", "n_features"], key=lambda c: c.map({"ot": 0, "source-anova": 1}) if c.name ==
                          "ranker" else c)
    members = ~(run["n_features"] == 8).to_numpy() | ~run["n_features"].duplicated().to_numpy()
    expected = get_rule("EnsV").score_candidates([decode_proba(c) for c in run["target_proba"]], members)
    row = runs.runs.index[(runs.runs["feature_set"] == "B") & (runs.runs["pair"] == "s1-t1")
                          & (runs.runs["iteration"] == 1)][0]
    picked = runs.picked["EnsV"][row]
    pick = runs.names.index("scorer:EnsV") if "scorer:EnsV" in runs.names else None
    assert pick is not None and picked[pick] == expected.max()
    with pytest.raises(ValueError, match=r"B/s0-t0, adapter NA, iteration 0: the ensemble rule\(s\) \['EnsV'\]"):
        PolicyRuns.from_long(long.assign(target_proba=np.where(long["feature_set"] == "B", None, long["target_proba"])),
                       {f: f for f in "ABC"}, RANKERS, ["IW", "EnsV"], DATA)


def test_a_pair_page_names_the_family_most_like_it(tmp_path):
    """data_profile by hand (the share of values at their feature's most common value), the nearest family by
    log d, log n and sparsity, and pair_profile over two domains' caches."""
    from .conftest import toy_caches

    (tmp_path / "toy").mkdir()
    caches, (Xs, _, Xt, _) = toy_caches(tmp_path / "toy", seed=0)  # data/cache/<feature set>/<domain>.h5
    prof = recommend.pair_profile(*recommend.task_domains(caches, "src-tgt"))
    assert prof == data_profile([Xs, Xt]) | {"sparsity": pytest.approx(
        (data_profile([Xs])["sparsity"] * len(Xs) + data_profile([Xt])["sparsity"] * len(Xt))
        / (len(Xs) + len(Xt)))}
    with pytest.raises(ValueError, match=r"no cache of the domains \['x'\] of pair src-x"):
        recommend.task_domains(caches, "src-x")
    X = np.array([[0.0, 1.0], [0.0, 2.0], [3.0, 2.0], [0.0, 2.0]])
    # feature 0: three zeros of four; feature 1: three 2s of four: 6 of 8 values at their feature's mode
    assert data_profile([X]) == {"d": 2, "n": 4, "sparsity": 0.75}
    z = (X - X.mean(axis=0)) / X.std(axis=0)  # a z-score moves the zeros, keeps them equal
    assert data_profile([z])["sparsity"] == 0.75
    by_family = {"text": {"d": 5000, "n": 4000, "sparsity": 0.99, "nested_regret": 3.0, "tasks": 12},
                 "wine": {"d": 11, "n": 6000, "sparsity": 0.05, "nested_regret": 1.0, "tasks": 2},
                 "heart": {"d": 13, "n": 300, "sparsity": 0.3, "nested_regret": 9.0, "tasks": 12},
                 "bare": {"tasks": 1, "nested_regret": 0.0}}  # no profile: never the nearest
    assert most_similar_family({"d": 13, "n": 178, "sparsity": 0.1}, by_family)[0] == "heart"
    assert most_similar_family({"d": 4000, "n": 3000, "sparsity": 0.9}, by_family)[0] == "text"
    assert most_similar_family({"d": 4, "n": 4, "sparsity": 0.0}, {"bare": by_family["bare"]}) is None


def test_row_permutations_leave_the_recommendations_inputs_as_they_are(tmp_path, monkeypatch):
    """task_stability: every permutation of both domains gives the canonical inputs of the caches' order, and the
    check fails where the order is the rows' own (the selector reading them as they come)."""
    from otfs.k_selection import _label_free

    from .conftest import toy_caches

    (tmp_path / "toy").mkdir()
    caches, _ = toy_caches(tmp_path / "toy", seed=0)
    pairs = [("toy", "src-tgt"), ("toy", "tgt-src")]

    def table():
        return pd.DataFrame([recommend.task_stability(fs, p, *recommend.task_domains(caches, p), 4) for fs, p in pairs])

    stable = table()
    assert stable[["feature_set", "pair"]].apply(tuple, axis=1).tolist() == pairs
    assert stable["same_answer"].tolist() == [4, 4] and stable["permutation_share"].tolist() == [1.0, 1.0]
    lines = "\n".join(recommend._stability_lines(stable, {"toy": "toys"}))
    assert "| toys | 2 | 100 % |" in lines and "No permutation changed any task's answer." in lines
    monkeypatch.setattr(_label_free, "canonical_row_order", lambda X, y=None: np.arange(len(X)))
    unstable = table()
    assert unstable["same_answer"].tolist() == [0, 0]
    assert "toy/src-tgt (0 of 4)" in "\n".join(recommend._stability_lines(unstable, {}))
    with pytest.raises(ValueError, match="permutations: a positive number"):
        recommend.task_stability("toy", "src-tgt", *recommend.task_domains(caches, "src-tgt"), 0)


def test_a_selectors_candidates_table_is_read_as_the_pipelines_rows():
    """The library's learner reads a selector's ``candidates_`` (its ``k`` for ``n_features``) as it reads the
    choice of k's rows; a row set without a column the menu reads is an error naming it."""
    long = _rows({"A": "ot", "B": "source-anova", "C": "ot"})
    runs = PolicyRuns.from_long(long, {f: f for f in "ABC"}, RANKERS, SCORERS, DATA)
    as_k = PolicyRuns.from_long(long.rename(columns={"n_features": "k"}), {f: f for f in "ABC"}, RANKERS, SCORERS, DATA)
    np.testing.assert_array_equal(runs.accuracy, as_k.accuracy)
    pd.testing.assert_frame_equal(runs.runs, as_k.runs)
    with pytest.raises(ValueError, match=r"lack the columns \['circular:score'\]"):
        PolicyRuns.from_long(long.drop(columns="circular:score"), {f: f for f in "ABC"}, RANKERS, SCORERS, DATA)
    from otfs.k_selection import evaluate_policies

    with pytest.raises(ValueError, match="gate_margin: a number of points >= 0 or None, got -1"):
        evaluate_policies(runs, RANKERS, gate_margin=-1)
    with pytest.raises(ValueError, match="fixed_k_rule: 'DEV' is not a rule of the rows"):
        evaluate_policies(runs, RANKERS, fixed_k_rule="DEV")
