"""One contract for every feature ranker (otfs.base): what scores_, order_, ranking_ and support_ mean."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from otfs._checks import DegenerateResultWarning
from otfs.base import BaseFeatureRanker, n_features_kept
from otfs.rankers import OTFeatureRanker, RelevantInvariantSelector
from otfs.zero_shot import LassoSelector, SemanticFeatureSelector, SpectralSelector

from .conftest import shifted_domains, sklearn_checks, toy_caches


def _fitted(name, n_features_to_select):
    Xs, ys, Xt, yt, _ = shifted_domains(n_s=60, n_t=70, d=12, k=2, n_classes=3, seed=1)
    if name == "ot":
        return OTFeatureRanker(n_features_to_select).fit(Xs, ys, X_target=Xt)
    if name == "semfs":
        attributes = np.eye(3)[:, [0, 1, 2, 0]] + 0.1 * np.arange(12).reshape(3, 4)
        return SemanticFeatureSelector(n_features_to_select, max_iter=5).fit(Xs, ys, attributes)
    if name == "lasso":
        return LassoSelector(n_features_to_select).fit(Xs, ys)
    if name == "spectral":
        return SpectralSelector(n_features_to_select).fit(Xs)
    return RelevantInvariantSelector(n_features_to_select or 4, pop_size=8, n_gen=3, random_state=0).fit(
        Xs, ys, Xt, yt)


@pytest.mark.parametrize("name", ["ot", "semfs", "lasso", "spectral", "invariance"])
@pytest.mark.parametrize("n_features_to_select", [None, 4, 0.25])
def test_every_ranker_means_the_same_by_its_attributes(name, n_features_to_select):
    ranker = _fitted(name, n_features_to_select)
    assert isinstance(ranker, BaseFeatureRanker)
    d = ranker.scores_.size
    assert d == 12
    # order_: decreasing scores, ties to the lower index; ranking_: 1 = best, as RFE
    np.testing.assert_array_equal(ranker.order_, np.argsort(-ranker.scores_, kind="stable"))
    np.testing.assert_array_equal(ranker.ranking_[ranker.order_], np.arange(1, d + 1))
    # support_: the first n_features_ of order_, by the one rule
    expected = 4 if name == "invariance" and n_features_to_select is None else n_features_kept(n_features_to_select, d)
    assert ranker.n_features_ == expected
    np.testing.assert_array_equal(np.flatnonzero(ranker.get_support()), np.sort(ranker.order_[:expected]))
    np.testing.assert_array_equal(ranker.support_, ranker.get_support())


def test_the_one_rule_for_n_features_to_select():
    assert [n_features_kept(None, d) for d in (1, 2, 9)] == [1, 1, 4]
    assert n_features_kept(3, 9) == 3 and n_features_kept(0.5, 9) == 4 and n_features_kept(0.01, 9) == 1
    with pytest.raises(ValueError, match="n_features_to_select=10 exceeds the 9 features of X"):
        n_features_kept(10, 9)


def test_non_finite_and_all_equal_scores_are_not_silent():
    class Constant(BaseFeatureRanker):
        def __init__(self, n_features_to_select=None, value=1.0):
            self.n_features_to_select = n_features_to_select
            self.value = value

        def fit(self, X, y=None):
            return self._set_scores(np.full(np.asarray(X).shape[1], self.value))

    X = np.ones((5, 3))
    with pytest.warns(DegenerateResultWarning, match="all 3 feature scores are equal"):
        Constant().fit(X)
    with pytest.raises(FloatingPointError, match="the feature scores are not finite \\(3 of 3\\)"):
        Constant(value=np.nan).fit(X)


# the rankers whose fit takes (X, y): scikit-learn's checks (OT's run in test_ranking.py)
@pytest.mark.parametrize("estimator, check", list(sklearn_checks([LassoSelector(), SpectralSelector()])))
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResultWarning)
        check(estimator)


def test_two_domain_estimators_accept_skadas_sample_domain():
    from otfs.adapters import ADAPTERS, get_adapter

    Xs, ys, Xt, yt, _ = shifted_domains(n_s=50, n_t=60, d=10, k=2, n_classes=3, seed=2)
    X = np.vstack([Xs, Xt])
    y = np.concatenate([ys, yt])
    sample_domain = np.r_[np.ones(len(ys), int), -2 * np.ones(len(yt), int)]
    # the feature ranker: the same ranking from the stacked samples as from the direct call
    direct = OTFeatureRanker(4).fit(Xs, X_target=Xt)
    stacked = OTFeatureRanker(4).fit(X, sample_domain=sample_domain)
    np.testing.assert_array_equal(direct.order_, stacked.order_)
    np.testing.assert_array_equal(direct.support_, stacked.support_)
    # every adapter: the same adapted samples, in the rows of X
    for name in sorted(ADAPTERS):
        if name == "WDA":
            continue  # needs the dr extra; its fit_transform is the same base-class path
        a_s, a_t = get_adapter(name).adapt(Xs, ys, Xt)
        out = get_adapter(name).fit_transform(X, np.where(sample_domain > 0, y, -1), sample_domain=sample_domain)
        np.testing.assert_allclose(out, np.vstack([a_s, a_t]), rtol=1e-12, atol=1e-12, err_msg=name)
    # the relevant-and-invariant selector reads the target labels it needs from y
    kw = dict(n_features_to_select=3, pop_size=8, n_gen=2, random_state=0)
    a = RelevantInvariantSelector(**kw).fit(Xs, ys, Xt, yt)
    b = RelevantInvariantSelector(**kw).fit(X, y, sample_domain=sample_domain)
    np.testing.assert_array_equal(a.support_, b.support_)
    with pytest.raises(ValueError, match="one source domain \\(> 0\\) and one target domain \\(< 0\\)"):
        OTFeatureRanker().fit(X, sample_domain=np.abs(sample_domain))
    with pytest.raises(ValueError, match="not both"):
        OTFeatureRanker().fit(X, X_target=Xt, sample_domain=sample_domain)


@pytest.mark.parametrize("name", sorted(__import__("otfs.rankers._base", fromlist=["FEATURE_RANKERS"]).FEATURE_RANKERS))
def test_every_registered_ranker_fits_as_the_pipeline_fits_it(name):
    # the ranking stage builds a registered ranker by name and fits it as fit(Xs, ys, X_target=Xt)
    from otfs.rankers import FEATURE_RANKERS

    Xs, ys, Xt, _, _ = shifted_domains(n_s=60, n_t=70, d=12, k=2, n_classes=3, seed=1)
    Xs0, Xt0 = Xs.copy(), Xt.copy()
    ranker = FEATURE_RANKERS[name](n_features_to_select=4).fit(Xs, ys, X_target=Xt)
    np.testing.assert_array_equal(Xs, Xs0)
    np.testing.assert_array_equal(Xt, Xt0)
    assert isinstance(ranker, BaseFeatureRanker) and ranker.scores_.shape == (12,)
    np.testing.assert_array_equal(ranker.ranking_[ranker.order_], np.arange(1, 13))
    assert ranker.get_support().sum() == 4


@pytest.mark.parametrize("name, strategy", [("ot", "ot"), ("ot-1nn", "1nn"), ("ot-random", "random")])
def test_the_ranking_stage_is_algorithms_1_and_2_of_the_paper(tmp_path, name, strategy):
    # the stage fits the public estimator; the paper's two algorithms, called one after the other with the
    # protocol's seeds on the protocol's source subset, give the same bits
    from otfs.rankers import feature_coupling_diagonal
    from otfs.sample_selection import select_samples
    from otfs_workflow.protocol import derive_seed, draw_source_subset
    from otfs_workflow.stages import ranking

    caches, (Xs, ys, Xt, yt) = toy_caches(tmp_path, seed=2)
    out = ranking.run(caches, "toy", "src-tgt", name, iterations=[0, 1], per_class=10,
                      output=tmp_path / "rank.json")
    assert out["strategy"] == strategy
    for it in out["iterations"]:
        subset = draw_source_subset(ys, 10, random_state=derive_seed("toy", "src-tgt", it["iteration"],
                                                                     "source_subset"))
        assert it["source_subset"] == [int(i) for i in subset]
        seed = derive_seed("toy", "src-tgt", it["iteration"], "selection", strategy)
        assert it["seed_selection"] == seed
        m = select_samples(Xs[subset], Xt, strategy, random_state=seed)
        scores, n_iter = feature_coupling_diagonal(Xs[subset][m.source_index], Xt[m.target_index],
                                                   return_n_iter=True)
        assert np.array_equal(np.asarray(it["scores"]), scores) and it["sinkhorn_iterations"] == n_iter
        assert it["flipped"] == m.flipped


def test_one_job_for_several_adapters_writes_what_one_job_per_adapter_writes(tmp_path):
    # the leaderboard's classification job (run_adapters) against the per-adapter job (run)
    from otfs_workflow.io import read_tsv
    from otfs_workflow.stages import classification, ranking

    caches, (Xs, ys, Xt, yt) = toy_caches(tmp_path, seed=3)
    rank = tmp_path / "rank.json"
    ranking.run(caches, "toy", "src-tgt", "ks", iterations=[0, 1, 2], per_class=10, output=rank)
    adapters = {"NA": None, "CORAL": None, "SA": {"n_components": 3}}
    kw = dict(grid="g", orders=["Descending"], counts=[2, 6, "d"], iterations=2)
    together = classification.run_adapters(caches, rank, adapters, outputs={a: tmp_path / f"{a}.tsv" for a in adapters},
                                           **kw)
    for adapter, params in adapters.items():
        alone = classification.run(caches, rank, adapter, output=tmp_path / f"{adapter}-alone.tsv",
                                   adapter_params=params, **kw)
        a, b = (read_tsv(tmp_path / f) for f in (f"{adapter}.tsv", f"{adapter}-alone.tsv"))
        # the same rows but for the measured times
        pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))
        assert len(a) == 2 * 3 and set(a["adapter"]) == {adapter} and len(together[adapter]) == len(alone)
    with pytest.raises(ValueError, match=r"adapters \['CORAL', 'NA', 'SA'\] and outputs \['NA'\] name different"):
        classification.run_adapters(caches, rank, adapters, outputs={"NA": tmp_path / "x.tsv"}, **kw)


def test_the_rankers_of_a_family_pair_share_the_all_features_point(tmp_path, monkeypatch):
    """rule run_family_pair's sharing: with ``shared``, every ranker's curve and choice-of-k rows are those of the
    unshared stages below d features, and at d they are one computation on the features in the data's order,
    made once per (adapter, source subset) for all the rankers, as accuracy_curve and the scorers give it."""
    import otfs.classification as oc
    from otfs.classification import accuracy_curve
    from otfs_workflow.io import read_tsv
    from otfs_workflow.stages import classification, model_selection, ranking

    caches, (Xs, ys, Xt, yt) = toy_caches(tmp_path, seed=5)
    d = Xs.shape[1]
    ranks = {}
    for r in ("ks", "random"):
        ranks[r] = tmp_path / f"{r}.json"
        ranking.run(caches, "toy", "src-tgt", r, iterations=[0, 1], per_class=10, output=ranks[r])
    adapters = {"NA": None, "CORAL": None}
    kw = dict(grid="g", orders=["Descending"], counts=[2, 6, "d"], iterations=2,
              metrics={"balanced_accuracy": True, "second_classifier": "logistic-regression"})
    ends = []
    original = oc.accuracy_curve
    monkeypatch.setattr(oc, "accuracy_curve", lambda *a, **k: (ends.append(k["n_features"]) if k["n_features"] == [d]
                                                              else None) or original(*a, **k))
    shared = {}
    for r, path in ranks.items():
        classification.run_adapters(caches, path, adapters, outputs={a: tmp_path / f"{r}-{a}-s.tsv" for a in adapters},
                                    shared=shared, **kw)
        classification.run_adapters(caches, path, adapters, outputs={a: tmp_path / f"{r}-{a}.tsv" for a in adapters},
                                    **kw)
    assert len(ends) == 2 * 2  # once per adapter and iteration, not per ranker
    rank = json.loads(ranks["ks"].read_text())
    for a, params in adapters.items():
        s_ks, s_rnd = (read_tsv(tmp_path / f"{r}-{a}-s.tsv").drop(columns="seconds") for r in ranks)
        for r in ranks:
            shared_rows = read_tsv(tmp_path / f"{r}-{a}-s.tsv").drop(columns="seconds")
            own = read_tsv(tmp_path / f"{r}-{a}.tsv").drop(columns="seconds")
            below = own["n_features"] < d
            pd.testing.assert_frame_equal(shared_rows[below], own[below], check_dtype=False)
        top = [c for c in s_ks.columns if c not in ("ranker",)]
        pd.testing.assert_frame_equal(s_ks.loc[s_ks["n_features"] == d, top].reset_index(drop=True),
                                      s_rnd.loc[s_rnd["n_features"] == d, top].reset_index(drop=True),
                                      check_dtype=False)  # a file's column reads as integers where all its are
        it = rank["iterations"][1]
        sub = it["source_subset"]
        adapter = None if a == "NA" else classification._build_adapter(a, params)
        (ref,) = accuracy_curve(Xs[sub], ys[sub], Xt, yt, {"x": np.arange(d)}, [d], adapter, kw["metrics"])
        row = s_ks[(s_ks["n_features"] == d) & (s_ks["iteration"] == 1)].iloc[0]
        assert row["accuracy"] == ref["accuracy"] and row["second_auc"] == ref["second_auc"]

    # the choice of k: the same rows below d; at d one computation for both rankers
    rules = {"entropy": None, "shift-test": {"q": 0.05}}
    calls = []
    import otfs.k_selection._base as kb

    scored = kb.score_adapted
    monkeypatch.setattr(kb, "score_adapted", lambda Zs, *a, **k: calls.append(Zs.shape[1]) or scored(Zs, *a, **k))
    shared = {}
    frames = {}
    for r, path in ranks.items():
        frames[r] = model_selection.run_pair(caches, path, {"NA": None}, rules, [2, 6, "d"], "knn", 1, 0.5,
                                             output=tmp_path / f"{r}-ms-s.tsv", iterations=2, shared=shared)
        own = model_selection.run_pair(caches, path, {"NA": None}, rules, [2, 6, "d"], "knn", 1, 0.5,
                                       output=tmp_path / f"{r}-ms.tsv", iterations=2)
        cols = [c for c in own.columns if "seconds" not in c]
        below = own["n_features"] < d
        pd.testing.assert_frame_equal(frames[r].loc[below, cols], own.loc[below, cols])
    assert calls.count(d) == 2 * 2 + 2  # shared: 2 iterations once for both rankers; unshared: 2 per ranker
    at_d = [f.loc[f["n_features"] == d, [c for c in f.columns if c != "ranker" and "seconds" not in c]]
            .reset_index(drop=True) for f in frames.values()]
    pd.testing.assert_frame_equal(*at_d)


def test_a_family_pair_adapts_once_for_the_curves_and_the_choice_of_k(tmp_path, monkeypatch):
    """rule run_family_pair's ``reuse``: an adapter of both the curves and the choice of k (OT3 where it
    applies) adapts each point once, and the second classifier the curves fitted on a point is not fitted again
    by the choice of k; the curve's rows and the choice of k's rows are those of the stages run apart, bit for
    bit (but the measured times); what the choice of k does not take is dropped per ranker."""
    import otfs.classification
    from otfs.adapters.coral import CorrelationAlignment
    from otfs_workflow.io import read_tsv
    from otfs_workflow.stages import classification, model_selection, ranking

    caches, (Xs, ys, Xt, yt) = toy_caches(tmp_path, seed=6)
    ranks = {}
    for r in ("ks", "random"):
        ranks[r] = tmp_path / f"{r}.json"
        ranking.run(caches, "toy", "src-tgt", r, iterations=[0, 1], per_class=10, output=ranks[r])
    calls, fits = [], []
    second = {"name": "logistic-regression", "standardize": True}
    fit_second = otfs.classification.second_classifier_scores
    monkeypatch.setattr(otfs.classification, "second_classifier_scores",
                        lambda *a, **k: fits.append(1) or fit_second(*a, **k))
    original = CorrelationAlignment._fit_adapt
    monkeypatch.setattr(CorrelationAlignment, "_fit_adapt", lambda self, *a: calls.append(a[0].shape) or
                        original(self, *a))
    curve_adapters = {"NA": None, "CORAL": None}
    ms_adapters = {"NA": None, "CORAL": None}
    rules = {"entropy": None, "IW": None}
    kw = dict(grid="g", orders=["Descending"], counts=[2, 6, "d"], iterations=2,
              metrics={"balanced_accuracy": True, "second_classifier": second})
    shared = {}
    for r, path in ranks.items():
        classification.run_adapters(caches, path, curve_adapters, shared=shared, reuse={"CORAL"},
                                    outputs={a: tmp_path / f"{r}-{a}-s.tsv" for a in curve_adapters}, **kw)
        kept = dict(shared[classification.KeptAdaptations.SLOT])
        assert kept and all(not z.flags.writeable for Zs, Zt, _ in kept.values() for z in (Zs, Zt))
        n_fits = len(fits)
        together = model_selection.run_pair(caches, path, ms_adapters, rules, [2, 6, "d"], "knn", 1, 0.5,
                                            output=tmp_path / f"{r}-ms-s.tsv", iterations=2, shared=shared,
                                            second_classifier=second)
        assert len(fits) == n_fits  # every point's second classifier was the curves'
        assert together["second_accuracy"].notna().all()
        assert not shared[classification.KeptAdaptations.SLOT]  # every kept adaptation was taken, once
        classification.KeptAdaptations(shared).clear()
        n_calls = len(calls)
        classification.run_adapters(caches, path, curve_adapters,
                                    outputs={a: tmp_path / f"{r}-{a}.tsv" for a in curve_adapters}, **kw)
        apart = model_selection.run_pair(caches, path, ms_adapters, rules, [2, 6, "d"], "knn", 1, 0.5,
                                         output=tmp_path / f"{r}-ms.tsv", iterations=2, second_classifier=second)
        # apart: the curves and the choice of k adapt every point (2 iterations x 3 counts) each
        assert len(calls) - n_calls == 2 * (2 * 3)
        cols = [c for c in apart.columns if "seconds" not in c]
        below = apart["n_features"] < Xs.shape[1]
        pd.testing.assert_frame_equal(together.loc[below, cols], apart.loc[below, cols])
        assert (together.loc[together["adapter"] == "CORAL", "seconds"] > 0).all()  # the curves' measured time
        for a in curve_adapters:
            s_rows, own = (read_tsv(tmp_path / f).drop(columns="seconds") for f in (f"{r}-{a}-s.tsv", f"{r}-{a}.tsv"))
            pd.testing.assert_frame_equal(s_rows[own["n_features"] < Xs.shape[1]],
                                          own[own["n_features"] < Xs.shape[1]], check_dtype=False)
    # shared: the first ranker adapts 2 iterations x 3 counts once for both stages, the second 2 x 2 (the
    # point of all features is the first ranker's); apart: 2 x 2 x 3 per ranker
    assert len(calls) == (2 * 3) + (2 * 2) + 2 * (2 * 2 * 3)


def test_the_leaderboards_point_of_all_features_is_computed_once_for_every_ranker(tmp_path):
    # rule classify_leaderboard_all_features: each iteration's point of all d features under every adapter, on the
    # ranking job's source subset and the data's order; the rankers' curves that read it equal, number for number,
    # those that compute that point themselves on the data's order (the families' shared point)
    from otfs_workflow.io import read_json
    from otfs_workflow.stages import classification, ranking

    caches, _ = toy_caches(tmp_path, seed=5)
    adapters = {"NA": None, "CORAL": None, "SA": {"n_components": 4}}
    ends = tmp_path / "ends.json"
    classification.run_all_features(caches, "toy", "src-tgt", adapters, "g", [0, 1, 2], 10, ends)
    held = read_json(ends)
    assert held["d"] == 12 and [it["iteration"] for it in held["adapters"]["SA"]["iterations"]] == [0, 1, 2]
    kw = dict(grid="g", orders=["Descending"], counts=[3, "d/2", "d"], iterations=3, as_frame=True)
    for ranker in ("ks", "random", "ot"):
        path = tmp_path / f"{ranker}.json"
        ranking.run(caches, "toy", "src-tgt", ranker, iterations=[0, 1, 2], per_class=10, output=path)
        subsets = [it["source_subset"] for it in read_json(path)["iterations"]]
        assert [it["source_subset"] for it in held["adapters"]["NA"]["iterations"]] == subsets
        outs = {a: tmp_path / f"{ranker}-{a}-{{}}.tsv" for a in adapters}
        read = classification.run_adapters(caches, path, adapters, outputs={a: str(o).format("read") for a, o in
                                                                             outs.items()}, ends=ends, **kw)
        computed = classification.run_adapters(caches, path, adapters, outputs={a: str(o).format("computed") for a, o
                                                                                 in outs.items()}, shared={}, **kw)
        for a in adapters:
            pd.testing.assert_frame_equal(read[a].drop(columns="seconds"), computed[a].drop(columns="seconds"))
            at_d = read[a][read[a]["n_features"] == 12].set_index("iteration")[["accuracy", "seconds"]]
            assert at_d.to_dict("index") == {it["iteration"]: {k: it["point"][k] for k in ("accuracy", "seconds")}
                                             for it in held["adapters"][a]["iterations"]}  # its time: the file's
    # a file of other parameters, or of another pair, is stale: an error naming it
    with pytest.raises(ValueError, match=r"ends.json: adapter 'SA' with \{'n_components': 4\}.*stale"):
        classification.run_adapters(caches, path, {"SA": {"n_components": 5}}, outputs={"SA": tmp_path / "x.tsv"},
                                    ends=ends, **kw)
    classification.run_all_features(caches, "toy", "tgt-src", {"NA": None}, "g", [0], 10, tmp_path / "other.json")
    with pytest.raises(ValueError, match=r"other.json: the points of all features of \('toy', 'tgt-src', 'g'\)"):
        classification.run_adapters(caches, path, {"NA": None}, outputs={"NA": tmp_path / "y.tsv"},
                                    ends=tmp_path / "other.json", **kw)
    assert not (tmp_path / "x.tsv").exists() and not (tmp_path / "y.tsv").exists()


def test_the_choice_of_ks_point_of_all_features_is_scored_once_for_every_ranker(tmp_path, monkeypatch):
    # rule score_model_selection_all_features: each iteration's row of all d features (adaptation, accuracy, the
    # scorers' scores, the data rules' choices) once per pair; score_model_selection's rows that read it equal,
    # but for the measured times, those it computes itself, and neither a scorer at d nor a data rule (whose
    # choice depends on the subset and the target alone) runs in the rankers' jobs
    import otfs.k_selection._base as kb
    from otfs.k_selection.shift_test import ShiftTest
    from otfs_workflow.io import read_tsv
    from otfs_workflow.stages import model_selection, ranking

    caches, _ = toy_caches(tmp_path, seed=7)
    adapters = {"NA": None, "CORAL": None}
    rules = {"entropy": None, "IW": None, "shift-test": {"q": 0.05}, "failing-loudly": {"alpha": 0.2}}
    args = (adapters, rules, [2, 6, "d"], "knn", 1, 0.5)
    ends = tmp_path / "ends.tsv"
    model_selection.run_pair_all_features(caches, "toy", "src-tgt", *args, [0, 1], 10, ends)
    scored, tested = kb.score_adapted, ShiftTest.pvalues
    calls, tests = [], []
    monkeypatch.setattr(kb, "score_adapted", lambda Zs, *a, **k: calls.append(Zs.shape[1]) or scored(Zs, *a, **k))
    monkeypatch.setattr(ShiftTest, "pvalues", lambda self, *a: tests.append(type(self).__name__) or tested(self, *a))
    for ranker in ("ks", "random"):
        path = tmp_path / f"{ranker}.json"
        ranking.run(caches, "toy", "src-tgt", ranker, iterations=[0, 1], per_class=10, output=path)
        calls.clear(), tests.clear()
        model_selection.run_pair(caches, path, *args, output=tmp_path / f"{ranker}-read.tsv", iterations=2, ends=ends)
        assert 12 not in calls and len(calls) == 2 * 2 * 2  # 2 iterations x 2 adapters x the 2 counts below d
        assert tests == []
        model_selection.run_pair(caches, path, *args, output=tmp_path / f"{ranker}-own.tsv", iterations=2)
        assert sorted(tests) == ["FailingLoudly", "FailingLoudly", "ShiftTest", "ShiftTest"]  # once per iteration
        read, own = (read_tsv(tmp_path / f"{ranker}-{k}.tsv") for k in ("read", "own"))
        assert list(read.columns) == list(own.columns)
        assert {"shift-test:k", "shift-test:unshifted", "failing-loudly:k", "failing-loudly:unshifted"} <= set(own)
        cols = [c for c in own.columns if "seconds" not in c]
        pd.testing.assert_frame_equal(read[cols], own[cols])
        assert (tmp_path / f"{ranker}-read.tsv").read_bytes().count(b"\n") == len(own) + 1
    # a file of other settings, or of another pair, is an error naming it
    with pytest.raises(ValueError, match=r"ends.tsv: no all-features rows of the adapter 'NA' with this job's "
                                         r"settings .*stale"):
        model_selection.run_pair(caches, path, adapters, {"entropy": None}, [2, 6, "d"], "knn", 1, 0.5,
                                 output=tmp_path / "x.tsv", iterations=2, ends=ends)
    model_selection.run_pair_all_features(caches, "toy", "tgt-src", *args, [0], 10, tmp_path / "other.tsv")
    with pytest.raises(ValueError, match=r"other.tsv: the all-features rows of \[\('toy', 'tgt-src'\)\]"):
        model_selection.run_pair(caches, path, *args, output=tmp_path / "y.tsv", iterations=2,
                                 ends=tmp_path / "other.tsv")
    assert not (tmp_path / "x.tsv").exists() and not (tmp_path / "y.tsv").exists()


def test_the_data_rules_columns_of_an_all_features_file_are_taken_only_where_unambiguous():
    from types import SimpleNamespace

    from otfs_workflow.stages.model_selection import _data_columns

    cols = ["iteration", "IW:score", "shift-test:k", "shift-test:unshifted", "failing-loudly:k"]
    scoring = SimpleNamespace(data_rules={"shift-test": 0, "failing-loudly": 0}, scorers={"IW": 0})
    assert _data_columns(cols, scoring) == ["shift-test:k", "shift-test:unshifted", "failing-loudly:k"]
    assert _data_columns(cols, SimpleNamespace(data_rules={}, scorers={"IW": 0})) == []
    # a rule without its k* column, or a column that a scorer's name could own too: computed again
    assert _data_columns(cols[:2] + cols[3:], scoring) is None
    assert _data_columns(cols + ["shift-test:x:k"], SimpleNamespace(data_rules={"shift-test": 0, "failing-loudly": 0},
                                                                   scorers={"shift-test:x": 0})) is None


def test_a_ranking_of_the_first_iterations_serves_the_grids_that_read_no_more(tmp_path):
    # rank_features ranks the first n of the protocol's iterations when every grid reading the feature set reads
    # no more (the data families: 5 of 19): the same records as the first n of a full ranking, and a reader of more
    # iterations (or of all, by default) fails naming the file instead of getting fewer
    import json

    from otfs_workflow.io import read_tsv
    from otfs_workflow.protocol import ranked_iterations, read_iterations
    from otfs_workflow.stages import classification, model_selection, ranking

    caches, _ = toy_caches(tmp_path, seed=4)
    full, short = tmp_path / "full.json", tmp_path / "short.json"
    ranking.run(caches, "toy", "src-tgt", "ks", iterations=[0, 1, 2, 3], per_class=10, output=full)
    ranking.run(caches, "toy", "src-tgt", "ks", iterations={"ranked": [0, 1], "protocol": 4}, per_class=10,
                output=short)
    a, b = (json.loads(p.read_text()) for p in (full, short))
    assert b["protocol_iterations"] == 4 and "protocol_iterations" not in a
    strip = [{k: v for k, v in it.items() if k != "ranking_time_s"} for it in a["iterations"][:2]]
    assert [{k: v for k, v in it.items() if k != "ranking_time_s"} for it in b["iterations"]] == strip
    kw = dict(grid="g", orders=["Descending"], counts=[2, "d"])
    classification.run(caches, full, "NA", output=tmp_path / "full.tsv", iterations=2, **kw)
    classification.run(caches, short, "NA", output=tmp_path / "short.tsv", iterations=2, **kw)
    x, y = (read_tsv(tmp_path / f).drop(columns="seconds") for f in ("full.tsv", "short.tsv"))
    pd.testing.assert_frame_equal(x, y)
    for iterations in (3, None):
        with pytest.raises(ValueError, match=r"short.json: ranked on the first 2 of the protocol's 4 iterations"):
            classification.run(caches, short, "NA", output=tmp_path / "more.tsv", iterations=iterations, **kw)
    with pytest.raises(ValueError, match="ranked on the first 2 of the protocol's 4"):
        model_selection.run_pair(caches, short, {"NA": None}, {"all-features": None}, [2, "d"], "knn", 1, 0.5,
                                 output=tmp_path / "ms.tsv", iterations=3)
    assert not (tmp_path / "more.tsv").exists() and not (tmp_path / "ms.tsv").exists()
    # a full ranking read whole; the rule's parameter forms
    assert len(read_iterations(a, full)) == 4 and len(read_iterations(a, full, 2)) == 2
    assert ranked_iterations([0, 1, 2]) == ([0, 1, 2], None)
    assert ranked_iterations({"ranked": [0, 1, 2], "protocol": 3}) == ([0, 1, 2], None)
    with pytest.raises(ValueError, match="3 ranked of the protocol's 2"):
        ranked_iterations({"ranked": [0, 1, 2], "protocol": 2})


@pytest.mark.parametrize("name, params", [(n, {}) for n in sorted(
    __import__("otfs.rankers._base", fromlist=["FEATURE_RANKERS"]).FEATURE_RANKERS)] + [("hsic-lasso", {"output": "label"})])
def test_a_ranker_says_it_needs_class_labels_exactly_when_it_cannot_fit_without_them(name, params):
    # the regression families leave out the rankers that say so (workflow/rules/shift.smk, CLASS_RANKERS)
    from otfs.rankers import FEATURE_RANKERS

    Xs, ys, Xt, _, _ = shifted_domains(n_s=60, n_t=70, d=12, k=2, n_classes=3, seed=1)
    ranker = FEATURE_RANKERS[name](**params)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ranker.fit(Xs, None, X_target=Xt)
        fits = True
    except ValueError as err:
        fits = False
        assert "y" in str(err) or "label" in str(err), err
    assert ranker.needs_class_labels() == (not fits)


def test_kept_adaptations_hash_a_points_arrays_only_where_that_adapter_kept_something(monkeypatch):
    """The choice of k asks for every point; where nothing is kept for the adapter with these parameters the
    answer is None without hashing the arrays, and what is kept is found only on the very same inputs."""
    from otfs_workflow.stages.classification import KeptAdaptations

    rng = np.random.RandomState(0)
    Xs, ys, Xt = rng.randn(20, 4), np.arange(20) % 2, rng.randn(30, 4)
    shared = {}
    kept = KeptAdaptations(shared)
    kept._kept[KeptAdaptations.key("OT3", {"reg": 1.0}, Xs, ys, Xt)] = ("Zs", "Zt", 0.1)
    hashed = []
    original = KeptAdaptations.key
    monkeypatch.setattr(KeptAdaptations, "key", staticmethod(lambda *a: hashed.append(a[0]) or original(*a)))
    assert kept.take("NA", None, Xs, ys, Xt) is None and kept.take("OT3", {"reg": 2.0}, Xs, ys, Xt) is None
    assert hashed == []
    assert kept.take("OT3", {"reg": 1.0}, Xs, ys, Xt + 1e-12) is None and hashed == ["OT3"]
    assert kept.take("OT3", {"reg": 1.0}, Xs, ys, Xt) == ("Zs", "Zt", 0.1) and not shared[KeptAdaptations.SLOT]
