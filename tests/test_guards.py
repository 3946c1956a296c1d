"""Parameters out of range, bad inputs and degenerate numerics: errors or warnings, never silent results."""

from __future__ import annotations

import warnings

import numpy as np
import ot
import pytest
import scipy.sparse

from otfs._checks import DegenerateResultWarning
from otfs._ot.solvers import NumericalFallbackWarning
from otfs.adapters import ADAPTERS, get_adapter
from otfs.classification import one_nn_accuracy
from otfs.rankers import OTFeatureRanker, feature_coupling_diagonal, rank_features
from otfs.reducers import WassersteinDiscriminantAnalysis
from otfs.sample_selection import select_samples

from .conftest import shifted_domains


@pytest.fixture(scope="module")
def domains():
    Xs, ys, Xt, yt, _ = shifted_domains(n_s=30, n_t=40, d=8, k=2, seed=3)
    return Xs, ys, Xt


# --- parameters ------------------------------------------------------------------------
@pytest.mark.parametrize("name, params, message", [
    ("OT2", {"reg": 0.0}, r"The 'reg' parameter of SinkhornAdapter must be a float in the range \(0.0, inf\)"),
    ("OT2", {"reg": -1.0}, r"'reg' parameter of SinkhornAdapter must be a float in the range \(0.0, inf\)"),
    ("OT3", {"reg": 0}, r"'reg' parameter of SinkhornLpl1Adapter must be a float in the range \(0.0, inf\)"),
    ("OT3", {"eta": -0.5}, r"'eta' parameter of SinkhornLpl1Adapter must be a float in the range \[0.0, inf\)"),
    ("CORAL", {"reg": 0.0}, r"'reg' parameter of CorrelationAlignment must be a float in the range \(0.0, inf\)"),
    ("SA", {"n_components": 0}, r"'n_components' parameter of PCASubspaceAlignment must be an int in the range \[1, inf\)"),
    ("TCA", {"n_components": 0}, r"'n_components' parameter of LinearTransferComponentAnalysis must be an int"),
    ("TCA", {"mu": -1.0}, r"'mu' parameter of LinearTransferComponentAnalysis must be a float in the range \[0.0, inf\)"),
    ("TCA", {"solver": "lapack"}, r"'solver' parameter of LinearTransferComponentAnalysis must be a str among"),
    ("TCA", {"eigen_solver": "lobpcg"},
     r"'eigen_solver' parameter of LinearTransferComponentAnalysis must be a str among"),
    ("WDA", {"n_components": 0}, r"'n_components' parameter of WDAAdapter must be an int in the range \[1, inf\)"),
    ("WDA", {"reg_lambda": 0.0}, r"'reg_lambda' parameter of WDAAdapter must be a float in the range \(0.0, inf\)"),
    ("OT", {"max_iter": -1}, r"'max_iter' parameter of EMDAdapter must be an int in the range \[1, inf\)"),
    ("OT2", {"max_iter": -5}, r"'max_iter' parameter of SinkhornAdapter must be an int in the range \[1, inf\)"),
    ("OT3", {"max_inner_iter": -1}, r"'max_inner_iter' parameter of SinkhornLpl1Adapter must be an int"),
    ("OT2", {"norm": "mean"}, r"'norm' parameter of SinkhornAdapter must be a str among"),
])
def test_an_adapter_parameter_out_of_range_is_named_before_any_work(domains, name, params, message):
    Xs, ys, Xt = domains
    with pytest.raises(ValueError, match=message):
        get_adapter(name, **params).adapt(Xs, ys, Xt)


@pytest.mark.parametrize("kwargs, message", [
    ({"reg": 0.0}, r"reg must be a positive finite number"),
    ({"reg": float("nan")}, r"reg must be a positive finite number"),
    ({"max_iter": -1}, r"max_iter must be an integer >= 1"),
    ({"max_iter": 0}, r"max_iter must be an integer >= 1"),
    ({"tol": -1e-3}, r"tol must be a number >= 0"),
])
def test_a_ranking_parameter_out_of_range_is_named(kwargs, message):
    rng = np.random.RandomState(0)
    with pytest.raises(ValueError, match=message):
        feature_coupling_diagonal(rng.randn(10, 5), rng.randn(10, 5), **kwargs)
    key = next(iter(kwargs))
    with pytest.raises(ValueError, match=rf"The '{key}' parameter of OTFeatureRanker"):
        OTFeatureRanker(**kwargs).fit(rng.randn(10, 5), X_target=rng.randn(12, 5))


def test_a_negative_emd_iteration_limit_is_named():
    rng = np.random.RandomState(0)
    with pytest.raises(ValueError, match=r"emd_max_iter must be 'auto' or an integer >= 1"):
        select_samples(rng.randn(10, 3), rng.randn(12, 3), emd_max_iter=-1)
    with pytest.raises(ValueError, match=r"emd_max_iter must be 'auto' or an integer >= 1"):
        select_samples(rng.randn(10, 3), rng.randn(12, 3), emd_max_iter="7")
    with pytest.raises(ValueError, match=r"The 'emd_max_iter' parameter of OTFeatureRanker"):
        OTFeatureRanker(emd_max_iter=0).fit(rng.randn(10, 3), X_target=rng.randn(12, 3))


# --- inputs ----------------------------------------------------------------------------
@pytest.mark.parametrize("missing", [np.nan, None])
def test_a_missing_label_is_an_error(domains, missing):
    Xs, ys, Xt = domains
    bad = ys.astype(object if missing is None else float)
    bad[4] = missing
    for name in ("NA", "OT3", "CORAL"):
        with pytest.raises(ValueError, match=r"ys has 1 missing label\(s\) \(NaN or None\), the first at index 4"):
            get_adapter(name).adapt(Xs, bad, Xt)
    with pytest.raises(ValueError, match=r"yt has 1 missing label"):
        one_nn_accuracy(Xs, ys, Xt[:30], bad)
    if missing is not None:  # scikit-learn's own check, in the estimators
        with pytest.raises(ValueError, match="Input y contains NaN"):
            WassersteinDiscriminantAnalysis(n_components=2).fit(Xs, bad)


def test_sparse_input_is_refused_with_a_way_out(domains):
    Xs, ys, Xt = domains
    with pytest.raises(TypeError, match=r"Xs is a SciPy sparse matrix \(30 x 8\); otfs needs a dense array: "
                                        r"pass Xs.toarray\(\)"):
        get_adapter("OT2").adapt(scipy.sparse.csr_matrix(Xs), ys, Xt)
    with pytest.raises(TypeError, match=r"Xt is a SciPy sparse matrix"):
        rank_features(Xs, scipy.sparse.csr_matrix(Xt))
    with pytest.raises(TypeError, match="Sparse data was passed"):  # scikit-learn's message, in the estimator
        OTFeatureRanker().fit(scipy.sparse.csr_matrix(Xs), X_target=Xt)


def test_complex_input_is_refused_not_cast(domains):
    Xs, ys, Xt = domains
    with pytest.raises(ValueError, match=r"Xt has complex values; otfs works on real features"):
        get_adapter("SA", n_components=3).adapt(Xs, ys, Xt + 1j)
    with pytest.raises(ValueError, match=r"Su has complex values"):
        feature_coupling_diagonal(Xs + 0j, Xs)
    with pytest.raises(ValueError, match="Complex data not supported"):
        OTFeatureRanker().fit(Xs + 1j, X_target=Xt)


# --- degenerate numerics: the feature ranking ---------------------------------------------
def test_an_underflowing_kernel_falls_back_to_the_log_domain_with_the_same_order():
    rng = np.random.RandomState(0)
    Su, Tu = rng.randn(40, 30), rng.randn(40, 30)
    # where both work, the log-domain solver gives POT's "sinkhorn" coupling and order
    for reg in (1.0, 0.1, 0.01):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no fallback here
            d_std = feature_coupling_diagonal(Su, Tu, reg=reg, method="sinkhorn")
        d_log = feature_coupling_diagonal(Su, Tu, reg=reg, method="sinkhorn_log")
        np.testing.assert_allclose(d_std, d_log, rtol=1e-9, atol=0)
        assert np.array_equal(np.argsort(-d_std, kind="stable"), np.argsort(-d_log, kind="stable"))
    # at reg = 1e-3 the kernel underflows: POT's "sinkhorn" stops at iteration 0 with zeros
    from otfs.preprocessing import zscore

    C = np.log1p(ot.dist(zscore(Su.T), zscore(Tu.T)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        G, log = ot.sinkhorn(ot.unif(30), ot.unif(30), C, 1e-3, method="sinkhorn", log=True)
    assert log["niter"] == 0 and not np.diag(G).any()
    with pytest.warns(NumericalFallbackWarning, match=r"underflows at reg=0.001 .* log-domain 'sinkhorn_log'"):
        d, n_iter = feature_coupling_diagonal(Su, Tu, reg=1e-3, return_n_iter=True)
    assert n_iter > 0 and np.unique(d).size == d.size
    np.testing.assert_allclose(d, feature_coupling_diagonal(Su, Tu, reg=1e-3, method="sinkhorn_log"), rtol=1e-12)


def test_scores_that_underflow_even_in_the_log_domain_are_an_error():
    rng = np.random.RandomState(0)
    with pytest.warns(NumericalFallbackWarning), pytest.raises(
            FloatingPointError, match=r"reg=0.0001\): the coupling diagonal underflowed to 0 for \d+ of 30 features, "
                                      r"so their order would be the index order; use a larger reg"):
        feature_coupling_diagonal(rng.randn(40, 30), rng.randn(40, 30), reg=1e-4)


def test_all_equal_scores_are_a_warning():
    with pytest.warns(DegenerateResultWarning, match="every one of the 4 features has the same score"):
        d = feature_coupling_diagonal(np.ones((6, 4)), np.ones((6, 4)))
    assert np.ptp(d) == 0


# --- degenerate numerics: the OT adapters and WDA ---------------------------------------------
def test_ot2_falls_back_to_the_log_domain_and_matches_pots_log_solver(domains):
    Xs, ys, Xt = domains
    a = get_adapter("OT2", reg=1e-3)
    with pytest.warns(NumericalFallbackWarning, match=r"SinkhornAdapter \(OT2\): .* underflows at reg=0.001"):
        Zs, _ = a.adapt(Xs, ys, Xt)
    G = ot.sinkhorn(ot.unif(30), ot.unif(40), ot.utils.cost_normalization(ot.dist(Xs, Xt), "median"), 1e-3,
                    method="sinkhorn_log", numItermax=1000, stopThr=1e-8, warn=False)
    np.testing.assert_allclose(a.coupling_, G, rtol=1e-10, atol=1e-300)
    assert np.isfinite(Zs).all() and (np.abs(Zs).sum(axis=1) > 0).all()


@pytest.mark.parametrize("params, scale", [({"reg": 1e-3}, 1.0), ({"norm": None}, 1e6)])
def test_ot3_with_an_underflowing_kernel_is_an_error_naming_reg(domains, params, scale):
    Xs, ys, Xt = domains
    with pytest.raises(FloatingPointError, match=r"SinkhornLpl1Adapter \(OT3\): the coupling gives no mass to "
                                                 r"\d+ of 30 source samples at reg=.*: exp\(-cost/reg\) underflows"):
        get_adapter("OT3", **params).adapt(Xs * scale, ys, Xt * scale)


@pytest.mark.parametrize("name", ["OT2", "OT3"])
def test_constant_data_cannot_be_normalised(domains, name):
    Xs, ys, Xt = domains
    with pytest.raises(ValueError, match=r"every pairwise cost is 0 .* the samples are constant or identical"):
        get_adapter(name).adapt(np.ones_like(Xs), ys, np.ones_like(Xt))


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_no_adapter_returns_non_finite_output_on_huge_scale(domains, name):
    # huge scale: every adapter either works (finite output) or raises; never NaN in silence
    Xs, ys, Xt = domains
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalFallbackWarning)
            Zs, Zt = get_adapter(name).adapt(Xs * 1e6, ys, Xt * 1e6)
    except (ValueError, FloatingPointError):
        return
    assert np.isfinite(Zs).all() and np.isfinite(Zt).all()


def test_wda_on_degenerate_data_says_why(domains):
    Xs, ys, _ = domains
    with pytest.raises(ValueError, match="WDA: every sample is the same"):
        WassersteinDiscriminantAnalysis(n_components=2).fit(np.ones_like(Xs), ys)
    dup = Xs.copy()
    dup[ys == ys[0]] = Xs[0]
    with pytest.raises(ValueError, match=rf"WDA: the samples of class {ys[0]} are identical \(within-class distance 0\)"):
        WassersteinDiscriminantAnalysis(n_components=2).fit(dup, ys)
    with pytest.raises(ValueError, match=r"exp\(-lambda M\) underflows at the initial projection for "
                                         r"reg_lambda=1.0 .*every coupling between classes would be 0"):
        WassersteinDiscriminantAnalysis(n_components=2, normalize=False).fit(Xs * 1e4, ys)
    # the adapter passes the error on
    with pytest.raises(ValueError, match="WDA: every sample is the same"):
        get_adapter("WDA", n_components=2).adapt(np.ones_like(Xs), ys, Xs)
