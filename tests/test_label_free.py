"""otfs.k_selection._label_free: the label-free choice of a ranker and a number of features.

The policies against hand computations on a small candidates table, the selector's candidates against the
library's own path computed independently (ranker, adapter, skada's scorers through score_adapted), a planted
shift where the right ranker is known, determinism, the errors on bad input, and skada's pipeline.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from otfs.k_selection import LabelFreeFeatureSelector, choose_candidate, learned_policy, resolve_grid
from otfs.k_selection._label_free import ALL_FEATURES, check_policy, fixed_policy, read_policy_file

from .conftest import require_module


def _table():
    # two rankers x k in (2, 4, 8); IW ties at its best between (a, 4) and (b, 2): the most features win;
    # circular's best is (b, 8); the shift test's k* is 4 on every row
    return pd.DataFrame({
        "ranker": ["a", "a", "a", "b", "b", "b"],
        "k": [2, 4, 8, 2, 4, 8],
        "IW:score": [0.5, 0.9, 0.1, 0.9, 0.3, 0.1],
        "circular:score": [0.2, 0.4, 0.6, 0.1, 0.5, 0.7],
        "entropy:score": [-1.0, -0.5, np.nan, -0.2, -0.9, -0.4],
        "shift-test:k": [4] * 6,
    })


def test_each_policy_against_a_hand_computation():
    t = _table()
    assert choose_candidate(t, {"kind": "scorer", "rule": "IW"}) == 1  # tie 0.9: (a, 4) has more features
    assert choose_candidate(t, {"kind": "scorer", "rule": "circular"}) == 5
    assert choose_candidate(t, {"kind": "scorer", "rule": "entropy"}) == 3  # NaN never wins
    # rank average of IW and circular, by hand (rank 1 = best, ties averaged):
    # IW ranks [3, 1.5, 5.5, 1.5, 4, 5.5], circular [5, 4, 2, 6, 3, 1] -> means [4, 2.75, 3.75, 3.75, 3.5, 3.25]
    assert choose_candidate(t, {"kind": "rank-average", "rules": ["IW", "circular"]}) == 1
    # a fixed ranker at a scorer's k (b's best IW is at k = 2) and at the data rule's k* (4)
    assert choose_candidate(t, {"kind": "fixed", "ranker": "b", "k_rule": "IW"}) == 3
    assert choose_candidate(t, {"kind": "fixed", "ranker": "b", "k_rule": "shift-test"}) == 4
    assert choose_candidate(t, {"kind": "all-features"}) == 2  # the first ranker's row of the most features
    # among one ranker's candidates alone: circular's best of a's rows is (a, 8), IW's of b's is (b, 2)
    assert choose_candidate(t, {"kind": "scorer", "rule": "circular", "rankers": ["a"]}) == 2
    assert choose_candidate(t, {"kind": "rank-average", "rules": ["IW"], "rankers": ["b"]}) == 3
    gate = {"kind": "gate", "feature": "unshifted_fraction", "threshold": 0.5,
            "below": {"kind": "all-features"}, "above": {"kind": "scorer", "rule": "circular"}}
    assert choose_candidate(t, gate, {"unshifted_fraction": 0.2}) == 2
    assert choose_candidate(t, gate, {"unshifted_fraction": 0.5}) == 5
    with pytest.raises(ValueError, match="unshifted_fraction"):
        choose_candidate(t, gate, {})
    with pytest.raises(ValueError, match="'c' is not a candidate"):
        choose_candidate(t, {"kind": "fixed", "ranker": "c", "k_rule": "IW"})
    with pytest.raises(ValueError, match="no scores of the rule 'MixVal'"):
        choose_candidate(t, {"kind": "scorer", "rule": "MixVal"})
    # a switch keeps its default (b at IW's k: row 3, circular 0.1) unless the challenger (circular's best, row
    # 5, 0.7) scores more than the margin above it under circular: a gain of 0.6
    switch = {"kind": "switch", "default": fixed_policy("b", "IW"), "challenger": {"kind": "scorer", "rule": "circular"},
              "rule": "circular", "margin": 0.5}
    assert choose_candidate(t, check_policy(switch)) == 5
    assert choose_candidate(t, {**switch, "margin": 0.6}) == 3  # not more than the margin: kept
    assert choose_candidate(t, {**switch, "default": ALL_FEATURES, "margin": 0.05}) == 5  # (a, 8) 0.6 -> 0.7
    assert choose_candidate(t, {**switch, "default": ALL_FEATURES, "margin": 0.1}) == 2


def test_the_grid_resolves_like_the_pipelines_and_refuses_beyond_d():
    assert resolve_grid(["d/32", "d/16", "d/8", "d/4", "d/2", "d"], 800) == [25, 50, 100, 200, 400, 800]
    assert resolve_grid(["d/32", "d/2", "d"], 13) == [6, 13]  # a fraction giving 0 is left out
    assert resolve_grid([0.5, 3], 10) == [3, 5]
    with pytest.raises(ValueError, match=r"n_features_grid: 20 features asked, the data have d = 10"):
        resolve_grid([5, 20], 10)
    with pytest.raises(ValueError, match="n_features_grid"):
        resolve_grid(["half"], 10)


def _domains(seed=0, n=80, d=6):
    rng = np.random.default_rng(seed)
    Xs, Xt = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    ys = (Xs[:, 0] + 0.5 * Xs[:, 1] > 0).astype(int)
    Xt[:, 0] += 0.3
    Xt[:, d - 1] = 3 * Xt[:, d - 1] + 2  # shifted, and carries no class signal
    return Xs, ys, Xt


def test_the_candidates_are_the_librarys_own_path_computed_apart():
    # every (ranker, k): the ranker fitted as a user fits it, its first k features adapted by CORAL and scored by
    # score_adapted with the same seed; the choice is the best IW score, found by hand
    from otfs.adapters import get_adapter
    from otfs.classification import make_classifier
    from otfs.k_selection._base import get_rule, score_adapted
    from otfs.rankers import FEATURE_RANKERS

    Xs, ys, Xt = _domains()
    sel = LabelFreeFeatureSelector(rankers=["ks", "source-anova"], adapter="CORAL", policy="IW", scorers=["IW", "SND"],
                                   n_features_grid=[2, 3], random_state=7).fit(Xs, ys, X_target=Xt)
    c = sel.candidates_
    assert list(zip(c["ranker"], c["k"])) == [("ks", 2), ("ks", 3), ("ks", 6), ("source-anova", 2),
                                              ("source-anova", 3), ("source-anova", 6)]
    rules = {"IW": get_rule("IW"), "SND": get_rule("SND")}
    # the selector reads each domain's rows in their canonical order (the same whatever order they came in)
    from otfs.k_selection._label_free import canonical_row_order

    o = canonical_row_order(Xs, ys)
    Xs, ys, Xt = Xs[o], ys[o], Xt[canonical_row_order(Xt)]
    for name in ("ks", "source-anova"):
        order = FEATURE_RANKERS[name]().fit(Xs, ys, X_target=Xt).order_
        for k in (2, 3, 6):
            cols = order[:k] if k < 6 else np.arange(6)
            Zs, Zt = get_adapter("CORAL").adapt(Xs[:, cols], ys, Xt[:, cols])
            want = score_adapted(Zs, ys, Zt, rules, make_classifier({"name": "knn", "n_neighbors": 5}), 2, 0.5, 7)
            row = c[(c["ranker"] == name) & (c["k"] == k)].iloc[0]
            assert row["IW:score"] == want["IW"]["score"] and row["SND:score"] == want["SND"]["score"]
    best = c["IW:score"].max()
    top = c[c["IW:score"] == best]
    assert (sel.ranker_, sel.k_) == (top["ranker"].iloc[top["k"].argmax()], int(top["k"].max()))
    assert c["chosen"].sum() == 1 and c.loc[c["chosen"], "ranker"].iloc[0] == sel.ranker_
    kept = sel.get_support(indices=True)
    assert len(kept) == sel.k_ and set(kept) == set(sel.ranker_estimator_.order_[:sel.k_]) | (
        set(range(6)) if sel.k_ == 6 else set())
    # the data rules' k* and the share of unshifted features are recorded
    assert {"shift-test:k", "failing-loudly:k"} <= set(c.columns)
    assert sel.measures_["d"] == 6 and 0 <= sel.measures_["unshifted_fraction"] <= 1


def test_a_planted_shift_is_found_and_its_features_left_out():
    # the planted-shift generator: 8 features shifted in mean (+2), 8 in scale (x3), 16 unshifted, every one
    # carrying class signal; between the KS shift ranker and a random order, the right one is KS, whose first
    # 16 features are the unshifted ones
    from otfs.datasets.planted_shifts import PlantedShifts

    gen = PlantedShifts(n_features=56, per_kind=8, n_samples=300, n_classes=3, separation=0.5, seed=0)
    source, target = gen.read("source", [], None), gen.read("target", [], None)
    keep = [*gen.planted()["mean"], *gen.planted()["scale"], *range(40, 56)]
    Xs, ys, Xt = source.X[:, keep], source.y, target.X[:, keep]
    shifted = set(range(16))
    # (IW, ATC and so the rank average of every scorer are no help here: at all 32 features IW scores 0.999 on 3
    # of the seeds 0-3, its weights degenerate, and ATC prefers all the features too)
    for policy in ("circular", "COT"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sel = LabelFreeFeatureSelector(rankers=["ks", "random"], policy=policy,
                                           n_features_grid=["d/8", "d/4", "d/2"], random_state=0).fit(Xs, ys, X_target=Xt)
        assert sel.ranker_ == "ks", policy
        assert sel.k_ < 32 and not set(sel.get_support(indices=True)) & shifted, policy


def test_the_same_seed_gives_the_same_choice():
    Xs, ys, Xt = _domains(seed=3)
    kw = dict(rankers=["ot", "random", "ks"], policy="rank-average", n_features_grid=["d/2"])
    a = LabelFreeFeatureSelector(**kw, random_state=11).fit(Xs, ys, X_target=Xt)
    b = LabelFreeFeatureSelector(**kw, random_state=11).fit(Xs, ys, X_target=Xt)
    pd.testing.assert_frame_equal(a.candidates_, b.candidates_)
    assert (a.ranker_, a.k_) == (b.ranker_, b.k_)
    np.testing.assert_array_equal(a.get_support(), b.get_support())


def test_bad_input_names_the_culprit():
    Xs, ys, Xt = _domains()
    sel = LabelFreeFeatureSelector(rankers=["ks"], policy="IW", scorers=["IW"])
    with pytest.raises(ValueError, match=r"the source has one class \(\[1\]\)"):
        sel.fit(Xs, np.ones(len(ys), dtype=int), X_target=Xt)
    with pytest.raises(ValueError, match="X_target has 1 sample"):
        sel.fit(Xs, ys, X_target=Xt[:1])
    with pytest.raises(ValueError, match=r"n_features_grid: 9 features asked, the data have d = 6"):
        LabelFreeFeatureSelector(rankers=["ks"], policy="IW", n_features_grid=[3, 9]).fit(Xs, ys, X_target=Xt)
    # target labels are never read, but labels that share no class with the source's are an error naming both
    X = np.vstack([Xs, Xt])
    domain = np.r_[np.ones(len(Xs)), -2 * np.ones(len(Xt))].astype(int)
    y = np.r_[np.where(ys == 1, "good", "bad"), np.where(np.arange(len(Xt)) % 2, "1", "0")]
    with pytest.raises(ValueError, match=r"share no class \(source \['bad', 'good'\], target \['0', '1'\]\)"):
        sel.fit(X, y, sample_domain=domain)
    with pytest.raises(ValueError, match="unknown selection rule 'IWW'"):
        LabelFreeFeatureSelector(rankers=["ks"], policy="IWW").fit(Xs, ys, X_target=Xt)
    with pytest.raises(ValueError, match="the rule 'oracle' reads target labels"):
        LabelFreeFeatureSelector(rankers=["ks"], policy="oracle").fit(Xs, ys, X_target=Xt)
    with pytest.raises(ValueError, match="'ks' is given twice"):
        LabelFreeFeatureSelector(rankers=["ks", "ks"], policy="IW").fit(Xs, ys, X_target=Xt)
    with pytest.raises(ValueError, match=r"policy: always 'ot', k by 'circular' reads the ranker\(s\) \['ot'\], which "
                       r"are not among the candidate rankers \['ks'\]"):
        LabelFreeFeatureSelector(rankers=["ks"], policy=fixed_policy("ot")).fit(Xs, ys, X_target=Xt)
    with pytest.raises(ValueError, match="n_features_grid: an empty grid"):
        LabelFreeFeatureSelector(rankers=["ks"], policy="IW", n_features_grid=[]).fit(Xs, ys, X_target=Xt)
    lone = ys.copy()
    lone[0] = 7
    with pytest.raises(ValueError, match="y \\(the source labels\\) has one sample of the class 7"):
        sel.fit(Xs, lone, X_target=Xt)


def test_the_shipped_policy_loads_and_names_an_adapter_without_one():
    policy, provenance = learned_policy("NA")
    assert policy["kind"] in ("scorer", "rank-average", "fixed", "all-features", "gate", "switch")
    with pytest.warns(UserWarning, match="no learned policy for the adapter 'TCA'"):
        other, _ = learned_policy("TCA")
    assert other == learned_policy(None)[0]


def test_in_a_skada_pipeline_it_keeps_the_direct_calls_features():
    require_module("skada", "skada")
    from sklearn.neighbors import KNeighborsClassifier

    from otfs._skada import import_skada, routing

    skada = import_skada()

    Xs, ys, Xt = _domains(seed=5)
    names = [f"f{i}" for i in range(Xs.shape[1])]
    X = pd.DataFrame(np.vstack([Xs, Xt]), columns=names)
    domain = np.r_[np.ones(len(Xs)), -2 * np.ones(len(Xt))].astype(int)
    y = np.r_[ys, -np.ones(len(Xt), dtype=int)]
    kw = dict(rankers=["ks", "source-anova"], policy="IW", n_features_grid=["d/2"], random_state=0)
    with routing():
        pipe = skada.make_da_pipeline(LabelFreeFeatureSelector(**kw), KNeighborsClassifier(1))
        pipe.fit(X, y, sample_domain=domain)
        score = pipe.score(X[len(Xs):], (Xt[:, 0] > 0).astype(int), sample_domain=domain[len(Xs):])
    assert 0 <= score <= 1
    direct = LabelFreeFeatureSelector(**kw).fit(pd.DataFrame(Xs, columns=names), ys,
                                                X_target=pd.DataFrame(Xt, columns=names))
    fitted = pipe[0].get_estimator()
    assert list(fitted.get_feature_names_out()) == list(direct.get_feature_names_out())
    assert (fitted.ranker_, fitted.k_) == (direct.ranker_, direct.k_)
    pd.testing.assert_frame_equal(fitted.candidates_, direct.candidates_)
    rec = direct.recommendation()
    assert rec["features"] == list(direct.get_feature_names_out()) and rec["ranker"] == direct.ranker_


def test_bad_policies_and_policy_files_name_what_is_wrong(tmp_path):
    switch = {"kind": "switch", "default": ALL_FEATURES, "challenger": {"kind": "scorer", "rule": "ATC"},
              "rule": "ATC", "margin": 0.01}
    assert check_policy(switch) == switch
    with pytest.raises(ValueError, match=r"policy.margin: a finite number >= 0"):
        check_policy({**switch, "margin": -1})
    with pytest.raises(ValueError, match=r"missing \['margin'\]"):
        check_policy({k: v for k, v in switch.items() if k != "margin"})
    with pytest.raises(ValueError, match="policy.rule: a switch compares scores, so a scorer rule"):
        check_policy({**switch, "rule": "shift-test"})
    with pytest.raises(ValueError, match="policy.challenger: the rule 'oracle' reads target labels"):
        check_policy({**switch, "challenger": {"kind": "scorer", "rule": "oracle"}})
    from otfs.k_selection._label_free import describe_policy

    assert describe_policy(switch) == ("every feature, unless the candidate of the best ATC score scores more than "
                                       "0.01 above it under ATC")
    good = {"default_adapter": "NA", "policies": {"NA": switch}}
    path = tmp_path / "label_free_policy.json"
    path.write_text(json.dumps(good))
    assert read_policy_file(path)["policies"]["NA"] == switch
    for text, message in [("{", "not valid JSON \\(line 1"), ("[]", "a JSON object"),
                          (json.dumps({"policies": {"NA": switch}}), r"lacks \['default_adapter'\]"),
                          (json.dumps({**good, "default_adapter": "OT3"}), "'OT3' is none of its policies"),
                          (json.dumps({**good, "policies": {"NA": {"kind": "best"}}}), "policies.NA: a mapping whose 'kind'")]:
        path.write_text(text)
        with pytest.raises(ValueError, match=f"{path.name}.*" + message):
            read_policy_file(path)


def test_every_candidate_and_the_fixed_policies_are_public():
    Xs, ys, Xt = _domains(seed=2)
    sel = LabelFreeFeatureSelector(rankers=["ks", "source-anova"], n_features_grid=["d/2"], policy="IW",
                                   scorers=["IW", "circular", "ATC"], random_state=0).fit(Xs, ys, X_target=Xt)
    assert set(sel.candidate_orders_) == {"ks", "source-anova"}
    np.testing.assert_array_equal(sel.candidate_orders_[sel.ranker_], sel.order_)
    d = Xs.shape[1]
    # choose() applies a policy to the fitted candidates, as choose_candidate does on candidates_
    for policy in (fixed_policy("ks"), fixed_policy("source-anova", "ATC"), ALL_FEATURES):
        i = choose_candidate(sel.candidates_, policy, sel.measures_)
        assert sel.choose(policy) == (sel.candidates_["ranker"].iloc[i], sel.candidates_["k"].iloc[i])
    assert sel.choose(ALL_FEATURES)[1] == d
    assert sel.choose("IW") == (sel.ranker_, sel.k_)
    with pytest.raises(ValueError, match="no scores of the rule 'COT'"):
        sel.choose("COT")


def test_permuted_rows_give_the_same_choice():
    Xs, ys, Xt = _domains(seed=4)
    kw = dict(rankers=["ot", "random", "ks", "source-anova"], n_features_grid=["d/4", "d/2"], random_state=5)
    a = LabelFreeFeatureSelector(**kw).fit(Xs, ys, X_target=Xt)
    rng = np.random.default_rng(0)
    for _ in range(3):
        ps, pt = rng.permutation(len(Xs)), rng.permutation(len(Xt))
        b = LabelFreeFeatureSelector(**kw).fit(Xs[ps], ys[ps], X_target=Xt[pt])
        assert (a.ranker_, a.k_) == (b.ranker_, b.k_)
        pd.testing.assert_frame_equal(a.candidates_, b.candidates_)
        for name in a.candidate_orders_:
            np.testing.assert_array_equal(a.candidate_orders_[name], b.candidate_orders_[name])


def test_the_runner_up_of_a_fixed_policy_is_the_other_rankers_best_at_its_rule():
    Xs, ys, Xt = _domains(seed=6)
    sel = LabelFreeFeatureSelector(rankers=["ks", "source-anova"], policy=fixed_policy("ks"), n_features_grid=["d/2"],
                                   scorers=["circular"], random_state=0).fit(Xs, ys, X_target=Xt)
    assert sel.ranker_ == "ks"
    others = sel.candidates_[sel.candidates_["ranker"] == "source-anova"]
    others = others[others["k"] < Xs.shape[1]] if sel.k_ == Xs.shape[1] else others
    best = others.iloc[choose_candidate(others, {"kind": "scorer", "rule": "circular"})]
    assert (sel.runner_up_["ranker"], sel.runner_up_["k"]) == ("source-anova", int(best["k"]))


def test_how_sure_reads_the_shipped_policys_regret_on_the_family_most_like_the_data():
    # the fitted domains' profile by hand (continuous values: each feature's most common value occurs once per
    # domain), the nearest family of the shipped file by the documented distance, and the same mapping inside
    # recommendation()
    from otfs.k_selection._label_free import read_policy_file, shipped_policy_file

    Xs, ys, Xt = _domains(seed=2)
    sel = LabelFreeFeatureSelector(rankers=["source-anova", "ks", "random"], n_features_grid=["d/2"],
                                   random_state=0).fit(Xs, ys, X_target=Xt)
    assert sel.profile_ == {"d": 6, "n": 160, "sparsity": pytest.approx(12 / (160 * 6))}
    sure = sel.how_sure()
    learned = read_policy_file(shipped_policy_file())["learned"]["NA"]
    assert sure["nested_regret"] == learned["nested_regret"] and sure["profile"] == sel.profile_
    dist = {f: abs(np.log10(6 / r["d"])) + abs(np.log10(160 / r["n"])) + abs(12 / 960 - r["sparsity"])
            for f, r in learned["by_family"].items() if {"d", "n", "sparsity"} <= set(r)}
    assert sure["similar_family"]["family"] == min(dist, key=dist.get)
    assert sure["all_features"] == (sel.k_ == 6)
    if not sure["all_features"] and sel.ranker_ != "random":
        chosen = sel.candidates_[sel.candidates_["chosen"]].iloc[0]
        random_best = sel.candidates_.loc[sel.candidates_["ranker"] == "random", "circular:score"].max()
        assert sure["random_ties_or_beats"] == (random_best >= chosen["circular:score"])
    assert sel.recommendation()["how_sure"] == sure
    # another policy than the shipped one: no nested regret to quote
    assert "nested_regret" not in LabelFreeFeatureSelector(rankers=["ks", "random"], policy="IW", n_features_grid=["d/2"],
                                                           random_state=0).fit(Xs, ys, X_target=Xt).how_sure()
