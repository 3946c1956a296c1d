"""Adapters, each checked against an independent reference on small data."""

import numpy as np
import ot
import pytest
import scipy.linalg
import skada
from sklearn.decomposition import PCA

from otfs.adapters import ADAPTERS, get_adapter

from .conftest import shifted_domains


@pytest.fixture(scope="module")
def domains():
    Xs, ys, Xt, yt, _ = shifted_domains(n_s=40, n_t=55, d=12, k=2, seed=11)
    return Xs, ys, Xt


def _sign_aligned(A, B):
    """B with each column's sign chosen to match A (eigenvectors have no sign)."""
    signs = np.sign(np.sum(A * B, axis=0))
    signs[signs == 0] = 1
    return B * signs


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_adapters_do_not_modify_inputs_and_are_deterministic(name, domains):
    Xs, ys, Xt = domains
    before = [Xs.copy(), ys.copy(), Xt.copy()]
    a = get_adapter(name).fit_transform(Xs, ys, Xt)
    b = get_adapter(name).fit_transform(Xs, ys, Xt)
    for x, x0 in zip((Xs, ys, Xt), before, strict=True):
        np.testing.assert_array_equal(x, x0)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
        assert np.isfinite(u).all()
    assert a[0].shape[0] == Xs.shape[0] and a[1].shape[0] == Xt.shape[0]


def test_coral_matches_the_papers_dense_formula(domains):
    Xs, ys, Xt = domains
    Cs = np.cov(Xs, rowvar=False) + np.eye(Xs.shape[1])
    Ct = np.cov(Xt, rowvar=False) + np.eye(Xt.shape[1])
    ref = Xs @ np.linalg.inv(np.real(scipy.linalg.sqrtm(Cs))) @ np.real(scipy.linalg.sqrtm(Ct))
    Sa, Ta = get_adapter("CORAL").fit_transform(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(Ta, Xt)


def test_sa_matches_the_papers_formula_and_skada(domains):
    Xs, ys, Xt = domains
    d = 5
    Ps = PCA(d, svd_solver="full").fit(Xs).components_.T
    Pt = PCA(d, svd_solver="full").fit(Xt).components_.T
    Sa, Ta = get_adapter("SA", n_components=d).fit_transform(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, Xs @ Ps @ Ps.T @ Pt, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(Ta, Xt @ Pt, rtol=1e-10, atol=1e-10)

    X = np.vstack([Xs, Xt])
    dom = np.r_[np.ones(len(Xs)), -np.ones(len(Xt))].astype(int)
    ref = skada.SubspaceAlignmentAdapter(n_components=d, random_state=0).fit(X, sample_domain=dom)
    # skada projects centred data; the paper (and otfs) project raw data, so
    # the alignment matrices must agree.
    np.testing.assert_allclose(Ps.T @ Pt, ref.M_, atol=1e-6)


def test_sa_uses_fewer_dimensions_than_features(domains):
    Xs, ys, Xt = domains
    Sa, Ta = get_adapter("SA").fit_transform(Xs[:, :7], ys, Xt[:, :7])
    assert Sa.shape == (Xs.shape[0], 7) and Ta.shape == (Xt.shape[0], 7)


def _paper_tca(Xs, Xt, d):
    """The released code's TCA, written out with dense matrices."""
    ns, nt = len(Xs), len(Xt)
    L = np.block([[np.full((ns, ns), 1 / ns**2), np.full((ns, nt), -1 / (ns * nt))],
                  [np.full((nt, ns), -1 / (ns * nt)), np.full((nt, nt), 1 / nt**2)]])
    X = np.vstack([Xs, Xt])
    K = X @ X.T
    H = np.eye(ns + nt) - np.ones((ns + nt, ns + nt)) / (ns + nt)
    inv = np.linalg.pinv(np.eye(ns + nt) + K @ L @ K)
    D, W = np.linalg.eigh(inv @ K @ H @ K)
    W = W[:, np.argsort(-D)[:d]]
    return K[:ns] @ W, K[ns:] @ W


def test_tca_matches_the_papers_dense_code_and_skada(domains):
    Xs, ys, Xt = domains
    d = 4
    Sa, Ta = get_adapter("TCA", n_components=d).fit_transform(Xs, ys, Xt)
    Rs, Rt = _paper_tca(Xs, Xt, d)
    ours, ref = np.vstack([Sa, Ta]), np.vstack([Rs, Rt])
    np.testing.assert_allclose(_sign_aligned(ref, ours), ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())

    X = np.vstack([Xs, Xt])
    dom = np.r_[np.ones(len(Xs)), -np.ones(len(Xt))].astype(int)
    tca = skada.TransferComponentAnalysisAdapter(kernel="linear", n_components=d, mu=1.0)
    Z = tca.fit(X, sample_domain=dom).transform(X, sample_domain=dom, allow_source=True)
    np.testing.assert_allclose(_sign_aligned(Z, ours), Z, rtol=1e-5, atol=1e-6 * np.abs(Z).max())


def test_tca_generalized_solver_solves_the_eigenproblem(domains):
    Xs, ys, Xt = domains
    d = 3
    Sa, Ta = get_adapter("TCA", n_components=d, solver="generalized").fit_transform(Xs, ys, Xt)
    ns, nt = len(Xs), len(Xt)
    X = np.vstack([Xs, Xt])
    K = X @ X.T
    e = np.r_[np.full(ns, 1 / ns), np.full(nt, -1 / nt)]
    A = np.eye(ns + nt) + np.outer(K @ e, K @ e)
    H = np.eye(ns + nt) - 1 / (ns + nt)
    vals, vecs = scipy.linalg.eigh(K @ H @ K, A)
    W = vecs[:, np.argsort(-vals)[:d]]
    ref = K @ W
    ours = np.vstack([Sa, Ta])
    np.testing.assert_allclose(_sign_aligned(ref, ours), ref, rtol=1e-6, atol=1e-8 * np.abs(ref).max())
    with pytest.raises(ValueError, match="solver"):
        get_adapter("TCA", solver="svd").fit_transform(Xs, ys, Xt)


def test_ot_matches_pot_emd_transport(domains):
    Xs, ys, Xt = domains
    ref = ot.da.EMDTransport(metric="sqeuclidean", max_iter=100000).fit(Xs=Xs, Xt=Xt).transform(Xs=Xs)
    Sa, Ta = get_adapter("OT").fit_transform(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(Ta, Xt)


def test_ot2_matches_pot_sinkhorn_transport(domains):
    Xs, ys, Xt = domains
    ref = ot.da.SinkhornTransport(
        reg_e=2.0, method="sinkhorn", norm="median", max_iter=1000, tol=1e-8,
        out_of_sample_map="ferradans",
    ).fit(Xs=Xs, Xt=Xt).transform(Xs=Xs)
    Sa, _ = get_adapter("OT2").fit_transform(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Sinkhorn did not converge")
def test_ot3_matches_pot_sinkhorn_lpl1_transport(domains):
    Xs, ys, Xt = domains
    ref = ot.da.SinkhornLpl1Transport(
        reg_e=2.0, reg_cl=1.0, norm="median", max_iter=10, max_inner_iter=200, tol=1e-8,
    ).fit(Xs=Xs, ys=ys, Xt=Xt).transform(Xs=Xs)
    Sa, _ = get_adapter("OT3").fit_transform(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Sinkhorn did not converge")
@pytest.mark.parametrize("seed", range(4))
def test_ot3_solver_is_pots_coupling_bit_for_bit(seed):
    """otfs._ot.solvers.sinkhorn_lpl1_mm (the class update per class, POT's layout) is ot.da.sinkhorn_lpl1_mm exactly,
    with string labels, 2 to 10 classes, unequal sizes and inner solves that stop at their limit."""
    from otfs._ot.solvers import sinkhorn_lpl1_mm

    rng = np.random.default_rng(seed)
    ns, nt = rng.integers(40, 300, size=2)
    n_classes = [2, 3, 10, 4][seed]
    ys = np.array(["c%d" % c for c in rng.integers(0, n_classes, ns)]) if seed == 3 else rng.integers(0, n_classes, ns)
    M = ot.dist(rng.normal(size=(ns, 6)), rng.normal(size=(nt, 6)) + 0.5)
    M /= np.median(M)
    a, b = ot.unif(ns), ot.unif(nt)
    inner = 5 if seed == 2 else 200
    ref = ot.da.sinkhorn_lpl1_mm(a, ys, b, M, 2.0, eta=1.0, numItermax=10, numInnerItermax=inner, stopInnerThr=1e-8)
    before = M.copy()
    ours = sinkhorn_lpl1_mm(a, ys, b, M, 2.0, 1.0, 10, inner, 1e-8)
    assert np.array_equal(ours, ref) and np.array_equal(M, before)


def test_ot3_keeps_classes_apart_more_than_ot2():
    # The class regulariser stops a target sample from receiving mass from
    # several source classes: fewer mixed columns than plain entropic OT.
    Xs, ys, Xt, _, _ = shifted_domains(n_s=60, n_t=60, d=6, k=0, n_classes=3, seed=2)

    def mixed_mass(adapter):
        adapter.fit_transform(Xs, ys, Xt)
        G = adapter.coupling_
        per_class = np.stack([G[ys == c].sum(0) for c in np.unique(ys)])
        return float((per_class.sum(0) - per_class.max(0)).sum())

    assert mixed_mass(get_adapter("OT3")) < 0.5 * mixed_mass(get_adapter("OT2"))
