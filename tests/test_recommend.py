"""The recommendation's meta-evaluation (otfs_workflow.stages.recommend) on made-up rows of the choice of k.

Leave one family out is checked where it could leak (a family's own rows never reach its policy), the regrets
against hand computations, the statistics against SciPy's and statsmodels' own calls.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from otfs_workflow.io import write_tsv
from otfs_workflow.stages import recommend

RANKERS = ["ot", "source-anova"]
SCORERS = ["IW", "circular"]
DATA = ["shift-test"]


def _rows(best: dict[str, str], noise=None, seed=0) -> pd.DataFrame:
    """Three families of two tasks each, 2 iterations, k in (2, 4, 8): in each family ``best[family]`` is the
    better ranker, at k = 4; IW's score is the accuracy (a perfect scorer), circular's its opposite."""
    rng = np.random.default_rng(seed)
    rows = []
    for family, winner in best.items():
        for task in range(2):
            for it in range(2):
                for ranker in RANKERS:
                    for k in (2, 4, 8):
                        acc = 60.0 + (10 if ranker == winner else 0) * (k == 4) + rng.integers(0, 3)
                        if k == 8:
                            acc = 55.0  # all features: the same for both rankers
                        iw = acc / 100 if noise is None or family not in noise else rng.random()
                        rows.append({"d": 8, "ranker": ranker, "pair": f"s{task}-t{task}", "feature_set": family,
                                     "iteration": it, "adapter": "NA", "n_features": k, "accuracy": acc,
                                     "IW:score": iw, "circular:score": -acc, "shift-test:k": 4,
                                     "shift-test:unshifted": 5 if family == "A" else 2})
    return pd.DataFrame(rows)


def _evaluate(tmp_path, long: pd.DataFrame, margin=0.25):
    paths = []
    for (fs, pair, ranker), part in long.groupby(["feature_set", "pair", "ranker"]):
        p = tmp_path / f"{fs}_{pair}_{ranker}.tsv"
        write_tsv(part, p)
        paths.append(str(p))
    outputs = {k: str(tmp_path / f"out.{k}") for k in ("csv", "tasks", "md", "pdf", "png", "policy", "provenance")}
    res = recommend.evaluate(paths, {f: f for f in set(long["feature_set"])}, RANKERS, SCORERS, DATA, margin, 0.05,
                             {"git_commit": "test"}, outputs)
    return res, outputs


def test_regrets_against_a_hand_computation(tmp_path):
    long = _rows({"A": "ot", "B": "source-anova", "C": "source-anova"})
    res, outputs = _evaluate(tmp_path, long)
    tasks = res["tasks"].set_index(["feature_set", "pair"])
    # IW is a perfect scorer: learned on any two families it is the policy of no regret, on every task
    assert (res["folds"]["recommendation"] == "scorer:IW").all()
    assert (tasks["recommendation"] == 0).all()
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
    assert set(table["versus"]) == set(recommend.BASELINES)
    md = open(outputs["md"]).read()
    # each fixed policy loses somewhere (the best-on-average ranker, learned on B and C, on A), IW nowhere
    assert "Mean regret below every fixed policy's, pooled: **met**" in md
    shipped = json.load(open(outputs["policy"]))
    assert shipped["policies"]["NA"] == {"kind": "scorer", "rule": "IW"} and shipped["provenance"]["git_commit"] == "test"
    assert open(outputs["png"], "rb").read().startswith(b"\x89PNG")


def test_a_familys_own_rows_never_reach_its_policy(tmp_path):
    # family A's IW scores made random: A's fold learns on B and C alone, so its policy does not move, while the
    # policy learned on every family does
    clean, _ = _evaluate(tmp_path / "clean", _mkdir(tmp_path / "clean", _rows({"A": "ot", "B": "ot", "C": "ot"})))
    noisy_rows = _rows({"A": "ot", "B": "ot", "C": "ot"}, noise={"A"})
    noisy, _ = _evaluate(tmp_path / "noisy", _mkdir(tmp_path / "noisy", noisy_rows))
    fold = lambda res, f: res["folds"].set_index("family").loc[f]  # noqa: E731
    assert fold(clean, "A")["recommendation"] == fold(noisy, "A")["recommendation"]
    assert fold(clean, "A")["train_regret"] == fold(noisy, "A")["train_regret"]
    # on every family together IW's noise on A shows: another policy of no regret (OT at the shift test's k)
    assert clean["policies"]["NA"]["name"] == "scorer:IW" and noisy["policies"]["NA"]["name"] == "fixed:ot/shift-test"


def _mkdir(path, long):
    path.mkdir(parents=True, exist_ok=True)
    return long


def test_a_gate_is_learned_where_the_families_split_by_their_shift(tmp_path):
    # A (5 of 8 features unshifted) wants OT, B and C (2 of 8) source ANOVA, and IW is no help (its opposite):
    # on every family together the gate on the share of unshifted features beats every single policy
    long = _rows({"A": "ot", "B": "source-anova", "C": "source-anova"})
    long["IW:score"] = -long["accuracy"]
    runs = recommend.Runs(long, {f: f for f in "ABC"}, RANKERS, SCORERS, DATA)
    learned = recommend.learn(runs, np.ones(len(runs.runs), dtype=bool), gate_margin=0.25)
    assert learned["policy"]["kind"] == "gate" and learned["train_regret"] < 1.5
    assert learned["policy"]["below"]["ranker"] == "source-anova" and learned["policy"]["above"]["ranker"] == "ot"
    assert 0.25 < learned["policy"]["threshold"] <= 0.625
    # a margin larger than the gain keeps the best single policy
    single = recommend.learn(runs, np.ones(len(runs.runs), dtype=bool), gate_margin=100)
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
        recommend.Runs(long, {"A": "A"}, RANKERS, SCORERS, DATA)
    with pytest.raises(ValueError, match=r"rows of the rankers \['ot'\], the candidates are \['ot', 'source-anova'\]"):
        recommend.Runs(long[long["ranker"] == "ot"].assign(), {"A": "A", "B": "B"}, RANKERS, SCORERS, DATA)
