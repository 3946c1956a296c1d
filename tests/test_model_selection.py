"""The label-free choice of the number of features: the rules against direct formulas, SciPy and
statsmodels; the stage's choices, regret and gain; the configuration's checks."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from .conftest import REPO, require_module, shifted_domains

require_module("skada", "skada", module_level=True)

from otfs.classification import make_classifier  # noqa: E402
from otfs.k_selection._base import SELECTION_RULES, choose_k, get_rule, score_adapted  # noqa: E402

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def test_the_rules_are_registered_one_file_each():
    assert set(SELECTION_RULES) >= {"IW", "DEV", "circular", "entropy", "SND", "shift-test", "oracle", "all-features"}
    assert {n for n in SELECTION_RULES if SELECTION_RULES[n].reads_target_labels} == {"oracle"}
    # every rule, built with its defaults, keeps its kind (a parameter must not shadow it: the report dispatches on it)
    kinds = {n: get_rule(n).kind for n in SELECTION_RULES}
    assert set(kinds.values()) == {"scorer", "data", "oracle"} and kinds["MixVal"] == "scorer", kinds
    assert all(kinds[n] == "scorer" for n in ("MaNo", "ATC", "COT")), kinds
    assert all(getattr(type(get_rule(n)), "kind") == k for n, k in kinds.items())
    with pytest.raises(KeyError, match=r"unknown selection rule 'entropie'; registered selection rules: .*"
                                       r"\(did you mean 'entropy'\?\)"):
        get_rule("entropie")
    with pytest.raises(ValueError, match="'q' parameter of ShiftTest must be a float in the range \\(0.0, 1.0\\)"):
        get_rule("shift-test", q=1.5)


def test_choose_k_takes_the_best_score_and_breaks_ties_towards_more_features():
    assert choose_k([10, 20, 40], [0.1, 0.3, 0.2]) == 20
    assert choose_k([10, 20, 40], [0.3, 0.1, 0.3]) == 40
    assert choose_k([10, 20, 40], [np.nan, 0.5, np.nan]) == 20
    assert choose_k([10, 20, 40], [np.nan] * 3) == 40
    with pytest.raises(ValueError, match="one score per number of features"):
        choose_k([10, 20], [1.0])


def test_the_shift_test_counts_the_features_benjamini_hochberg_keeps():
    # against SciPy's KS test feature by feature and statsmodels' Benjamini-Hochberg
    from scipy.stats import ks_2samp
    from statsmodels.stats.multitest import multipletests

    rng = np.random.RandomState(0)
    Xs, Xt = rng.randn(150, 30), rng.randn(170, 30)
    Xt[:, :9] += np.linspace(0.2, 2.0, 9)  # 9 shifted features, some weakly
    rule = get_rule("shift-test", q=0.05)
    p = np.array([ks_2samp(Xs[:, j], Xt[:, j], method="asymp").pvalue for j in range(30)])
    np.testing.assert_allclose(rule.pvalues(Xs, Xt), p, rtol=1e-6, atol=1e-12)
    m = int(np.sum(~multipletests(p, alpha=0.05, method="fdr_bh")[0]))
    assert 21 <= m < 30
    k, info = rule.choose_count(Xs, Xt, [4, 8, 16, 24, 30])
    assert info["unshifted"] == m and k == max(c for c in [4, 8, 16, 24, 30] if c <= m)
    # nothing shifted: every feature is kept; everything shifted: the smallest count
    assert rule.choose_count(Xs, rng.randn(170, 30), [4, 8, 16, 30])[0] == 30
    assert rule.choose_count(Xs, Xt + 5, [4, 8, 16, 30]) == (4, {"unshifted": 0})


def test_failing_loudly_keeps_what_bonferroni_does_not_reject():
    # against SciPy's KS test feature by feature and statsmodels' Bonferroni correction
    from scipy.stats import ks_2samp
    from statsmodels.stats.multitest import multipletests

    rng = np.random.RandomState(1)
    Xs, Xt = rng.randn(150, 30), rng.randn(170, 30)
    Xt[:, :9] += np.linspace(0.2, 2.0, 9)
    p = np.array([ks_2samp(Xs[:, j], Xt[:, j], method="asymp").pvalue for j in range(30)])
    m = int(np.sum(~multipletests(p, alpha=0.05, method="bonferroni")[0]))
    bh = int(np.sum(~multipletests(p, alpha=0.05, method="fdr_bh")[0]))
    assert 21 <= bh <= m < 30  # the family-wise guard keeps at least as many features
    rule = get_rule("failing-loudly")
    k, info = rule.choose_count(Xs, Xt, [4, 8, 16, 24, 30])
    assert info["unshifted"] == m and k == max(c for c in [4, 8, 16, 24, 30] if c <= m)
    assert rule.choose_count(Xs, Xt + 5, [4, 8, 16, 30]) == (4, {"unshifted": 0})
    with pytest.raises(ValueError, match="'alpha' parameter"):
        get_rule("failing-loudly", alpha=0).choose_count(Xs, Xt, [4, 30])
    # its ranking is the ks ranker's: the p-values fall as the statistics grow (equal statistics that differ in
    # their last bits may swap)
    from otfs.rankers import FEATURE_RANKERS

    ks = FEATURE_RANKERS["ks"]().fit(Xs, None, X_target=Xt)
    p_by_statistic = ks.pvalues_[ks.order_]
    assert np.all(np.diff(p_by_statistic) <= 1e-12 * p_by_statistic[:-1])


def test_skadas_scorers_score_the_validation_split():
    from skada.model_selection import StratifiedDomainShuffleSplit
    from sklearn.neighbors import KNeighborsClassifier

    Xs, ys, Xt, yt, _ = shifted_domains(n_s=120, n_t=150, d=10, k=2)
    rules = {name: get_rule(name) for name in ("IW", "DEV", "circular", "entropy", "SND")}
    out = score_adapted(Xs, ys, Xt, rules, make_classifier({"name": "knn", "n_neighbors": 5}), n_splits=2,
                        test_size=0.5, random_state=3)
    assert set(out) == set(rules) and all(np.isfinite(rec["score"]) for rec in out.values())
    assert 1.0 <= out["IW"]["ess"] <= 60
    # prediction entropy by its formula: minus the mean of -p log p over the validation target's probabilities,
    # from a 5-NN fitted on the training source of the same splits, averaged over the splits
    X = np.vstack([Xs, Xt])
    y = np.concatenate([ys, -np.ones(len(Xt), int)])
    sd = np.concatenate([np.ones(len(Xs), int), -2 * np.ones(len(Xt), int)])
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        splits = list(StratifiedDomainShuffleSplit(n_splits=2, test_size=0.5, random_state=3).split(X, y, sd))
    values = []
    for train, val in splits:
        src_train = train[sd[train] > 0]
        knn = KNeighborsClassifier(5, algorithm="brute").fit(X[src_train], y[src_train])
        p = knn.predict_proba(X[val][sd[val] < 0])
        ent = -p * np.log(p + 1e-7)  # skada's formula where the estimator has no predict_log_proba
        values.append(-ent.mean())
    assert out["entropy"]["score"] == pytest.approx(np.mean(values), rel=1e-12)
    # circular validation's score is a balanced accuracy on the source
    assert 0 <= out["circular"]["score"] <= 1
    # the same seed gives the same scores
    again = score_adapted(Xs, ys, Xt, rules, make_classifier({"name": "knn", "n_neighbors": 5}), 2, 0.5, 3)
    assert again == out


def _count_domains(seed):
    """Word-count-like domains: few distinct values, duplicated rows (distance ties), three classes."""
    rng = np.random.RandomState(seed)
    ys, yt = rng.randint(0, 3, 90), rng.randint(0, 3, 110)
    Xs = rng.poisson(0.3 + 0.5 * (ys[:, None] == np.arange(12) % 3), size=(90, 12)).astype(float)
    Xt = rng.poisson(0.5 + 0.5 * (yt[:, None] == np.arange(12) % 3), size=(110, 12)).astype(float)
    Xs[10:20] = Xs[0]  # duplicates
    return Xs, np.array(["a", "b", "c"])[ys], Xt


@pytest.mark.parametrize("case", ["gaussian", "counts", "one-feature", "far", "logistic", "one-predicted-class"])
def test_direct_scores_equal_skadas_scorers(case):
    """score_adapted's direct engine against skada's scorers on skada's pipeline, number for number (scores,
    IW's effective sample size, warning counts): two and three classes, ties, one feature, domains so far apart
    that IW's weights all underflow, a classifier with log-probabilities and sample weights (logistic
    regression), and a target predicted as one class (circular validation's shortcut)."""
    rules = {name: get_rule(name) for name in ("IW", "DEV", "circular", "entropy", "SND", "MixVal", "MaNo", "ATC",
                                               "COT")}
    knn = make_classifier({"name": "knn", "n_neighbors": 5})
    if case in ("gaussian", "logistic", "far"):
        Xs, ys, Xt, _, _ = shifted_domains(n_s=120, n_t=150, d=10, k=2)
        if case == "far":
            Xt = Xt + 60.0
    elif case == "one-predicted-class":
        Xs, ys, Xt, _, _ = shifted_domains(n_s=120, n_t=150, d=10, k=2)
        Xt = np.repeat(Xs[:1], 150, axis=0) + 1e-3 * np.random.RandomState(0).randn(150, 10)
    else:
        Xs, ys, Xt = _count_domains(7)
        if case == "one-feature":
            Xs, Xt = Xs[:, :1], Xt[:, :1]
    clf = make_classifier("logistic-regression") if case == "logistic" else knn
    for seed in (3, 11):
        direct = score_adapted(Xs, ys, Xt, rules, clf, 2, 0.5, seed)
        via_skada = score_adapted(Xs, ys, Xt, rules, clf, 2, 0.5, seed, engine="skada")
        assert direct == via_skada
    if case == "far":
        assert direct["IW"]["warnings"] > 0  # all weights zero: uniform weights, as skada does
    if case == "one-predicted-class":
        assert direct["circular"]["warnings"] > 0
    with pytest.raises(ValueError, match="engine"):
        score_adapted(Xs, ys, Xt, rules, clf, 2, 0.5, 3, engine="fast")


@pytest.mark.parametrize("case", ["counts", "gaussian"])
def test_a_validation_splits_kept_predictions_are_the_classifiers_own(case):
    """ValidationSplit answers predict, the source's weighted score and DEV's rows of source probabilities from
    the k-NN's kept probabilities: each equal (==) to the fitted classifier's own call on those samples, with
    distance ties (duplicated count rows) and without; another classifier keeps its own calls."""
    from otfs.k_selection._base import ValidationSplit

    if case == "counts":
        Xs, ys, Xt = _count_domains(5)
    else:
        Xs, ys, Xt, _, _ = shifted_domains(n_s=120, n_t=150, d=10, k=2)
    ys = np.unique(ys, return_inverse=True)[1]
    X = np.concatenate([Xs, Xt])
    y = np.concatenate([ys, np.full(len(Xt), -1)])
    domain = np.concatenate([np.ones(len(Xs), int), -np.ones(len(Xt), int)])
    train = np.random.RandomState(0).rand(len(X)) < 0.5
    for clf in (make_classifier({"name": "knn", "n_neighbors": 5}), make_classifier("logistic-regression")):
        split = ValidationSplit(clf, X[train], y[train], domain[train], X[~train], y[~train], domain[~train])
        fitted = split.fitted
        rows = np.random.RandomState(1).permutation(len(split.Xs))[: len(split.Xs) // 3]
        weights = np.random.RandomState(2).rand(len(split.Xs))
        for which, Z in (("source", split.Xs), ("target", split.Xt)):
            assert np.array_equal(split.predict(which), fitted.predict(Z)), which
        assert np.array_equal(split.source_proba_rows(rows), fitted.predict_proba(split.Xs[rows]))
        assert split.score_source(weights) == fitted.score(split.Xs, split.ys, sample_weight=weights)


def test_a_k_nns_weighted_source_score_searches_no_neighbours_again(monkeypatch):
    """KNeighborsClassifier overrides score only to call ClassifierMixin.score: the source's weighted score is
    then the accuracy of the kept predictions, with no neighbour search of its own."""
    from sklearn.neighbors import KNeighborsClassifier

    from otfs.k_selection._base import ValidationSplit

    Xs, ys, Xt = _count_domains(5)
    ys = np.unique(ys, return_inverse=True)[1]
    X, y = np.concatenate([Xs, Xt]), np.concatenate([ys, np.full(len(Xt), -1)])
    domain = np.concatenate([np.ones(len(Xs), int), -np.ones(len(Xt), int)])
    train = np.random.RandomState(0).rand(len(X)) < 0.5
    split = ValidationSplit(make_classifier({"name": "knn", "n_neighbors": 5}), X[train], y[train], domain[train],
                            X[~train], y[~train], domain[~train])
    weights = np.random.RandomState(2).rand(len(split.Xs))
    own = split.fitted.score(split.Xs, split.ys, sample_weight=weights)
    split.predict_proba("source")
    searches = []
    kneighbors = KNeighborsClassifier.kneighbors
    monkeypatch.setattr(KNeighborsClassifier, "kneighbors", lambda *a, **k: searches.append(1) or kneighbors(*a, **k))
    assert split.score_source(weights) == own and searches == []


def test_balanced_accuracy_is_scikit_learns_with_its_warning():
    import warnings

    from sklearn.metrics import balanced_accuracy_score

    from otfs.k_selection._base import _balanced_accuracy_score as balanced_accuracy

    rng = np.random.RandomState(0)
    cases = [(rng.randint(0, 5, 300), rng.randint(0, 5, 300)), (rng.randint(0, 3, 40), rng.randint(0, 6, 40)),
             (np.array([2, 2, 2]), np.array([2, 2, 2])), (np.array([1, 3, 3, 7]), np.array([7, 7, 7, 7])),
             (np.array(["b", "a", "a"]), np.array(["a", "c", "a"]))]
    for y_true, y_pred in cases:
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            value = balanced_accuracy(y_true, y_pred)
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            expected = balanced_accuracy_score(y_true, y_pred)
        assert value == expected and type(value) is float
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert len(theirs) == 1  # the last case predicts a class that y_true lacks


def test_the_validation_splits_are_drawn_once_and_checked_again():
    """score_adapted keeps the splits of (settings, labels, domains): the same indices as skada's split drawn
    afresh, a caller's change to them does not reach the next call, another seed or other labels draw again,
    and an X with NaN still gets skada's error."""
    from skada.model_selection import StratifiedDomainShuffleSplit

    from otfs._skada import stack_domains
    from otfs.k_selection import _base

    Xs, ys, Xt, _, _ = shifted_domains(n_s=60, n_t=80, d=4, k=2)
    X, y, domain, _ = stack_domains(Xs, ys, Xt)
    _base._SPLITS.clear()
    for seed in (3, 4, 3):
        splitter = StratifiedDomainShuffleSplit(n_splits=2, test_size=0.5, random_state=seed)
        fresh = list(splitter.split(X, y, domain))
        for _ in range(2):
            kept = _base._split_indices(splitter, X, y, domain)
            assert len(kept) == 2 and all(np.array_equal(a, b) and np.array_equal(c, e)
                                          for (a, c), (b, e) in zip(kept, fresh, strict=True))
            kept[0][0][:] = -1
    assert len(_base._SPLITS) == 2
    _base._split_indices(splitter, X, y[::-1].copy(), domain)
    assert len(_base._SPLITS) == 3
    bad = X.copy()
    bad[-1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _base._split_indices(splitter, bad, y, domain)


def _mixval_as_the_authors_loop(predict, Xt, lam, batch_size, intra):
    """ICE as val_mixval_inter.py / val_mixval_intra.py compute it, batch by batch (numpy instead of torch)."""
    pl = predict(Xt)
    order = np.argsort(pl, kind="stable") if intra else np.arange(len(Xt))
    hits = total = 0
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        rand_idx = np.arange(len(idx))[::-1]  # torch.arange(batch_size).flip([0])
        pl_a, pl_b = pl[idx], pl[idx][rand_idx]
        mix = lam * Xt[idx] + (1 - lam) * Xt[idx][rand_idx]
        pick = pl_a == pl_b if intra else pl_a != pl_b
        hits += int(np.sum(predict(mix)[pick] == pl_a[pick]))
        total += int(pick.sum())
    return hits / total


def test_mixval_is_the_authors_ice_score():
    from sklearn.neighbors import KNeighborsClassifier

    Xs, ys, Xt, _, _ = shifted_domains(n_s=120, n_t=300, d=6, k=3, n_classes=3)
    clf = KNeighborsClassifier(5).fit(Xs, ys)
    for kind in ("inter", "intra"):
        rule = get_rule("MixVal", pairs=kind, batch_size=64)
        value, counts = rule.ice(clf.predict, Xt, clf.predict(Xt))
        assert value == _mixval_as_the_authors_loop(clf.predict, Xt, 0.55, 64, kind == "intra")
        assert counts[f"{kind}_pairs"] > 0
    both, counts = get_rule("MixVal", batch_size=64).ice(clf.predict, Xt, clf.predict(Xt))
    assert both == np.mean([_mixval_as_the_authors_loop(clf.predict, Xt, 0.55, 64, intra) for intra in (0, 1)])
    assert 0 < counts["inter_pairs"] < 300 and 0 < counts["intra_pairs"] <= 300
    # by hand: a threshold at 0 on one feature; target at -1, -0.2, 0.3, 2 (pseudo-labels 0, 0, 1, 1); mirrored
    # pairs (0, 3), (1, 2), (2, 1), (3, 0), all inter-cluster; 0.55 a + 0.45 b is 0.35, 0.025, 0.075 and 0.65:
    # all on class 1's side, so the two pairs dominated by a class-0 sample miss
    def threshold(X):
        return (np.asarray(X)[:, 0] > 0).astype(int)

    Xh = np.array([[-1.0], [-0.2], [0.3], [2.0]])
    assert get_rule("MixVal", pairs="inter").ice(threshold, Xh, threshold(Xh))[0] == 0.5
    with pytest.warns(UserWarning, match="no inter-cluster pair"):
        value, _ = get_rule("MixVal", pairs="inter").ice(threshold, Xh[:2], threshold(Xh[:2]))
    assert np.isnan(value)
    with pytest.raises(ValueError, match="'lam' parameter"):
        get_rule("MixVal", lam=0.4).ice(threshold, Xh, threshold(Xh))


def _direct_log_density(X, Y, h):
    """The Gaussian kernel density estimate's log density by a sum of squared differences per pair."""
    from scipy.special import logsumexp

    sq = np.array([[np.sum((x - y) ** 2) for y in Y] for x in X])
    d = X.shape[1]
    return logsumexp(-sq / (2 * h * h), axis=1) - np.log(len(Y)) - d / 2 * np.log(2 * np.pi) - d * np.log(h)


def test_importance_weighting_scores_each_sample_once_and_equals_skadas_own(monkeypatch):
    """IW's estimate keeps its last log densities for the effective sample size: the score and the ess are those of
    skada's scorer with scikit-learn's KernelDensity, recomputed here, where scikit-learn's is right (distances of a
    few bandwidths), and each estimate scores the validation source once per split."""
    from sklearn.neighbors import KernelDensity

    import otfs.k_selection.importance_weighted as iw

    Xs, ys, Xt, _, _ = shifted_domains(n_s=120, n_t=150, d=10, k=2)
    rule = get_rule("IW", bandwidth=2.0)
    clf = make_classifier({"name": "knn", "n_neighbors": 5})
    calls = []
    original = iw.gaussian_log_density
    monkeypatch.setattr(iw, "gaussian_log_density", lambda X, *a: calls.append(len(X)) or original(X, *a))
    out = score_adapted(Xs, ys, Xt, {"IW": rule}, clf, n_splits=2, test_size=0.5, random_state=3)
    assert len(calls) == 2 * 2  # two estimates, two splits: the diagnostics scored nothing again

    class Plain(iw.ImportanceWeighted):  # the same rule with scikit-learn's estimate, scoring every time
        direct = False  # through skada's scorer, which calls make_scorer

        def make_scorer(self, random_state):
            from skada.metrics import ImportanceWeightedScorer

            return ImportanceWeightedScorer(weight_estimator=KernelDensity(bandwidth=self.bandwidth))

    plain = score_adapted(Xs, ys, Xt, {"IW": Plain(bandwidth=2.0)}, clf, n_splits=2, test_size=0.5, random_state=3)
    assert out["IW"]["score"] == pytest.approx(plain["IW"]["score"], rel=1e-12)
    assert out["IW"]["ess"] == pytest.approx(plain["IW"]["ess"], rel=1e-12)
    # a refit forgets what was scored
    kde = iw._LastScoredKernelDensity(bandwidth=1.0).fit(Xs)
    first = kde.score_samples(Xt)
    np.testing.assert_allclose(kde.fit(Xt).score_samples(Xt), KernelDensity(bandwidth=1.0).fit(Xt).score_samples(Xt),
                               rtol=1e-12)
    assert not np.array_equal(first, kde.score_samples(Xt))


@pytest.mark.parametrize("d, bandwidth, offset, scale", [
    (3, 0.5, 50.0, 3.0), (40, 1.0, 50.0, 3.0), (200, 1.0, 50.0, 3.0), (200, "scott", 50.0, 3.0),
    (60, "silverman", 50.0, 3.0), (64, 1.0, 0.0, 1.0)])
def test_importance_weightings_density_is_the_direct_sum_where_the_kernel_underflows(d, bandwidth, offset, scale):
    """The estimate's log densities against a sum of squared differences per pair, within 1e-12 relative, also at
    tens of bandwidths apart, where every kernel value underflows, with an offset that a product of norms would lose
    precision to; its bandwidth is scikit-learn's. The last case, two unit Gaussians one apart per feature in 64
    dimensions, is one where scikit-learn's tree search returned log densities off by 53 (issues #7492, #25799)."""
    from sklearn.neighbors import KernelDensity

    import otfs.k_selection.importance_weighted as iw

    rng = np.random.RandomState(d)
    Y = rng.randn(100, d) * scale + offset
    X = np.r_[rng.randn(30, d) * scale + offset + 1.0, Y[:5]]  # five of the estimate's own samples: distance 0
    kde = iw._LastScoredKernelDensity(bandwidth=bandwidth).fit(Y)
    assert kde.bandwidth_ == KernelDensity(bandwidth=bandwidth).fit(Y).bandwidth_
    ref = _direct_log_density(X, Y, kde.bandwidth_)
    np.testing.assert_allclose(kde.score_samples(X), ref, rtol=1e-12)
    if d == 200 and bandwidth == 1.0:
        assert np.all(ref[:30] < -1000)  # the kernel at e^-1000 and less: far below the smallest double


def test_importance_weightings_density_refuses_what_it_does_not_compute():
    import otfs.k_selection.importance_weighted as iw

    X = np.random.RandomState(0).randn(10, 3)
    for kwargs in ({"kernel": "tophat"}, {"rtol": 1e-3}, {"metric": "manhattan"}):
        with pytest.raises(ValueError, match="exact Gaussian estimate only"):
            iw._LastScoredKernelDensity(**kwargs).fit(X)
    with pytest.raises(ValueError, match="exact Gaussian estimate only"):
        iw._LastScoredKernelDensity().fit(X, sample_weight=np.ones(10))
    with pytest.raises(ValueError, match="non-empty 2-D sample"):
        iw._LastScoredKernelDensity().fit(X[:0])
    with pytest.raises(ValueError, match="3 features"):
        iw._LastScoredKernelDensity().fit(X).score_samples(X[:, :2])


def _long(accuracy, scores):
    counts = [10, 20, 40]
    rows = []
    for it, (acc, sc) in enumerate(zip(accuracy, scores)):
        for n, a, s in zip(counts, acc, sc):
            rows.append({"d": 40, "feature_set": "toy", "pair": "a-b", "source": "a", "target": "b", "ranker": "ks",
                         "adapter": "NA", "iteration": it, "n_features": n, "accuracy": a, "entropy:score": s,
                         "shift-test:k": 20})
    return pd.DataFrame(rows)


def test_choices_measure_regret_against_the_oracle_and_gain_over_all_features():
    from otfs_workflow.stages.model_selection import choices, summarise

    long = _long(accuracy=[[50, 70, 60], [40, 30, 45]], scores=[[0.1, 0.2, 0.3], [0.9, 0.1, 0.1]])
    rules = {"entropy": {}, "shift-test": {}, "oracle": {}, "all-features": {}}
    chosen = choices(long, rules).set_index(["iteration", "rule"])
    assert chosen.loc[(0, "entropy"), ["k", "accuracy", "regret", "gain"]].tolist() == [40, 60, 10, 0]
    assert chosen.loc[(1, "entropy"), ["k", "accuracy", "regret", "gain"]].tolist() == [10, 40, 5, -5]
    assert chosen.loc[(0, "shift-test"), ["k", "accuracy", "regret", "gain"]].tolist() == [20, 70, 0, 10]
    assert chosen.loc[(0, "oracle"), "k"] == 20 and chosen.loc[(1, "oracle"), "k"] == 40
    assert (chosen.xs("all-features", level="rule")["k"] == 40).all()
    summary = summarise(chosen.reset_index(), ["dataset", "adapter"]).set_index("rule")
    assert summary.loc["shift-test", ["accuracy", "regret", "beats_all", "loses_all"]].tolist() == [50, 7.5, 0.5, 0.5]
    assert summary.loc["entropy", ["beats_all", "ties_all", "loses_all"]].tolist() == [0, 0.5, 0.5]
    with pytest.raises(ValueError, match=r"the references \['oracle'\]"):
        choices(long, {"entropy": {}, "all-features": {}})
    with pytest.raises(ValueError, match="no scores of the rule 'SND'"):
        choices(long, {"SND": {}, "oracle": {}, "all-features": {}})


@pytest.mark.parametrize("change, message", [
    ({"rules": {"oracle": {}, "all-features": {}, "entropie": {}}}, "model_selection.rules.entropie: unknown selection "
                                                                    "rule 'entropie'"),
    ({"rules": {"entropy": {}, "all-features": {}}}, "the reference 'oracle' is missing"),
    ({"rules": {"oracle": {}, "all-features": {}, "shift-test": {"q": 2}}}, "model_selection.rules.shift-test: The 'q'"),
    ({"classifier": {"name": "svm"}}, "model_selection.classifier: unknown classifier 'svm'"),
    ({"grid": "table1"}, "grids.table1 needs the Descending order and \"d\""),
    ({"adapters": ["NA", "skada:KMMReweight"]}, "'skada:KMMReweight' predicts labels without adapted samples"),
])
def test_the_configuration_of_model_selection_is_checked(change, message):
    from otfs_workflow.config import ConfigError, load_yaml, validate_config

    cfg = load_yaml(REPO / "config.yaml")
    cfg["model_selection"].update(change)
    if change.get("grid") == "table1":
        cfg["grids"]["table1"]["feature_counts"] = ["d/8"]
    with pytest.raises(ConfigError, match=".*".join(map(__import__("re").escape, message.split("'")))):
        validate_config(cfg, SCHEMA)


def test_mano_atc_and_cot_against_hand_computations():
    """The three accuracy estimates on probabilities small enough to compute by hand."""
    from otfs.k_selection.atc import confidence, thresholded_share
    from otfs.k_selection.cot import cot_error

    # MaNo: (mean of P ** 4) ** (1 / 4) over the whole matrix (skada's MaNoScorer on a pipeline)
    P = np.array([[0.8, 0.2], [0.4, 0.6], [1.0, 0.0]])
    by_hand = ((0.8**4 + 0.2**4 + 0.4**4 + 0.6**4 + 1.0) / 6) ** 0.25
    from types import SimpleNamespace

    split = SimpleNamespace(predict_proba=lambda which: P)
    assert get_rule("MaNo").score_split(split, 0)[0] == pytest.approx(by_hand, rel=1e-15)
    # ATC: 5 source samples, 3 right (accuracy 0.6), confidences 0.9 0.8 0.7 0.6 0.5: the threshold keeps the 3
    # largest, t = 0.7; target confidences 0.95 0.75 0.7 0.65: 2 above t, 1 at t (lam = 1): 3 of 4
    value, t = thresholded_share([0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 1, 1, 0], [0.95, 0.75, 0.7, 0.65])
    assert (value, t) == (0.75, 0.7)
    # ties split: confidences 1 1 1 0.5 with accuracy 0.5 keep 2 of the 3 tied samples (lam = 2/3), so a target
    # all at 1 is estimated at 2/3, and one at 0.5 at 0
    assert thresholded_share([1, 1, 1, 0.5], [1, 1, 0, 0], [1, 1, 1])[0] == pytest.approx(2 / 3)
    assert thresholded_share([1, 1, 1, 0.5], [1, 1, 0, 0], [0.5, 0.5])[0] == 0
    # negative entropy, 0 log 0 = 0
    np.testing.assert_allclose(confidence(P, "negative-entropy"),
                               [0.8 * np.log(0.8) + 0.2 * np.log(0.2), 0.4 * np.log(0.4) + 0.6 * np.log(0.6), 0.0])
    np.testing.assert_array_equal(confidence(P, "max-confidence"), [0.8, 0.6, 1.0])
    # COT: source classes a, b in halves; target probabilities (0.9, 0.1) and (0.2, 0.8): the cost 1 - p_c,
    # [[0.1, 0.8], [0.9, 0.2]]; the plan sends a to the first sample, b to the second: 0.5 * 0.1 + 0.5 * 0.2
    assert cot_error(["a", "b"], ["a", "b"], [[0.9, 0.1], [0.2, 0.8]]) == pytest.approx(0.15, rel=1e-14)
    # and against POT's emd2 on the total-variation cost written out, three classes, unequal shares
    import ot

    rng = np.random.default_rng(0)
    Pt = rng.dirichlet(np.ones(3), size=7)
    ys = np.array([0, 0, 0, 1, 2, 2])
    onehot = np.eye(3)
    M = 0.5 * np.abs(onehot[:, None, :] - Pt[None, :, :]).sum(axis=2)
    ref = ot.emd2(np.array([3, 1, 2]) / 6, np.full(7, 1 / 7), M)
    assert cot_error(ys, [0, 1, 2], Pt) == pytest.approx(ref, rel=1e-12)
    with pytest.raises(ValueError, match="not all among the classifier's classes"):
        cot_error([0, 3], [0, 1], Pt[:, :2])
    # the rules' scores: estimated accuracies in [0, 1]
    assert get_rule("COT").estimate(None, ["a", "b"], ["a", "b"], [[0.9, 0.1], [0.2, 0.8]])[0] == pytest.approx(0.85)
    with pytest.raises(ValueError, match="score"):
        get_rule("ATC", score="entropy")
    with pytest.raises(ValueError, match="p"):
        get_rule("MaNo", p=0)


def test_ensv_scores_each_candidate_by_its_agreement_with_the_ensembles_mean_probability():
    """EnsV by hand: three candidates, four target samples, two classes; the ensemble is the argmax of the mean
    probability, each candidate's score its share of samples whose argmax is the ensemble's."""
    rule = get_rule("EnsV")
    P = np.array([[[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.5, 0.5]],
                  [[0.8, 0.2], [0.2, 0.8], [0.4, 0.6], [0.3, 0.7]],
                  [[0.3, 0.7], [0.3, 0.7], [0.1, 0.9], [0.6, 0.4]]])
    # means: (0.667, 0.333), (0.367, 0.633), (0.233, 0.767), (0.467, 0.533): pseudo-labels 0, 1, 1, 1
    # argmaxes: candidate 0: 0 0 1 0 (a tie goes to the first class): 2 of 4; candidate 1: 0 1 1 1: 4 of 4;
    # candidate 2: 1 1 1 0: 2 of 4
    np.testing.assert_array_equal(rule.score_candidates(P), [0.5, 1.0, 0.5])
    # an ensemble of the first candidate alone: each candidate's agreement with it
    np.testing.assert_array_equal(rule.score_candidates(P, [True, False, False]), [1.0, 0.5, 0.5])
    with pytest.raises(ValueError, match="members must mark at least one"):
        rule.score_candidates(P, [False, False, False])
    with pytest.raises(ValueError, match="the same shape"):
        rule.score_candidates([P[0], P[1][:3]])
    with pytest.raises(TypeError, match="score_candidates"):
        rule.make_scorer(0)


@pytest.mark.parametrize("engine", ["direct", "skada"])
def test_the_target_probabilities_kept_for_the_ensemble_are_the_classifiers_own(engine):
    """score_adapted's target_proba: the classifier fitted on each split's training source, on the split's
    validation target samples, the splits concatenated; the ensemble rules get no entry of their own."""
    from sklearn.neighbors import KNeighborsClassifier

    from otfs._skada import import_skada, stack_domains
    from otfs.k_selection._base import score_adapted

    rng = np.random.default_rng(3)
    Zs, ys, Zt = rng.normal(size=(40, 3)), np.repeat([0, 1], 20), rng.normal(size=(30, 3)) + 0.5
    kept = []
    out = score_adapted(Zs, ys, Zt, {"entropy": get_rule("entropy"), "EnsV": get_rule("EnsV")},
                        KNeighborsClassifier(5), 2, 0.5, 7, engine=engine, target_proba=kept)
    assert set(out) == {"entropy"} and len(kept) == 1
    X, y, domain, _ = stack_domains(Zs, ys, Zt)
    split = import_skada("skada.model_selection").StratifiedDomainShuffleSplit(n_splits=2, test_size=0.5,
                                                                                random_state=7)
    expected = []
    for train, val in split.split(X, y, domain):
        source = train[domain[train] > 0]
        clf = KNeighborsClassifier(5).fit(X[source], y[source])
        expected.append(clf.predict_proba(X[val[domain[val] < 0]]))
    np.testing.assert_array_equal(kept[0], np.concatenate(expected))


def test_probabilities_survive_a_tsv_cell_and_a_bad_cell_is_named():
    from otfs.k_selection import decode_proba, encode_proba

    knn = np.array([[0.2, 0.8], [0.0, 1.0], [0.6, 0.4]])  # a 5-NN's probabilities: kept exactly
    assert np.array_equal(decode_proba(encode_proba(knn)), knn)
    rough = np.random.default_rng(0).dirichlet(np.ones(4), size=5)
    assert np.abs(decode_proba(encode_proba(rough)) - rough).max() <= 0.5 / 255
    with pytest.raises(ValueError, match="row 3 of t.tsv: not a cell of encode_proba"):
        decode_proba("u8:2x2:AAE=", "row 3 of t.tsv")
    with pytest.raises(ValueError, match="probabilities in"):
        encode_proba([[1.5, -0.5]])


def test_the_ensemble_of_a_task_counts_the_point_of_all_features_once():
    """with_ensemble_scores on a task's candidates: the all-features row of every ranker is one model, so the
    scores equal EnsV's on the distinct candidates; rows without probabilities are an error naming the task."""
    from otfs.k_selection import encode_proba, with_ensemble_scores

    rng = np.random.default_rng(1)
    distinct = [rng.dirichlet(np.ones(3), size=6) for _ in range(3)]  # ot k=1, source-anova k=1, all d=2
    table = pd.DataFrame({"ranker": ["ot", "ot", "source-anova", "source-anova"], "k": [1, 2, 1, 2], "d": 2,
                          "target_proba": [encode_proba(p) for p in (distinct[0], distinct[2], distinct[1],
                                                                     distinct[2])]})
    out = with_ensemble_scores(table, {"EnsV": get_rule("EnsV")})
    quantised = [np.rint(p * 255) / 255 for p in distinct]
    expected = get_rule("EnsV").score_candidates(quantised)
    np.testing.assert_array_equal(out["EnsV:score"], expected[[0, 2, 1, 2]])
    assert "EnsV:score" not in table.columns  # the input is left as it was
    with pytest.raises(ValueError, match="task wine/red-white: the ensemble rule.*'EnsV'.*target_proba"):
        with_ensemble_scores(table.drop(columns="target_proba"), {"EnsV": get_rule("EnsV")},
                             where="task wine/red-white")


def test_candidate_rankers_the_shipped_policy_reads_are_checked_before_any_job():
    """recommend.rankers without a ranker the shipped policy reads is a configuration error naming the key, the
    ranker and the way out; another policy, or the ranker added, is accepted."""
    from otfs.k_selection._label_free import learned_policy, policy_rankers
    from otfs_workflow.config import ConfigError, load_yaml, validate_config

    needed = sorted(policy_rankers(learned_policy("NA")[0]))
    cfg = load_yaml(REPO / "config.yaml")
    others = [r for r in ("ot", "ks", "mmd") if r not in needed][:2]
    cfg["recommend"] = {"rankers": others, "evaluation": {"reference": others[0], "relevance": others[1]}}
    if needed:
        with pytest.raises(ConfigError, match=r"recommend.rankers: the shipped policy .* reads the ranker\(s\) "
                                              + re.escape(str(needed)) + r".*set recommend.policy"):
            validate_config(cfg, SCHEMA)
    cfg["recommend"]["policy"] = "circular"
    validate_config(cfg, SCHEMA)
    cfg["recommend"] = {"rankers": [*others, *needed], "evaluation": {"reference": others[0], "relevance": others[1]}}
    validate_config(cfg, SCHEMA)
