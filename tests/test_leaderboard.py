"""The leaderboard's statistics: nAUC, average ranks, Friedman and Nemenyi, on small generated tables."""

import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from otfs_workflow.stages.leaderboard import average_ranks, collect, nauc, per_dataset_table, rank_tests, versus_reference


def test_nauc_is_the_trapezoidal_mean_level():
    assert nauc([1 / 32, 1 / 4, 1], [70, 70, 70]) == pytest.approx(70)
    x = np.array([0.1, 0.2, 0.5, 1.0])
    y = 10 + 50 * x
    assert nauc(x[::-1], y[::-1]) == pytest.approx(np.trapezoid(y, x) / 0.9)
    with pytest.raises(ValueError, match="two distinct fractions"):
        nauc([0.5], [1.0])


def test_average_ranks_and_the_tests_against_scipy():
    rng = np.random.RandomState(0)
    scores = pd.DataFrame(rng.rand(12, 4) + np.array([0.6, 0.3, 0.0, 0.0]), columns=["a", "b", "c", "d"])
    scores.iloc[0, 2] = scores.iloc[0, 3]  # a tie: both get the mean rank
    ranks = average_ranks(scores)
    direct = np.mean([scipy.stats.rankdata(-row) for row in scores.to_numpy()], axis=0)
    np.testing.assert_allclose(ranks[list(scores.columns)], direct)
    assert ranks.index[0] == "a"
    res = rank_tests(scores)
    stat, p = scipy.stats.friedmanchisquare(*scores.to_numpy().T)
    assert res["friedman_statistic"] == pytest.approx(stat) and res["friedman_p"] == pytest.approx(p)
    nem = res["nemenyi"]
    np.testing.assert_allclose(nem.to_numpy(), nem.to_numpy().T)
    assert nem.loc["a", "c"] < 0.05 < nem.loc["c", "d"]
    with pytest.raises(ValueError, match="at least 2 tasks and 3 rankers"):
        rank_tests(scores[["a", "b"]])


def _long(tmp_path):
    rows = []
    for pair in ("s-t", "t-s"):
        for ranker, level in (("good", 80.0), ("bad", 60.0)):
            for it in (0, 1):
                for n in (2, 4, 8):
                    rows.append({"feature_set": "toy", "pair": pair, "source": pair[0], "target": pair[-1],
                                 "iteration": it, "ranker": ranker, "adapter": "NA", "grid": "g",
                                 "order": "Descending", "n_features": n, "accuracy": level + n + it,
                                 "seconds": 0.1})
    long = pd.DataFrame(rows)
    long.to_csv(tmp_path / "long.tsv", sep="\t", index=False)
    rankings = []
    for pair in ("s-t", "t-s"):
        for ranker in ("good", "bad"):
            path = tmp_path / f"{ranker}-{pair}.json"
            path.write_text(json.dumps({"feature_set": "toy", "pair": pair, "ranker": ranker,
                                        "iterations": [{"iteration": i, "ranking_time_s": 0.5 + i} for i in (0, 1)]}))
            rankings.append(str(path))
    return str(tmp_path / "long.tsv"), rankings


def test_the_table_averages_iterations_then_pairs(tmp_path):
    long_path, rankings = _long(tmp_path)
    long = collect([long_path], rankings)
    assert {"dataset", "adaptation_seconds", "ranking_seconds"} <= set(long.columns)
    table = per_dataset_table(long, {"toy": 8}).set_index("ranker")
    # accuracy at d/4 (n = 2): level + 2 + mean iteration 0.5
    assert table.loc["good", "acc@d/4"] == pytest.approx(82.5) and table.loc["bad", "acc@d/4"] == pytest.approx(62.5)
    assert table.loc["good", "nauc"] == pytest.approx(nauc([0.25, 0.5, 1], [82.5, 84.5, 88.5]))
    assert table.loc["good", "ranking_seconds"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no ranking time for 6 rows"):
        collect([long_path], rankings[:3])


def test_the_reference_against_each_ranker_against_scipy_and_holm():
    rng = np.random.RandomState(1)
    scores = pd.DataFrame(rng.rand(10, 3) + np.array([0.4, 0.0, 0.35]), columns=["ot", "a", "b"])
    scores.loc[0, "b"] = scores.loc[0, "ot"]  # a tie
    runs = pd.DataFrame(rng.rand(30, 3), columns=scores.columns)
    out = versus_reference(scores, "ot", runs).set_index("ranker")
    assert list(out.index) == ["a", "b"]
    for other in ("a", "b"):
        diff = scores["ot"] - scores[other]
        assert out.loc[other, "mean_difference"] == pytest.approx(diff.mean())
        assert out.loc[other, "p"] == pytest.approx(scipy.stats.wilcoxon(diff[diff != 0]).pvalue)
        assert (out.loc[other, ["wins", "ties", "losses"]].to_list()
                == [(diff > 0).sum(), (diff == 0).sum(), (diff < 0).sum()])
        rd = runs["ot"] - runs[other]
        assert out.loc[other, "run_wins"] == (rd > 0).sum() and out.loc[other, "run_losses"] == (rd < 0).sum()
    assert out.loc["b", "ties"] == 1
    # Holm over the two comparisons: the smaller p doubled, the larger kept (both capped at 1, monotone)
    p_sorted = np.sort(out["p"].to_numpy())
    expected = np.maximum.accumulate([min(1, 2 * p_sorted[0]), min(1, p_sorted[1])])
    np.testing.assert_allclose(np.sort(out["p_holm"].to_numpy()), expected)
    assert out.loc["a", "p_holm"] < 0.05 < out.loc["b", "p_holm"]
    same = versus_reference(scores.assign(a=scores["ot"]), "ot")
    assert same.set_index("ranker").loc["a", "p"] == 1.0 and "run_wins" not in same
    with pytest.raises(ValueError, match="reference ranker 'fmmd' is not among"):
        versus_reference(scores, "fmmd")
