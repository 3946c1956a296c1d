"""The verdict over the data families (otfs_workflow.stages.verdict), on generated results with a known answer:
OT far ahead in a family of 8 tasks, level in a family of 3; its tests against SciPy and statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from otfs_workflow.stages import verdict

RANKERS = {"ot": 6.0, "ks": 1.0, "wasserstein1d": 2.0, "source-anova": 0.0, "random": -3.0}


def _long(dataset, pairs, effect, rng):
    rows = []
    for p in range(pairs):
        for ranker, bonus in RANKERS.items():
            for adapter in ("NA", "CORAL"):
                for it in range(2):
                    for n in (2, 4, 8):
                        acc = 60 + effect * bonus * n / 8 + rng.normal(0, 0.5)
                        rows.append({"dataset": dataset, "pair": f"p{p}-q{p}", "iteration": it, "ranker": ranker,
                                     "adapter": adapter, "n_features": n, "accuracy": acc,
                                     "balanced_accuracy": acc - 5, "second_accuracy": acc + 1})
    return pd.DataFrame(rows)


def _choices(pairs, dataset):
    """Ten runs of the family's long rows (:func:`_long`), each rule's k* and a regret near a known value."""
    rng = np.random.default_rng(pairs)
    rows = []
    for rule, regret, labels, k in (("IW", 2.0, False, 4), ("SND", 1.0, False, 8), ("oracle", 0.0, True, 8),
                                    ("all-features", 3.0, False, 8)):
        for run in range(10):
            rows.append({"feature_set": dataset, "pair": f"p{run % pairs}-q{run % pairs}",
                         "ranker": list(RANKERS)[run % len(RANKERS)], "adapter": "NA", "iteration": run % 2,
                         "rule": rule, "reads_target_labels": labels, "k": k,
                         "regret": regret + rng.normal(0, 0.1), "fraction": 0.5, "gain": 1.0})
    return pd.DataFrame(rows)


def test_the_choices_are_judged_in_the_other_metrics_against_their_own_best_k():
    """metric_regrets: a metric's best over the run's k minus its value at k*, per choice; a k* the leaderboard
    lacks is an error naming the run."""
    runs = {"dataset": "fs", "pair": "a-b", "ranker": "ot", "adapter": "NA", "iteration": 0, "order": "Descending"}
    long = pd.DataFrame([{**runs, "n_features": n, "accuracy": 60.0, "balanced_accuracy": b, "second_accuracy": s}
                         for n, b, s in ((2, 50.0, 70.0), (4, 55.0, 75.0), (8, 58.0, 72.0))])
    chosen = pd.DataFrame([{"feature_set": "fs", "pair": "a-b", "ranker": "ot", "adapter": "NA", "iteration": 0,
                            "rule": r, "k": k, "reads_target_labels": False, "regret": 0.0, "fraction": k / 8,
                            "gain": 0.0} for r, k in (("IW", 4), ("SND", 2), ("all-features", 8))])
    got = verdict.metric_regrets(chosen, long).set_index("rule")
    assert got.loc["IW", "second_regret"] == 0.0 and got.loc["SND", "second_regret"] == 5.0
    assert got.loc["all-features", "second_regret"] == 3.0
    assert got.loc["IW", "balanced_regret"] == 3.0 and got.loc["all-features", "balanced_regret"] == 0.0
    k = verdict.k_regrets(got.reset_index(), "fs").set_index("rule")
    assert k.loc["SND", "second_regret"] == 5.0 and k.loc["SND", "balanced_regret"] == 8.0
    with pytest.raises(ValueError, match="no leaderboard row for the choice .*'k': 6"):
        verdict.metric_regrets(chosen.assign(k=6), long)
    # without the metrics (a family judged by its 1-NN only), the choices are returned as they are
    assert verdict.metric_regrets(chosen, long.drop(columns=["balanced_accuracy", "second_accuracy"])) is chosen


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("verdict")
    rng = np.random.default_rng(0)
    paths = {}
    for family, dataset, pairs, effect in (("big", "fs_big", 8, 1.0), ("small", "fs_small", 3, 0.0)):
        long = _long(dataset, pairs, effect, rng)
        long.to_parquet(tmp_path / f"{family}.parquet")
        _choices(pairs, dataset).to_parquet(tmp_path / f"{family}_k.parquet")
        paths[family] = long
    out = {k: str(tmp_path / f"verdict.{k}") for k in ("md", "csv", "pdf", "png")}
    out.update(k_csv=str(tmp_path / "verdict_k.csv"), versus_csv=str(tmp_path / "verdict_versus.csv"),
               provenance=str(tmp_path / "prov.json"),
               cd_pdf=str(tmp_path / "cd.pdf"), cd_png=str(tmp_path / "cd.png"))
    res = verdict.run(leaderboards={f: str(tmp_path / f"{f}.parquet") for f in ("big", "small")},
                      k_selection={f: str(tmp_path / f"{f}_k.parquet") for f in ("big", "small")},
                      families={"big": ["fs_big"], "small": ["fs_small"]},
                      n_features={"fs_big": 8, "fs_small": 8}, protocol={}, reference="ot",
                      relevance="source-anova", per_feature=["wasserstein1d", "ks", "mmd"], alpha=0.05,
                      provenance={"versions": {}}, outputs=out)
    return res, paths, out


def test_comparisons_match_scipy_and_holm(outputs):
    from statsmodels.stats.multitest import multipletests

    res, longs, _ = outputs
    rows = res["rows"]
    big = rows[(rows["family"] == "big") & (rows["metric"] == "accuracy")]
    # the best per-feature measure is the one with the higher mean nAUC: wasserstein1d (bonus 2 > 1)
    assert set(big[big["comparison"] == "best per-feature measure"]["versus"]) == {"wasserstein1d"}
    long = longs["big"]
    pts = long.groupby(["pair", "ranker", "adapter", "n_features"], as_index=False)["accuracy"].mean()
    naucs = {}
    for (pair, ranker, adapter), g in pts.groupby(["pair", "ranker", "adapter"]):
        x, y = g["n_features"].to_numpy() / 8, g["accuracy"].to_numpy()
        naucs[(pair, ranker, adapter)] = np.trapezoid(y, x) / (x[-1] - x[0])
    ps = []
    for _, row in big.iterrows():
        pairs = sorted({k[0] for k in naucs})
        diff = np.array([naucs[(p, "ot", row["adapter"])] - naucs[(p, row["versus"], row["adapter"])] for p in pairs])
        assert row["difference"] == pytest.approx(diff.mean(), abs=1e-9)
        assert row["wins"] == 8 and row["tasks"] == 8
        assert row["p"] == pytest.approx(scipy.stats.wilcoxon(diff).pvalue, rel=1e-12)
        ps.append(row["p"])
    np.testing.assert_allclose(big["p_holm"], multipletests(ps, method="holm")[1], rtol=1e-12)
    assert (big["p_holm"] <= 0.05).all() and (big["best"] == "ot").all()
    assert set(rows["metric"]) == {"accuracy", "balanced_accuracy", "second_accuracy"}
    pooled = rows[rows["family"] == verdict.POOLED]
    assert (pooled["tasks"] == 11).all()


def test_the_verdict_says_what_it_can_and_cannot_conclude(outputs):
    res, _, out = outputs
    text = open(out["md"]).read()
    big = text.split("## big")[1].split("## ")[0]
    small = text.split("## small")[1].split("## ")[0]
    assert "OT significantly beats the source relevance under 2 of 2 adapters" in big
    assert "too few tasks for any test at 0.05" in small  # 3 tasks: the smallest attainable p is 0.25
    from otfs_workflow.stats import min_wilcoxon_p

    assert min_wilcoxon_p(3) == 0.25 and min_wilcoxon_p(6) == pytest.approx(0.03125)
    # label-free k: the best label-free rule in hindsight (SND, regret about 1) and all features (about 3)
    assert "the best label-free rule in hindsight, SND, loses 1.0 points" in big
    assert "keeping every feature loses 3.0" in big
    # the same choices in the logistic regression's accuracy (1 point above the 1-NN's at every k here)
    assert "Measured with the logistic-regression accuracy at the same k* against its own best k: SND loses" in big
    k = pd.read_csv(out["k_csv"])
    assert "oracle" not in set(k["rule"]) and set(k["family"]) == {"big", "small", verdict.POOLED}
    assert "With the logistic-regression accuracy: against the best per-feature measure, OT is ahead" in text
    assert open(out["png"], "rb").read(4) == b"\x89PNG" and open(out["cd_png"], "rb").read(4) == b"\x89PNG"


def test_every_ranker_is_set_against_ot_and_the_source_relevance_over_the_pooled_tasks(outputs):
    from statsmodels.stats.multitest import multipletests

    res, longs, out = outputs
    versus = res["versus"]
    assert len(pd.read_csv(out["versus_csv"])) == len(versus) == 2 * 2 * (len(RANKERS) - 1)  # 2 references, 2 adapters
    assert set(versus["reference"]) == {"ot", "source-anova"} and (versus["tasks"] == 11).all()
    scores = pd.concat([verdict.task_scores(longs[f], {"fs_big": 8, "fs_small": 8}).assign(family=f)
                        for f in ("big", "small")])
    for (reference, adapter), part in versus.groupby(["reference", "adapter"]):
        wide = scores[scores["adapter"] == adapter].pivot_table(index=["family", "dataset", "pair"],
                                                                columns="ranker", values="nauc")
        ranks = wide.rank(axis=1, ascending=False).mean()
        ps = []
        for _, row in part.iterrows():
            diff = (wide[reference] - wide[row["ranker"]]).to_numpy()
            assert row["difference"] == pytest.approx(diff.mean(), abs=1e-9)
            assert (row["wins"], row["ties"], row["losses"]) == ((diff > 0).sum(), 0, (diff < 0).sum())
            assert row["p"] == pytest.approx(scipy.stats.wilcoxon(diff).pvalue, rel=1e-12)
            assert row["ranker_rank"] == pytest.approx(ranks[row["ranker"]], rel=1e-12)
            ps.append(row["p"])
        np.testing.assert_allclose(part["p_holm"], multipletests(ps, method="holm")[1], rtol=1e-12)
    # OT (bonus 6) is ahead of every ranker on the 8 tasks where the bonus counts; random behind source-anova
    ot = versus[versus["reference"] == "ot"]
    assert (ot["difference"] > 0).all() and (ot["wins"] >= 8).all()
    anova = versus[(versus["reference"] == "source-anova")].set_index(["adapter", "ranker"])
    assert (anova.xs("random", level="ranker")["difference"] > 0).all()
    assert (anova.xs("ot", level="ranker")["difference"] < 0).all()
    text = open(out["md"]).read()
    section = text.split("## Every ranker against OT and against the source relevance")[1].split("\n## ")[0]
    assert "Against `ot` (its average rank: CORAL 1." in section and "Against `source-anova`" in section
    assert "| ranker | CORAL (11) | NA (11) |" in section  # no configured order here: by name
    # OT is significantly ahead of source-anova (8 of 11 tasks, the others level): bold in source-anova's table
    assert "| ot | **" in section.split("Against `source-anova`")[1]


def test_no_family_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no data family to judge"):
        verdict.run({}, {}, {}, {}, {}, "ot", "source-anova", [], 0.05, {}, {})
    with pytest.raises(ValueError, match="no column 'second_auc'"):
        verdict.task_scores(pd.DataFrame({"accuracy": [1.0]}), {}, "second_auc")


def test_a_regression_family_is_judged_by_its_rmse_without_label_free_k(tmp_path):
    rng = np.random.default_rng(1)
    cls = _long("fs_a", 4, 1.0, rng)
    cls.to_parquet(tmp_path / "a.parquet")
    _choices(4, "fs_a").to_parquet(tmp_path / "a_k.parquet")
    reg = _long("corn_oil", 6, 1.0, rng).drop(columns=["accuracy", "balanced_accuracy", "second_accuracy"])
    reg["neg_rmse"] = -1.0 / np.arange(1, len(reg) + 1)  # any numbers: the metric is what is checked
    reg = reg.assign(neg_rmse=lambda df: df["neg_rmse"] + np.where(df["ranker"] == "ot", 0.5, 0.0))
    reg.to_parquet(tmp_path / "reg.parquet")
    out = {k: str(tmp_path / f"v.{k}") for k in ("md", "csv", "pdf", "png")}
    out.update(k_csv=str(tmp_path / "k.csv"), provenance=str(tmp_path / "p.json"))
    res = verdict.run(leaderboards={"a": str(tmp_path / "a.parquet"), "corn": [str(tmp_path / "reg.parquet")]},
                      k_selection={"a": str(tmp_path / "a_k.parquet")},
                      families={"a": ["fs_a"], "corn": ["corn_oil"]}, n_features={"fs_a": 8, "corn_oil": 8},
                      protocol={}, reference="ot", relevance=["source-anova", "source-correlation"],
                      per_feature=["wasserstein1d", "ks"], alpha=0.05, provenance={}, outputs=out,
                      primary_metrics={"a": "balanced_accuracy"})
    rows = res["rows"]
    assert set(rows[rows["family"] == "corn"]["metric"]) == {"neg_rmse"}
    text = open(out["md"]).read()
    corn = text.split("## corn")[1].split("## ")[0]
    assert "Judged by the 1-NN RMSE, negated" in corn and "Label-free k: not run" in corn
    a = text.split("## a (")[1].split("## ")[0]
    assert "Judged by the 1-NN balanced accuracy" in a and "With the 1-NN accuracy:" in a
    with pytest.raises(ValueError, match=r"primary_metrics: unknown metric\(s\) \{'a': 'f1'\}"):
        verdict.run(leaderboards={"a": str(tmp_path / "a.parquet")}, k_selection={}, families={"a": ["fs_a"]},
                    n_features={"fs_a": 8}, protocol={}, reference="ot", relevance="source-anova", per_feature=[],
                    alpha=0.05, provenance={}, outputs=out, primary_metrics={"a": "f1"})
    assert "## all families" not in text.split("## Every")[0] or "neg_rmse" not in set(
        rows[rows["family"] == verdict.POOLED]["metric"])

    # with the shift test's k* in its rows (otfs_workflow.stages.regression), the family's label-free k is measured
    # in RMSE: here k* = 4 and the RMSE falls with k, so the rule loses RMSE(4) - RMSE(8) on every run
    reg["rmse"] = 1.0 + 1.0 / reg["n_features"]
    reg["second_rmse"] = reg["rmse"]
    reg["shift-test:k"] = 4
    reg.to_parquet(tmp_path / "reg.parquet")
    res = verdict.run(leaderboards={"a": str(tmp_path / "a.parquet"), "corn": [str(tmp_path / "reg.parquet")]},
                      k_selection={"a": str(tmp_path / "a_k.parquet")},
                      families={"a": ["fs_a"], "corn": ["corn_oil"]}, n_features={"fs_a": 8, "corn_oil": 8},
                      protocol={}, reference="ot", relevance=["source-anova", "source-correlation"],
                      per_feature=["wasserstein1d", "ks"], alpha=0.05, provenance={}, outputs=out)
    k = res["k"].set_index(["family", "rule"])
    assert k.loc[("corn", "shift-test"), "regret"] == pytest.approx(0.125)
    assert k.loc[("corn", "shift-test"), "unit"] == "RMSE" and k.loc[("corn", "all-features"), "regret"] == 0
    assert k.loc[(verdict.POOLED, "IW"), "unit"] == "points"  # the pool: the classification families alone
    assert k.loc[(verdict.POOLED, "IW"), "runs"] == 10
    corn = open(out["md"]).read().split("## corn")[1].split("## ")[0]
    assert ("Label-free k: the best label-free rule in hindsight, shift-test, loses 0.12 of RMSE against the best "
            "k in hindsight") in corn
    assert "| corn |" in open(out["md"]).read() and "shift-test (0.12 RMSE)" in open(out["md"]).read()


def test_a_family_whose_tests_cannot_pass_holm_says_so_and_the_glance_table_sums_up(tmp_path):
    # 6 tasks, OT ahead on every one: Wilcoxon's smallest p is 2 / 2**6 = 0.031, under 0.05, but Holm over the
    # family's 4 comparisons (2 adapters x 2 baselines) makes it 0.125: no test can succeed, and the verdict
    # must say that rather than "OT does not significantly beat"
    rng = np.random.default_rng(2)
    _long("fs_six", 6, 1.0, rng).to_parquet(tmp_path / "six.parquet")
    _choices(6, "fs_six").to_parquet(tmp_path / "six_k.parquet")
    out = {k: str(tmp_path / f"v.{k}") for k in ("md", "csv", "pdf", "png")}
    out.update(k_csv=str(tmp_path / "k.csv"), provenance=str(tmp_path / "p.json"))
    res = verdict.run(leaderboards={"six": str(tmp_path / "six.parquet")},
                      k_selection={"six": str(tmp_path / "six_k.parquet")}, families={"six": ["fs_six"]},
                      n_features={"fs_six": 8}, protocol={}, reference="ot", relevance="source-anova",
                      per_feature=["wasserstein1d", "ks"], alpha=0.05, provenance={}, outputs=out)
    rows = res["rows"]
    acc = rows[(rows["family"] == "six") & (rows["metric"] == "accuracy")]
    assert len(acc) == 4 and (acc["wins"] == 6).all()
    assert acc["p"].max() == pytest.approx(0.03125) and (acc["p_holm"] > 0.05).all()
    assert np.allclose(acc["min_p_holm"], 0.125) and (acc["holm_m"] == 4).all()
    text = open(out["md"]).read()
    six = text.split("## six")[1].split("## ")[0]
    assert ("OT is ahead of the source relevance under 2 of 2 adapters, but the family has too few tasks for any "
            "test at 0.05 after Holm's correction over its 4 comparisons (the smallest attainable p, 0.031, "
            "becomes 0.12)") in six
    assert "does **not** significantly beat" not in six
    assert ("too few tasks for a test at 0.05 after Holm's correction over the family's 4 comparisons "
            "(the smallest attainable p is 0.031, 0.12 corrected)") in text
    glance = text.split("## At a glance")[1].split("## ")[0]
    (line,) = [row for row in glance.splitlines() if row.startswith("| six |")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:4] == ["six", "6", "1-NN accuracy", "ot (2/2)"]
    assert cells[4].startswith("+") and cells[4].endswith("(ahead under 2/2; too few tasks to test)")
    assert cells[6:] == ["SND (1.0)", "3.0"]


def test_the_glance_table_counts_significant_results(outputs):
    _, _, out = outputs
    glance = open(out["md"]).read().split("## At a glance")[1].split("\n## ")[0]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in glance.splitlines() if line.startswith("| ") and "---" not in line}
    assert rows["big"][5].endswith("(ahead under 2/2; significant: 2 better, 0 worse)")
    assert rows["small"][5].endswith("too few tasks to test)")
    assert verdict.POOLED in rows and rows["big"][1] == "8"


def test_small_differences_keep_two_significant_digits():
    # an RMSE's differences (corn) are thousandths: never printed as 0.000
    from otfs_workflow.formatting import decimals, difference, p_value

    assert difference(-0.00042) == "-0.00042" and difference(0.0047) == "+0.0047"
    assert difference(0.00042, signed=False) == "0.00042"
    assert difference(2.345) == "+2.3" and difference(0.0) == "+0.0" and difference(-0.1) == "-0.1"
    assert decimals(-0.001) == "0.00" and decimals(float("nan")) == "–" and decimals(None) == "–"
    assert p_value(0.0004) == "< 0.001" and p_value(0.0123) == "0.012" and p_value(float("nan")) == "n/a"
    assert p_value(0.00045, "scientific") == "4.5e-04" and p_value(0.0123, "scientific") == "0.012"
    with pytest.raises(ValueError, match="style: 'short' or 'scientific'"):
        p_value(0.5, "long")


def test_the_shared_tests_are_scipys_and_statsmodels():
    from scipy.stats import wilcoxon
    from statsmodels.stats.multitest import multipletests

    from otfs_workflow.stats import holm, wilcoxon_p

    diff = np.array([1.5, -0.5, 2.0, 0.0, 3.0, 1.0, -0.25])
    assert wilcoxon_p(diff) == wilcoxon(diff, zero_method="wilcox").pvalue and wilcoxon_p(np.zeros(4)) == 1.0
    p = np.array([0.01, 0.04, 0.03])
    assert holm(p).tolist() == multipletests(p, method="holm")[1].tolist() and holm([]).size == 0


def test_holms_correction_equals_statsmodels():
    # the reports' Holm correction against statsmodels' multipletests, value for value: random p-values, ties,
    # p-values that the correction takes above 1, a NaN, one test and none
    from statsmodels.stats.multitest import multipletests

    from otfs_workflow.stats import holm

    rng = np.random.default_rng(0)
    cases = [rng.random(n) for n in (1, 2, 7, 40)] + [rng.random(30) ** 6, np.array([0.01, 0.04, 0.04, 0.3, 0.3]),
                                                     np.array([0.5, 0.9, 0.2]), np.array([0.01, np.nan, 0.02])]
    for p in cases:
        np.testing.assert_array_equal(holm(p), multipletests(p, method="holm")[1])
    assert holm([]).size == 0
