"""The feature-shift rankers of the zoo, each against an independent reference on small data."""

import warnings

import numpy as np
import pytest
import scipy.stats
from sklearn.feature_selection import f_classif
from sklearn.metrics import roc_auc_score

from otfs._checks import DegenerateResultWarning
from otfs.rankers import FEATURE_RANKERS

from .conftest import sklearn_checks

ZOO = ["wasserstein1d", "ks", "mmd", "domain-auc", "source-anova", "random", "fmmd", "fisher-divergence", "sparse-mean-shift",
       "sparse-ot", "relevant-unshifted", "rulsif", "hsic-lasso", "hsic-lasso-label", "relevance-over-shift"]


def _domains(seed=0, n_s=40, n_t=55, d=7, ties=False):
    rng = np.random.RandomState(seed)
    Xs, Xt = rng.randn(n_s, d), rng.randn(n_t, d)
    Xt[:, 1] += 1.5           # mean shift
    Xt[:, 4] *= 3.0           # scale shift
    if ties:                  # discrete features: many tied values
        Xs, Xt = np.round(Xs), np.round(Xt)
    ys = np.arange(n_s) % 3
    return Xs, ys, Xt


@pytest.mark.parametrize("ties", [False, True])
def test_wasserstein1d_equals_scipy(ties):
    Xs, ys, Xt = _domains(ties=ties)
    r = FEATURE_RANKERS["wasserstein1d"]().fit(Xs, ys, X_target=Xt)
    ref = [scipy.stats.wasserstein_distance(Xs[:, j], Xt[:, j]) for j in range(Xs.shape[1])]
    np.testing.assert_allclose(r.distances_, ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(r.scores_, -r.distances_)
    assert set(r.order_[-2:]) == {1, 4}  # the shifted features rank last


@pytest.mark.parametrize("ties", [False, True])
def test_ks_equals_scipy(ties):
    Xs, ys, Xt = _domains(seed=1, ties=ties)
    r = FEATURE_RANKERS["ks"]().fit(Xs, ys, X_target=Xt)
    for j in range(Xs.shape[1]):
        ref = scipy.stats.ks_2samp(Xs[:, j], Xt[:, j], method="asymp")
        assert r.statistics_[j] == pytest.approx(ref.statistic, abs=1e-12)
        assert r.pvalues_[j] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
    assert r.pvalues_[1] < 1e-3


@pytest.mark.parametrize("ties", [False, True])
def test_the_transposed_ecdf_gaps_are_the_same_numbers(ties):
    from otfs.rankers._per_feature import _ecdf_gaps_by_feature, ecdf_gaps

    Xs, _, Xt = _domains(seed=3, ties=ties)
    gap, widths = ecdf_gaps(Xs, Xt)
    gap_t, widths_t = _ecdf_gaps_by_feature(Xs, Xt)
    np.testing.assert_array_equal(gap_t, gap.T)
    np.testing.assert_array_equal(widths_t, widths.T)


def test_ks_pvalues_of_repeated_statistics_equal_scipys_value_by_value():
    # one SciPy call per distinct statistic: the same numbers as one per feature, in the features' order
    from otfs.rankers._per_feature import ks_pvalue

    rng = np.random.RandomState(5)
    D = rng.choice([0.0, 0.05, 0.3, 0.0125, 1.0], size=(4, 37))
    ref = np.clip(scipy.stats.kstwo.sf(D, np.round(150 * 170 / 320)), 0, 1)
    np.testing.assert_array_equal(ks_pvalue(D, 150, 170), ref)
    np.testing.assert_array_equal(ks_pvalue(D[0], 150, 170), ref[0])
    assert ks_pvalue(np.zeros(0), 150, 170).shape == (0,)


@pytest.mark.parametrize("ties", [False, True])
def test_domain_auc_equals_scikit_learn(ties):
    Xs, ys, Xt = _domains(seed=2, ties=ties)
    r = FEATURE_RANKERS["domain-auc"]().fit(Xs, ys, X_target=Xt)
    labels = np.r_[np.zeros(len(Xs)), np.ones(len(Xt))]
    ref = [roc_auc_score(labels, np.r_[Xs[:, j], Xt[:, j]]) for j in range(Xs.shape[1])]
    np.testing.assert_allclose(r.auc_, ref, rtol=1e-12)
    np.testing.assert_allclose(r.scores_, -np.abs(np.asarray(ref) - 0.5))
    assert r.order_[-1] == 1  # the mean shift separates the domains; the scale shift alone barely does


def test_mmd_equals_the_direct_formula():
    Xs, ys, Xt = _domains(seed=3, n_s=15, n_t=12, d=5)
    r = FEATURE_RANKERS["mmd"](max_samples=None).fit(Xs, ys, X_target=Xt)
    for j in range(5):
        s, t = Xs[:, j], Xt[:, j]
        pooled = np.r_[s, t]
        dist = np.abs(pooled[:, None] - pooled[None, :])[np.triu_indices(len(pooled), 1)]
        sigma = np.median(dist)
        k = lambda a, b: np.exp(-(a[:, None] - b[None, :]) ** 2 / (2 * sigma**2))  # noqa: E731
        kss, ktt = k(s, s), k(t, t)
        direct = ((kss.sum() - np.trace(kss)) / (15 * 14) + (ktt.sum() - np.trace(ktt)) / (12 * 11)
                  - 2 * k(s, t).mean())
        assert r.bandwidths_[j] == pytest.approx(sigma, rel=1e-12)
        assert r.mmd2_[j] == pytest.approx(direct, rel=1e-10, abs=1e-14)
    # one feature per chunk gives the same numbers
    from otfs.rankers._per_feature import mmd2_unbiased

    np.testing.assert_allclose(mmd2_unbiased(Xs, Xt, max_floats=1)[0], r.mmd2_, rtol=1e-12, atol=1e-15)
    # subsampling: seeded, and at most max_samples per domain
    Xs, ys, Xt = _domains(seed=4, n_s=80, n_t=90)
    a = FEATURE_RANKERS["mmd"](max_samples=30, random_state=0).fit(Xs, ys, X_target=Xt)
    b = FEATURE_RANKERS["mmd"](max_samples=30, random_state=0).fit(Xs, ys, X_target=Xt)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert set(a.order_[-2:]) == {1, 4}



@pytest.mark.parametrize("n_s, n_t", [(40, 35), (30, 30), (7, 5)])
def test_mmd_of_few_valued_features_equals_the_direct_sum(n_s, n_t):
    """Word counts and constants go through their distinct values (_mmd2_by_values): the same bandwidth
    bit for bit (the median is counted, not sorted) and the estimate within 1e-13 of the exactly rounded
    sum over the pairs of samples (math.fsum), odd and even numbers of pairs, ties and constants included."""
    import math

    from otfs.rankers._per_feature import _mmd2_by_values, _n_distinct, mmd2_unbiased

    rng = np.random.RandomState(n_s)
    Xs = rng.poisson(0.4, size=(n_s, 6)).astype(float)
    Xt = rng.poisson(0.9, size=(n_t, 6)).astype(float)
    Xs[:, 3], Xt[:, 3] = 0.0, 0.0  # absent in both: MMD² 0 exactly
    Xs[:, 4], Xt[:, 4] = 2.5, 2.5  # constant: σ 1
    Xs[:, 5] = np.round(rng.normal(size=n_s), 1)  # a few dozen values
    Xt[:, 5] = np.round(rng.normal(0.5, 1.0, size=n_t), 1)
    pooled = np.r_[Xs, Xt]
    np.testing.assert_array_equal(_n_distinct(pooled), [len(np.unique(c)) for c in pooled.T])
    a, b = np.triu_indices(n_s + n_t, 1)
    weight = np.where(b < n_s, 2.0 / (n_s * (n_s - 1)),
                      np.where(a >= n_s, 2.0 / (n_t * (n_t - 1)), -2.0 / (n_s * n_t)))
    for j in range(6):
        got, s = _mmd2_by_values(pooled[:, j], n_s, "median")
        d2 = (pooled[a, j] - pooled[b, j]) ** 2
        sigma = np.sqrt(np.median(d2))
        assert s == (sigma if sigma > 0 else 1.0)
        exact = math.fsum((weight * np.exp(d2 / (-2 * s**2))).tolist())
        assert got == pytest.approx(exact, abs=1e-13)
        assert _mmd2_by_values(pooled[:, j], n_s, 0.7)[0] == pytest.approx(
            math.fsum((weight * np.exp(d2 / (-2 * 0.7**2))).tolist()), abs=1e-13)
    assert _mmd2_by_values(pooled[:, 3], n_s, "median")[0] == 0.0
    # the public function routes each feature by its number of values (the counts by values, the
    # rounded normal feature by pairs of samples where its values are many); both routes agree
    mmd2, sigma = mmd2_unbiased(Xs, Xt)
    by_values = [_mmd2_by_values(pooled[:, j], n_s, "median") for j in range(6)]
    np.testing.assert_array_equal(sigma, [s for _, s in by_values])
    np.testing.assert_allclose(mmd2, [m for m, _ in by_values], rtol=0, atol=1e-13)
    n_pairs = len(a)
    for j in np.flatnonzero(_n_distinct(pooled) ** 2 <= n_pairs // 8):
        assert mmd2[j] == by_values[j][0]
    np.testing.assert_array_equal(mmd2[[3, 4]], 0.0)

def test_source_anova_equals_f_classif_and_warns_on_constant_features():
    Xs, ys, Xt = _domains(seed=5)
    r = FEATURE_RANKERS["source-anova"]().fit(Xs, ys, X_target=Xt)
    np.testing.assert_allclose(r.scores_, f_classif(Xs, ys)[0], rtol=1e-12)
    Xs[:, 2] = 1.0
    with pytest.warns(DegenerateResultWarning, match="1 of 7 features are constant within every class"):
        r = FEATURE_RANKERS["source-anova"]().fit(Xs, ys, X_target=Xt)
    assert r.scores_[2] == 0 and r.ranking_[2] == 7
    with pytest.raises(ValueError, match="needs y"):
        FEATURE_RANKERS["source-anova"]().fit(Xs, X_target=Xt)


def test_random_is_a_seeded_uniform_permutation():
    Xs, ys, Xt = _domains(seed=6, d=5)
    orders = [tuple(FEATURE_RANKERS["random"](random_state=s).fit(Xs, ys, X_target=Xt).order_) for s in range(600)]
    assert orders[:3] == [tuple(FEATURE_RANKERS["random"](random_state=s).fit(Xs, ys, X_target=Xt).order_)
                          for s in range(3)]
    first = np.bincount([o[0] for o in orders], minlength=5)
    assert scipy.stats.chisquare(first).pvalue > 1e-3  # every feature as likely to come first


@pytest.mark.parametrize("name", ZOO)
def test_sample_domain_gives_the_same_ranking(name):
    Xs, ys, Xt = _domains(seed=7)
    params = {"random_state": 0} if "random_state" in FEATURE_RANKERS[name]().get_params() else {}
    direct = FEATURE_RANKERS[name](**params).fit(Xs, ys, X_target=Xt)
    X = np.r_[Xs, Xt]
    y = np.r_[ys, np.full(len(Xt), -1)]
    sd = np.r_[np.ones(len(Xs), int), -np.ones(len(Xt), int)]
    stacked = FEATURE_RANKERS[name](**params).fit(X, y, sample_domain=sd)
    np.testing.assert_array_equal(direct.scores_, stacked.scores_)


@pytest.mark.parametrize("name", ZOO)
def test_a_ranker_warns_without_the_target_and_refuses_nan(name):
    Xs, ys, Xt = _domains(seed=8)
    with pytest.warns(UserWarning, match="got no X_target; scoring X against itself"):
        FEATURE_RANKERS[name]().fit(Xs, ys)
    Xt[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FEATURE_RANKERS[name]().fit(Xs, ys, X_target=Xt)


# scikit-learn's checks fit some 15 source samples: hsic-lasso-label's blocks are made smaller than that
@pytest.mark.parametrize("estimator, check", list(sklearn_checks(
    [FEATURE_RANKERS[n](**({"block_size": 5} if n == "hsic-lasso-label" else {})) for n in ZOO])))
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResultWarning)
        check(estimator)


def test_planted_shifts_move_what_they_say_and_nothing_else():
    from otfs.datasets import get_reader

    reader = get_reader("planted-shifts", {"n_features": 40, "per_kind": 3, "n_samples": 3000, "seed": 1})
    src, tgt = reader.read("source", {}, None), reader.read("target", {}, None)
    g = reader.planted()
    assert g["mean"] == [0, 1, 2] and g["correlation"] == [12, 13, 14]
    shared = list(range(15, 40))
    ks = FEATURE_RANKERS["ks"]().fit(src.X, src.y, X_target=tgt.X)
    assert ks.pvalues_[g["mean"] + g["scale"] + g["shape"]].max() < 1e-3       # the marginals move
    assert ks.pvalues_[g["class-conditional"] + g["correlation"]].min() > 1e-4  # these marginals do not
    assert np.median(ks.pvalues_[shared]) > 0.1
    # class-conditional: each class's mean moves; correlation with the shared last feature flips sign
    cc = g["class-conditional"][0]
    assert abs(src.X[src.y == 1, cc].mean() - tgt.X[tgt.y == 1, cc].mean()) > 0.3
    for X, sign in ((src.X, 1), (tgt.X, -1)):
        r = np.corrcoef(X[:, 12] - X[:, 12].mean(), X[:, -1])[0, 1]
        assert sign * r > 0.3
    with pytest.raises(ValueError, match="n_features=10 must be an integer >= 16"):
        get_reader("planted-shifts", {"n_features": 10, "per_kind": 3})


def test_recovery_counts_the_planted_features_ranked_last():
    from otfs_workflow.stages.shift_recovery import recovery

    planted = {"a": [0, 1], "b": [2, 3]}
    # the last 4 of the order hold 0, 1 and 3
    assert recovery([2, 5, 4, 0, 1, 3], planted) == {"a": 1.0, "b": 0.5}
    runs = __import__("otfs_workflow.stages.shift_recovery", fromlist=["run"])
    df = runs.run(["wasserstein1d", "random"], {}, {"n_features": 32, "per_kind": 2, "n_samples": 300}, [0],
                  output=__import__("tempfile").mktemp(suffix=".csv"))
    w = df[df["ranker"] == "wasserstein1d"].set_index("kind")["recovered"]
    assert w["mean"] == 1.0 and w["scale"] == 1.0  # a per-feature distance sees the marginal shifts


def test_fmmd_objective_gradient_and_projection_against_direct_computations():
    from scipy.optimize import approx_fprime, minimize

    from otfs.rankers.fmmd import mmd2_weighted, project_capped_simplex

    rng = np.random.RandomState(0)
    Xs, Xt, w = rng.randn(9, 4), rng.randn(7, 4) + 0.5, rng.rand(4)
    value, grad = mmd2_weighted(w, Xs, Xt, sigma2=1.3)

    def k(A, B):
        return np.exp(-(((A[:, None, :] - B[None, :, :]) ** 2) * w).sum(-1) / 2.6)

    assert value == pytest.approx(k(Xs, Xs).mean() + k(Xt, Xt).mean() - 2 * k(Xs, Xt).mean(), rel=1e-12)
    numeric = approx_fprime(w, lambda v: mmd2_weighted(v, Xs, Xt, 1.3)[0], 1e-7)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-8)
    v = rng.randn(6) * 2
    p = project_capped_simplex(v, 2.5)
    ref = minimize(lambda x: ((x - v) ** 2).sum(), np.full(6, 2.5 / 6), method="SLSQP", bounds=[(0, 1)] * 6,
                   constraints=[{"type": "eq", "fun": lambda x: x.sum() - 2.5}], options={"ftol": 1e-14})
    np.testing.assert_allclose(p, ref.x, atol=1e-6)


def test_fmmd_weights_the_shifted_features_out():
    rng = np.random.RandomState(1)
    Xs, Xt = rng.randn(150, 20), rng.randn(170, 20)
    Xt[:, [2, 7]] += 1.5
    Xt[:, 5] *= 3
    r = FEATURE_RANKERS["fmmd"](n_features_to_select=17, random_state=0).fit(Xs, X_target=Xt)
    assert set(r.order_[-3:]) == {2, 5, 7} and (r.weights_[[2, 5, 7]] < 0.05).all()
    assert r.weights_.sum() == pytest.approx(17) and r.objective_ < 0.01
    from sklearn.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="max_iter=1; the weights may not be final"):
        FEATURE_RANKERS["fmmd"](n_features_to_select=17, max_iter=1, random_state=0).fit(Xs, X_target=Xt)


# --- fisher-divergence (Kulinski, Bagchi, Inouye 2020) ------------------------------------------------------
@pytest.mark.parametrize("n, d", [(30, 8), (10, 40)])
def test_fisher_divergence_covariance_is_ledoit_wolfs(n, d):
    import sklearn.covariance

    from otfs.rankers.fisher_divergence import ledoit_wolf_parts

    X = np.random.RandomState(n).randn(n, d) @ np.random.RandomState(d).randn(d, d)
    mean, Xc, c, beta, a = ledoit_wolf_parts(X)
    assert a == pytest.approx(sklearn.covariance.ledoit_wolf_shrinkage(X), rel=1e-12)
    np.testing.assert_allclose(c * np.eye(d) + beta * Xc.T @ Xc, sklearn.covariance.ledoit_wolf(X)[0], rtol=1e-12,
                               atol=1e-14)
    _, _, c3, _, a3 = ledoit_wolf_parts(X, 0.3)
    assert a3 == 0.3 and c3 == pytest.approx(0.3 * np.trace(Xc.T @ Xc / n) / d, rel=1e-12)


def test_fisher_divergence_is_the_expectation_the_authors_estimate_by_sampling():
    # their FisherDivergence(GaussianDensity): draw from both fitted Gaussians, square the difference of the
    # gradients of the log-densities, average; here the gradients are scipy's log-density by central differences
    from scipy.stats import multivariate_normal

    from otfs.rankers.fisher_divergence import ledoit_wolf_parts

    rng = np.random.RandomState(0)
    Xs, Xt = rng.randn(80, 4), rng.randn(90, 4)
    Xt[:, 1] += 1.0
    Xt[:, 2] *= 2.0
    Xt[:, 3] = 0.8 * Xt[:, 0] + 0.6 * Xt[:, 3]  # its conditional on feature 0 moves, its marginal hardly
    ranker = FEATURE_RANKERS["fisher-divergence"]().fit(Xs, None, X_target=Xt)
    dens = [multivariate_normal(m, c * np.eye(4) + b * Xc.T @ Xc)
            for m, Xc, c, b, _ in (ledoit_wolf_parts(X) for X in (Xs, Xt))]
    samples = np.vstack([dens[0].rvs(100_000, random_state=1), dens[1].rvs(100_000, random_state=2)])
    h = 1e-5
    estimate = np.empty(4)
    for j in range(4):
        step = np.eye(4)[j] * h
        grads = [(g.logpdf(samples + step) - g.logpdf(samples - step)) / (2 * h) for g in dens]
        estimate[j] = np.mean((grads[0] - grads[1]) ** 2)
    np.testing.assert_allclose(ranker.divergences_, estimate, rtol=0.02)
    np.testing.assert_array_equal(ranker.scores_, -ranker.divergences_)  # the most shifted last


def test_fisher_divergence_without_d_by_d_matrices_is_the_same_number():
    from otfs.rankers.fisher_divergence import _dense, _low_rank, ledoit_wolf_parts

    rng = np.random.RandomState(3)
    for Xs, Xt in ((rng.randn(12, 50), 1.5 * rng.randn(15, 50) + 0.3), (rng.rand(9, 31), rng.rand(20, 31) ** 2)):
        for shrink in (None, 0.05):
            parts = [ledoit_wolf_parts(X, shrink) for X in (Xs, Xt)]
            np.testing.assert_allclose(_low_rank(parts), _dense(parts, Xs.shape[1]), rtol=1e-10)


def test_fisher_divergence_sees_the_shifts_of_a_conditional_that_per_feature_tests_cannot():
    from otfs.datasets import get_reader
    from otfs_workflow.stages.shift_recovery import recovery

    for seed in (0, 1):
        reader = get_reader("planted-shifts", {"n_features": 40, "per_kind": 3, "n_samples": 600, "seed": seed})
        src, tgt = reader.read("source", {}, None), reader.read("target", {}, None)
        found = {name: recovery(FEATURE_RANKERS[name]().fit(src.X, src.y, X_target=tgt.X).order_, reader.planted())
                 for name in ("fisher-divergence", "ks")}
        for kind in ("mean", "scale", "correlation"):
            assert found["fisher-divergence"][kind] == 1.0, (seed, found)
        assert found["ks"]["correlation"] < 0.5  # a marginal test: the correlation shift leaves the marginals


def test_fisher_divergence_errors_name_what_is_wrong():
    Xs, ys, Xt = _domains(seed=2)
    with pytest.raises(ValueError, match="'shrinkage' parameter"):
        FEATURE_RANKERS["fisher-divergence"](shrinkage=0.0).fit(Xs, ys, X_target=Xt)
    with pytest.raises(ValueError, match="every feature of a domain is constant"):
        FEATURE_RANKERS["fisher-divergence"]().fit(np.ones_like(Xs), ys, X_target=Xt)


# --- sparse-mean-shift and sparse-ot (Kulinski & Inouye 2023) -----------------------------------------------
def test_sparse_mean_shift_orders_the_optimal_k_sparse_mean_shifts():
    # every k: the k-sparse shift of the source minimising the exact W2 to the target (POT's emd2, every subset
    # of k features tried) moves the k features of largest |mean difference|, which the order keeps last
    import itertools

    import ot

    rng = np.random.RandomState(0)
    Xs, Xt = rng.randn(30, 5), rng.randn(40, 5) * [1.0, 1.5, 1.0, 0.7, 1.0]
    Xt += [0.1, -1.2, 0.6, 0.0, 2.0]
    ranker = FEATURE_RANKERS["sparse-mean-shift"]().fit(Xs, None, X_target=Xt)
    np.testing.assert_allclose(ranker.mean_shift_, Xt.mean(0) - Xs.mean(0), rtol=1e-14)
    a, b = np.full(30, 1 / 30), np.full(40, 1 / 40)
    for k in range(1, 5):
        def w2(active, k=k):
            delta = np.zeros(5)
            delta[list(active)] = ranker.mean_shift_[list(active)]
            return ot.emd2(a, b, ot.dist(Xs + delta, Xt), numItermax=10**6)

        best = min(itertools.combinations(range(5), k), key=w2)
        assert set(best) == set(ranker.order_[-k:].tolist()), k


def test_sparse_ot_is_pots_exact_barycentric_map():
    import ot

    rng = np.random.RandomState(1)
    Xs, Xt = rng.randn(25, 4), rng.randn(35, 4) * [1.0, 2.0, 1.0, 1.0] + [0.0, 0.0, 1.5, 0.0]
    ranker = FEATURE_RANKERS["sparse-ot"]().fit(Xs, None, X_target=Xt)
    mapped = ot.da.EMDTransport(metric="sqeuclidean", norm=None, max_iter=10**6).fit(Xs=Xs, Xt=Xt).transform(Xs=Xs)
    np.testing.assert_allclose(ranker.displacements_, np.mean((mapped - Xs) ** 2, axis=0), rtol=1e-10)
    assert set(ranker.order_[-2:].tolist()) == {1, 2}  # the scaled and the shifted feature move most
    with pytest.raises(RuntimeError, match="did not reach optimality within emd_max_iter=1 iterations"):
        FEATURE_RANKERS["sparse-ot"](emd_max_iter=1).fit(Xs, None, X_target=Xt)


@pytest.mark.parametrize("name, kinds", [("sparse-mean-shift", ("mean",)), ("sparse-ot", ("mean", "scale"))])
def test_the_sparse_explanations_recover_what_they_move(name, kinds):
    from otfs.datasets import get_reader
    from otfs_workflow.stages.shift_recovery import recovery

    reader = get_reader("planted-shifts", {"n_features": 40, "per_kind": 3, "n_samples": 300, "seed": 0})
    src, tgt = reader.read("source", {}, None), reader.read("target", {}, None)
    found = recovery(FEATURE_RANKERS[name]().fit(src.X, src.y, X_target=tgt.X).order_, reader.planted())
    assert all(found[kind] == 1.0 for kind in kinds), found


# --- relevant-unshifted: source relevance among the features a shift test keeps --------------------------------
@pytest.mark.parametrize("correction", ["bonferroni", "bh"])
def test_relevant_unshifted_orders_the_kept_features_by_f_then_the_shifted_by_p(correction):
    from scipy.stats import ks_2samp
    from statsmodels.stats.multitest import multipletests

    rng = np.random.RandomState(4)
    ys = np.arange(120) % 3
    Xs = rng.randn(120, 12) + 0.6 * np.outer(ys, np.linspace(0, 1, 12))
    Xt = rng.randn(150, 12) + 0.6 * np.outer(np.arange(150) % 3, np.linspace(0, 1, 12))
    Xt[:, [2, 7, 11]] += [0.4, 1.0, 2.0]  # shifted, some relevant
    ranker = FEATURE_RANKERS["relevant-unshifted"](correction=correction).fit(Xs, ys, X_target=Xt)
    p = np.array([ks_2samp(Xs[:, j], Xt[:, j], method="asymp").pvalue for j in range(12)])
    rejected = multipletests(p, alpha=0.05, method="bonferroni" if correction == "bonferroni" else "fdr_bh")[0]
    np.testing.assert_array_equal(ranker.unshifted_, ~rejected)
    F = f_classif(Xs, ys)[0]
    kept, shifted = np.flatnonzero(~rejected), np.flatnonzero(rejected)
    expected = list(kept[np.argsort(-F[kept], kind="stable")]) + list(shifted[np.argsort(-p[shifted], kind="stable")])
    assert ranker.order_.tolist() == expected and {7, 11} <= set(shifted.tolist())
    # with a test that rejects nothing, it is the source-ANOVA order
    lax = FEATURE_RANKERS["relevant-unshifted"](alpha=1e-300).fit(Xs, ys, X_target=Xt)
    assert lax.unshifted_.all()
    assert lax.order_.tolist() == FEATURE_RANKERS["source-anova"]().fit(Xs, ys, X_target=Xt).order_.tolist()


# --- rulsif: per-feature relative density-ratio fitting ---------------------------------------------------------
def test_rulsif_with_fixed_bandwidth_is_densratios_ratio_and_divergence():
    densratio = pytest.importorskip("densratio").densratio  # a test dependency (pyproject's test extra)
    from otfs.rankers.rulsif import _kernel, rulsif_1d

    rng = np.random.RandomState(0)
    n = 150
    x, y = rng.normal(0.3, 1.0, size=(n, 3)), rng.normal(0.0, 1.2, size=(n, 3))
    points = np.linspace(-3, 3, 13)[:, None]
    for j, (sigma, lam) in enumerate([(0.7, 0.1), (0.5, 0.3), (1.1, 1.0)]):
        np.random.seed(5)
        centers = x[np.random.choice(n, 10, replace=False)][:, [j]]  # densratio's draw, reproduced
        np.random.seed(5)
        ref = densratio(x[:, [j]], y[:, [j]], method="RuLSIF", alpha=0.2, sigma=[sigma], lambda_=[lam], kernel_num=10,
                        verbose=False)
        assert (ref.theta > 0).all()  # densratio clips theta at 0; rulsif does not: compare where nothing is clipped
        pe, s, lams, theta = rulsif_1d(x[:, [j]], y[:, [j]], centers, 0.2, [[sigma]], [lam])
        assert s[0] == sigma and lams[0] == lam
        np.testing.assert_allclose(theta[0], ref.theta, rtol=1e-10)
        ratio = _kernel(points, centers, np.array([sigma]))[0] @ theta[0]
        np.testing.assert_allclose(ratio, ref.compute_density_ratio(points), rtol=1e-10)
        # densratio's divergence divides both sums by n_x: equal to Liu et al.'s Eq. 8 when n_x == n_y
        np.testing.assert_allclose(pe[0], ref.alpha_PE, rtol=1e-10)


def _relulsif_cv(x_nu, x_de, centers, alpha, sigmas, lambdas, fold_nu, fold_de):
    """RelULSIF.m's cross-validation loops for one 1-D ratio, transcribed (folds given instead of drawn)."""
    score = np.zeros((len(sigmas), len(lambdas)))
    for i, sigma in enumerate(sigmas):
        k_nu = np.exp(-((x_nu[:, None] - centers[None, :]) ** 2) / (2 * sigma**2))
        k_de = np.exp(-((x_de[:, None] - centers[None, :]) ** 2) / (2 * sigma**2))
        for j, lam in enumerate(lambdas):
            total = 0.0
            for k in range(fold_nu.max() + 1):
                tr_nu, tr_de = k_nu[fold_nu != k], k_de[fold_de != k]
                H = (1 - alpha) / len(tr_de) * tr_de.T @ tr_de + alpha / len(tr_nu) * tr_nu.T @ tr_nu
                theta = np.linalg.solve(H + lam * np.eye(len(centers)), tr_nu.mean(axis=0))
                g_nu, g_de = k_nu[fold_nu == k] @ theta, k_de[fold_de == k] @ theta
                total += alpha / 2 * np.mean(g_nu**2) + (1 - alpha) / 2 * np.mean(g_de**2) - np.mean(g_nu)
            score[i, j] = total / (fold_nu.max() + 1)
    return score


def test_rulsif_cross_validation_is_relulsifs_per_feature_and_pooled():
    from otfs.rankers.rulsif import LAMBDAS, SIGMA_FACTORS, rulsif_1d

    rng = np.random.RandomState(1)
    n_nu, n_de, d = 47, 53, 4
    X_nu = rng.normal(0, 1, (n_nu, d)) * [1, 2, 0.5, 1] + [0, 0, 0, 1]
    X_de = rng.normal(0, 1, (n_de, d))
    centers = X_nu[:12]
    median = np.array([0.9, 1.7, 0.6, 1.1])
    sigmas = np.outer(SIGMA_FACTORS, median)
    perm_nu, perm_de = rng.permutation(n_nu), rng.permutation(n_de)
    fold_nu, fold_de = np.empty(n_nu, int), np.empty(n_de, int)
    fold_nu[perm_nu], fold_de[perm_de] = np.arange(n_nu) * 5 // n_nu, np.arange(n_de) * 5 // n_de
    tables = [_relulsif_cv(X_nu[:, j], X_de[:, j], centers[:, j], 0.1, sigmas[:, j], LAMBDAS, fold_nu, fold_de)
              for j in range(d)]
    pe, s, lams, _ = rulsif_1d(X_nu, X_de, centers, 0.1, sigmas, LAMBDAS, 5, (perm_nu, perm_de))
    for j, table in enumerate(tables):
        i_min, j_min = np.unravel_index(np.argmin(table), table.shape)
        assert s[j] == sigmas[i_min, j] and lams[j] == LAMBDAS[j_min]
        ref, *_ = rulsif_1d(X_nu[:, [j]], X_de[:, [j]], centers[:, [j]], 0.1, [[s[j]]], [lams[j]])
        np.testing.assert_allclose(pe[j], ref[0], rtol=1e-12)
    # pooled over features 1 and 3: the candidate of least summed objective serves all four
    pe_p, s_p, l_p, _ = rulsif_1d(X_nu, X_de, centers, 0.1, sigmas, LAMBDAS, 5, (perm_nu, perm_de), pool=[1, 3])
    i_min, j_min = np.unravel_index(np.argmin(tables[1] + tables[3]), tables[1].shape)
    np.testing.assert_array_equal(s_p, sigmas[i_min])
    np.testing.assert_array_equal(l_p, np.full(d, LAMBDAS[j_min]))
    assert not np.array_equal(s_p, s) or not np.array_equal(l_p, lams)  # the pooled choice is not each feature's own


def test_rulsif_median_distance_is_nanmedian_over_differing_pairs():
    from otfs.rankers.rulsif import median_distances

    rng = np.random.RandomState(2)
    X = (rng.rand(60, 9) < 0.2) * rng.rand(60, 9)
    X[:, 4] = 2.0  # constant
    i, k = np.triu_indices(60, 1)
    gaps = np.abs(X[i] - X[k])
    gaps[gaps == 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = np.nan_to_num(np.nanmedian(gaps, axis=0), nan=0.0)
    np.testing.assert_allclose(median_distances(X), ref, rtol=0)
    assert median_distances(X)[4] == 0.0


def test_rulsif_recovers_the_planted_marginal_shifts_and_names_bad_input():
    from otfs.datasets import get_reader
    from otfs_workflow.stages.shift_recovery import recovery

    reader = get_reader("planted-shifts", {"n_features": 40, "per_kind": 3, "n_samples": 300, "seed": 0})
    src, tgt = reader.read("source", {}, None), reader.read("target", {}, None)
    ranker = FEATURE_RANKERS["rulsif"](n_centers=30, cv_features=10, random_state=0).fit(src.X, src.y, X_target=tgt.X)
    found = recovery(ranker.order_, reader.planted())
    assert found["mean"] == found["scale"] == found["shape"] == 1.0, found
    assert ranker.divergences_.shape == (40,) and ranker.sigmas_.shape == ranker.lambdas_.shape == (2, 40)
    with pytest.raises(ValueError, match="the source has 3 samples, fewer than n_folds=5"):
        FEATURE_RANKERS["rulsif"]().fit(src.X[:3], X_target=tgt.X)
    with pytest.raises(ValueError, match="'alpha' parameter"):
        FEATURE_RANKERS["rulsif"](alpha=1.0).fit(src.X, X_target=tgt.X)


# --- hsic-lasso: block HSIC Lasso with the domain or the source label as the output ------------------------------
def _package_permutations(n, m):
    """pyHSICLasso's partitions: permutation m of the previous one, under numpy's global seed m."""
    perms, index = [], np.arange(n)
    for seed in range(m):
        np.random.seed(seed)
        index = np.random.permutation(index)
        perms.append(index)
    return perms


@pytest.mark.parametrize("n, output", [(110, "label"), (100, "domain")])
def test_hsic_lasso_design_and_path_are_pyhsiclassos(n, output):
    import contextlib
    import io

    HSICLasso = pytest.importorskip("pyHSICLasso").HSICLasso  # a test dependency (pyproject's test extra)
    from sklearn.linear_model import lars_path

    from otfs.rankers.hsic_lasso import block_hsic_design

    rng = np.random.RandomState(0)
    X = rng.randn(n, 12)
    if output == "label":  # three classes, from a linear, a quadratic and a threshold term
        y = (X[:, 0] + 0.5 * X[:, 3] ** 2 + 0.3 * rng.randn(n) > 0.5).astype(int) + (X[:, 5] > 1)
    else:  # two domains: the second half shifted in features 2 (mean) and 7 (scale)
        y = np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)]
        X[y == 1, 2] += 1.0
        X[y == 1, 7] *= 2.5
    package = HSICLasso()
    package.input(X, y.astype(float))
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        package.classification(num_feat=4, B=20, M=3, n_jobs=1)
    design, target = block_hsic_design(X, y, 20, _package_permutations(n, 3))
    rows = design.shape[0]  # the package leaves the rows of the left-out samples at 0
    assert np.all(package.X[rows:] == 0)
    np.testing.assert_allclose(design, package.X[:rows], atol=1e-6)  # the package's kernels are float32
    np.testing.assert_allclose(design.T @ target, package.Xty.ravel(), atol=1e-6)
    # its non-negative LARS stops where a fifth feature enters: scikit-learn's path at that knot
    coefs = lars_path(design, target, method="lasso", positive=True, max_iter=10)[2]
    assert set(np.flatnonzero(coefs[:, 4])) == set(package.A)
    np.testing.assert_allclose(coefs[:, 4], package.beta.ravel(), atol=1e-6)


def test_hsic_lasso_path_scores_are_the_correlations_on_an_orthogonal_design():
    from otfs.rankers.hsic_lasso import hsic_lasso_path_scores

    rng = np.random.RandomState(3)
    Q = np.linalg.qr(rng.randn(50, 8))[0]  # orthonormal columns: each feature enters at its own correlation
    target = Q @ np.array([3.0, -1.0, 0.5, 2.0, 0.0, 1.5, -0.2, 0.8]) + 0.01 * rng.randn(50)
    corr = Q.T @ target
    scores, entry = hsic_lasso_path_scores(Q, target, n_path=3)
    np.testing.assert_allclose(scores, corr / 50, rtol=1e-10)
    assert entry.tolist() == [0, -1, -1, 1, -1, 2, -1, -1]  # the three largest positive, then the rest


def test_hsic_lasso_domain_puts_the_planted_shifts_last_and_label_finds_the_relevant():
    from otfs.datasets import get_reader
    from otfs_workflow.stages.shift_recovery import recovery

    reader = get_reader("planted-shifts", {"n_features": 40, "per_kind": 3, "n_samples": 300, "seed": 0})
    src, tgt = reader.read("source", {}, None), reader.read("target", {}, None)
    domain = FEATURE_RANKERS["hsic-lasso"](random_state=0).fit(src.X, src.y, X_target=tgt.X)
    found = recovery(domain.order_, reader.planted())
    assert found["mean"] == found["scale"] == 1.0, found
    label = FEATURE_RANKERS["hsic-lasso"](output="label", max_samples=None, random_state=0).fit(src.X, src.y,
                                                                                                X_target=tgt.X)
    f_order = np.argsort(-f_classif(src.X, src.y)[0])
    assert len(set(label.order_[:5]) & set(f_order[:5])) >= 3  # relevance: mostly ANOVA's top five
    with pytest.raises(ValueError, match="output='label' needs the source labels y"):
        FEATURE_RANKERS["hsic-lasso"](output="label").fit(src.X, X_target=tgt.X)
    with pytest.raises(ValueError, match="15 samples, fewer than block_size=20"):
        FEATURE_RANKERS["hsic-lasso"](output="label").fit(src.X[::20], src.y[::20], X_target=tgt.X)
    with pytest.raises(ValueError, match="needs at least two classes in the source labels"):
        FEATURE_RANKERS["hsic-lasso"](output="label").fit(src.X[:30], np.zeros(30, int), X_target=tgt.X)


def test_hsic_lasso_label_is_hsic_lasso_with_the_label_as_output():
    from sklearn.base import clone

    Xs, ys, Xt = _domains(seed=3, n_s=60, n_t=70, d=9)
    named = FEATURE_RANKERS["hsic-lasso-label"](n_path=5, random_state=4)
    assert "output" not in named.get_params() and named.needs_class_labels()
    named.fit(Xs, ys, X_target=Xt)
    param = FEATURE_RANKERS["hsic-lasso"](output="label", n_path=5, random_state=4).fit(Xs, ys, X_target=Xt)
    np.testing.assert_array_equal(named.scores_, param.scores_)
    np.testing.assert_array_equal(named.order_, param.order_)
    # the domain as the output orders them otherwise
    domain = FEATURE_RANKERS["hsic-lasso"](n_path=5, random_state=4).fit(Xs, ys, X_target=Xt)
    assert not np.array_equal(domain.scores_, named.scores_)
    assert clone(named).get_params() == named.get_params()
    with pytest.raises(TypeError, match="output"):
        FEATURE_RANKERS["hsic-lasso-label"](output="domain")


# --- relevance-over-shift: source F with the shift counted as noise ----------------------------------------------
@pytest.mark.parametrize("ties", [False, True])
def test_relevance_over_shift_is_f_over_within_plus_pots_w2(ties):
    import ot

    from otfs.rankers.relevance_over_shift import wasserstein2_squared_1d

    Xs, ys, Xt = _domains(ties=ties)
    w2 = np.array([ot.wasserstein_1d(Xs[:, j], Xt[:, j], p=2) for j in range(Xs.shape[1])])  # W2², POT
    np.testing.assert_allclose(wasserstein2_squared_1d(Xs, Xt), w2, rtol=1e-12, atol=1e-14)
    F = f_classif(Xs, ys)[0]
    ranker = FEATURE_RANKERS["relevance-over-shift"]().fit(Xs, ys, X_target=Xt)
    np.testing.assert_allclose(ranker.between_ / ranker.within_, F, rtol=1e-12)
    np.testing.assert_allclose(ranker.scores_, ranker.between_ / (ranker.within_ + w2), rtol=1e-12)
    assert set(ranker.order_[-2:].tolist()) == {1, 4}  # the two shifted features last
    # without shift it is source-anova's order
    same = FEATURE_RANKERS["relevance-over-shift"]().fit(Xs, ys, X_target=Xs)
    np.testing.assert_array_equal(same.order_, FEATURE_RANKERS["source-anova"]().fit(Xs, ys, X_target=Xs).order_)
    with pytest.raises(ValueError, match="needs y"):
        FEATURE_RANKERS["relevance-over-shift"]().fit(Xs, X_target=Xt)
