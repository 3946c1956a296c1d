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
    a = get_adapter(name).adapt(Xs, ys, Xt)
    b = get_adapter(name).adapt(Xs, ys, Xt)
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
    Sa, Ta = get_adapter("CORAL").adapt(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(Ta, Xt)


def test_sa_matches_the_papers_formula_and_skada(domains):
    Xs, ys, Xt = domains
    d = 5
    Ps = PCA(d, svd_solver="full").fit(Xs).components_.T
    Pt = PCA(d, svd_solver="full").fit(Xt).components_.T
    Sa, Ta = get_adapter("SA", n_components=d).adapt(Xs, ys, Xt)
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
    Sa, Ta = get_adapter("SA").adapt(Xs[:, :7], ys, Xt[:, :7])
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
    Sa, Ta = get_adapter("TCA", n_components=d).adapt(Xs, ys, Xt)
    Rs, Rt = _paper_tca(Xs, Xt, d)
    ours, ref = np.vstack([Sa, Ta]), np.vstack([Rs, Rt])
    np.testing.assert_allclose(_sign_aligned(ref, ours), ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())

    X = np.vstack([Xs, Xt])
    dom = np.r_[np.ones(len(Xs)), -np.ones(len(Xt))].astype(int)
    tca = skada.TransferComponentAnalysisAdapter(kernel="linear", n_components=d, mu=1.0)
    Z = tca.fit(X, sample_domain=dom).transform(X, sample_domain=dom, allow_source=True)
    np.testing.assert_allclose(_sign_aligned(Z, ours), Z, rtol=1e-5, atol=1e-6 * np.abs(Z).max())


@pytest.mark.parametrize("n_features, arpack", [(270, True), (290, False)])
def test_tcas_auto_solver_takes_lanczos_below_0_4_n_features(monkeypatch, n_features, arpack):
    """eigen_solver="auto": ARPACK below 0.4 n features (n = 700 samples here), LAPACK above, where it was
    measured faster (CHANGELOG.md, "TCA"); both give the same embedding."""
    import scipy.sparse.linalg

    from otfs.adapters.tca import LinearTransferComponentAnalysis

    calls = []
    eigsh = scipy.sparse.linalg.eigsh
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", lambda *a, **k: calls.append(1) or eigsh(*a, **k))
    Xs, ys, Xt, _, _ = shifted_domains(n_s=200, n_t=500, d=n_features, k=5, seed=3)
    auto, _ = LinearTransferComponentAnalysis(eigen_solver="auto").adapt(Xs, ys, Xt)
    assert bool(calls) == arpack
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", eigsh)
    dense, _ = LinearTransferComponentAnalysis(eigen_solver="dense").adapt(Xs, ys, Xt)
    np.testing.assert_allclose(auto, dense, rtol=1e-9, atol=1e-9 * np.abs(dense).max())


def test_tca_generalized_solver_solves_the_eigenproblem(domains):
    Xs, ys, Xt = domains
    d = 3
    Sa, Ta = get_adapter("TCA", n_components=d, solver="generalized").adapt(Xs, ys, Xt)
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
        get_adapter("TCA", solver="svd").adapt(Xs, ys, Xt)


@pytest.mark.simd
def test_ot_matches_pot_emd_transport(domains):
    Xs, ys, Xt = domains
    ref = ot.da.EMDTransport(metric="sqeuclidean", max_iter=100000).fit(Xs=Xs, Xt=Xt).transform(Xs=Xs)
    Sa, Ta = get_adapter("OT").adapt(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(Ta, Xt)


@pytest.mark.simd
def test_ot2_matches_pot_sinkhorn_transport(domains):
    Xs, ys, Xt = domains
    ref = ot.da.SinkhornTransport(
        reg_e=2.0, method="sinkhorn", norm="median", max_iter=1000, tol=1e-8,
        out_of_sample_map="ferradans",
    ).fit(Xs=Xs, Xt=Xt).transform(Xs=Xs)
    Sa, _ = get_adapter("OT2").adapt(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.simd
@pytest.mark.filterwarnings("ignore:Sinkhorn did not converge")
def test_ot3_matches_pot_sinkhorn_lpl1_transport(domains):
    Xs, ys, Xt = domains
    ref = ot.da.SinkhornLpl1Transport(
        reg_e=2.0, reg_cl=1.0, norm="median", max_iter=10, max_inner_iter=200, tol=1e-8,
    ).fit(Xs=Xs, ys=ys, Xt=Xt).transform(Xs=Xs)
    Sa, _ = get_adapter("OT3").adapt(Xs, ys, Xt)
    np.testing.assert_allclose(Sa, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.simd
@pytest.mark.filterwarnings("ignore:Sinkhorn did not converge")
@pytest.mark.filterwarnings("ignore:Warning. numerical errors")
@pytest.mark.parametrize("seed", range(7))
def test_ot3_solver_is_pots_coupling_bit_for_bit(seed):
    """otfs._ot.solvers.sinkhorn_lpl1_mm (its own class update and inner Sinkhorn) is ot.da.sinkhorn_lpl1_mm exactly:
    string labels, 2 to 10 classes, unequal sizes, inner solves that stop at their limit, a cost in C and in
    Fortran order, arrays below and above NumPy's 256 KiB for adding into a temporary (which decides the layout
    of POT's cost, and so the round-off), 1 to 10 outer iterations, a kernel that underflows."""
    from otfs._ot.solvers import sinkhorn_lpl1_mm

    rng = np.random.default_rng(seed)
    ns, nt = [*rng.integers(40, 300, size=2)] if seed < 4 else [(200, 600), (30, 20), (120, 90)][seed - 4]
    n_classes = [2, 3, 10, 4, 10, 3, 5][seed]
    ys = np.array(["c%d" % c for c in rng.integers(0, n_classes, ns)]) if seed == 3 else rng.integers(0, n_classes, ns)
    M = ot.dist(rng.normal(size=(ns, 6)), rng.normal(size=(nt, 6)) + 0.5)
    M /= np.median(M)
    if seed in (4, 5):
        M = np.asfortranarray(M)
    a, b = ot.unif(ns), ot.unif(nt)
    inner = 5 if seed == 2 else 200
    reg = 0.004 if seed == 6 else 2.0  # exp(-M / reg) underflows: POT's solves stop on numerical errors
    before = M.copy(order="K")
    for outer in (1, 2, 10):
        ref = ot.da.sinkhorn_lpl1_mm(a, ys, b, M, reg, eta=1.0, numItermax=outer, numInnerItermax=inner,
                                     stopInnerThr=1e-8)
        with np.errstate(all="ignore"):
            ours = sinkhorn_lpl1_mm(a, ys, b, M, reg, 1.0, outer, inner, 1e-8)
        assert np.array_equal(ours, ref, equal_nan=True), (outer, np.nanmax(np.abs(ours - ref)))
        assert ours.flags.f_contiguous == ref.flags.f_contiguous
    assert np.array_equal(M, before) and M.flags.f_contiguous == before.flags.f_contiguous


@pytest.mark.simd
def test_ot3_keeps_classes_apart_more_than_ot2():
    # The class regulariser stops a target sample from receiving mass from
    # several source classes: fewer mixed columns than plain entropic OT.
    Xs, ys, Xt, _, _ = shifted_domains(n_s=60, n_t=60, d=6, k=0, n_classes=3, seed=2)

    def mixed_mass(adapter):
        adapter.adapt(Xs, ys, Xt)
        G = adapter.coupling_
        per_class = np.stack([G[ys == c].sum(0) for c in np.unique(ys)])
        return float((per_class.sum(0) - per_class.max(0)).sum())

    assert mixed_mass(get_adapter("OT3")) < 0.5 * mixed_mass(get_adapter("OT2"))


# -- skada's language: fit(X, y, sample_domain) / transform, a step of skada.make_da_pipeline ------------------------

PAPER_ADAPTERS = ["NA", "SA", "CORAL", "TCA", "OT", "OT2", "OT3", "WDA"]
_SMALL = {"SA": {"n_components": 4}, "TCA": {"n_components": 4}, "WDA": {"n_components": 2, "max_iter": 5}}


def _stacked(Xs, ys, Xt):
    X = np.vstack([Xs, Xt])
    sample_domain = np.r_[np.ones(len(Xs), int), np.full(len(Xt), -2)]
    return X, np.r_[ys, np.full(len(Xt), -1)], sample_domain


@pytest.mark.parametrize("name", PAPER_ADAPTERS)
def test_every_adapter_is_a_step_of_skadas_da_pipeline_and_predicts_as_the_grid(name, domains):
    """In make_da_pipeline the adapter gets sample_domain by metadata routing; the target predictions are
    those of the 1-NN the grid trains on adapt's output."""
    from sklearn.neighbors import KNeighborsClassifier

    from otfs._skada import routing

    Xs, ys, Xt = domains
    X, y, sample_domain = _stacked(Xs, ys, Xt)
    Sa, Ta = get_adapter(name, **_SMALL.get(name, {})).adapt(Xs, ys, Xt)
    expected = KNeighborsClassifier(1).fit(Sa, ys).predict(Ta)
    with routing():
        pipe = skada.make_da_pipeline(get_adapter(name, **_SMALL.get(name, {})), KNeighborsClassifier(1))
        pipe.fit(X, y, sample_domain=sample_domain)
        predicted = pipe.predict(Xt, sample_domain=np.full(len(Xt), -2))
    np.testing.assert_array_equal(predicted, expected)


def test_an_adapter_beside_skadas_own_adapters_in_one_pipeline(domains):
    """skada's CORAL (centred, Ledoit-Wolf) then the paper's SA: each step sees the previous step's output."""
    from sklearn.neighbors import KNeighborsClassifier

    from otfs._skada import routing
    from otfs.adapters import PCASubspaceAlignment

    Xs, ys, Xt = domains
    X, y, sample_domain = _stacked(Xs, ys, Xt)
    with routing():
        first = skada.CORALAdapter().fit(X, sample_domain=sample_domain)
        Z = first.transform(X, sample_domain=sample_domain, allow_source=True)
        pipe = skada.make_da_pipeline(skada.CORALAdapter(), PCASubspaceAlignment(n_components=4),
                                      KNeighborsClassifier(1))
        pipe.fit(X, y, sample_domain=sample_domain)
        predicted = pipe.predict(Xt, sample_domain=np.full(len(Xt), -2))
    Sa, Ta = PCASubspaceAlignment(n_components=4).adapt(Z[: len(Xs)], ys, Z[len(Xs):])
    np.testing.assert_array_equal(predicted, KNeighborsClassifier(1).fit(Sa, ys).predict(Ta))


@pytest.mark.parametrize("name", PAPER_ADAPTERS)
def test_fit_transform_and_transform_give_adapts_samples(name, domains):
    """fit_transform on the stacked rows is adapt in the rows' order, with sample_domain or with the target
    labels masked as -1; transform of the training rows repeats it."""
    Xs, ys, Xt = domains
    X, y, sample_domain = _stacked(Xs, ys, Xt)
    # the domains interleaved, each in its own order (the paper's TCA reads one triangle of a non-symmetric
    # matrix, so it depends on the order of the samples within a domain)
    is_target = np.random.default_rng(0).permutation(sample_domain < 0)
    order = np.empty(len(X), int)
    order[~is_target], order[is_target] = np.arange(len(Xs)), len(Xs) + np.arange(len(Xt))
    X, y, sample_domain = X[order], y[order], sample_domain[order]
    adapter = get_adapter(name, **_SMALL.get(name, {}))
    Sa, Ta = adapter.adapt(Xs, ys, Xt)
    expected = np.vstack([Sa, Ta])[order]
    # equal to round-off: BLAS may sum in another order on the rows gathered from the interleaved input
    tol = {"rtol": 1e-12, "atol": 1e-12 * np.abs(expected).max()}
    np.testing.assert_allclose(adapter.fit_transform(X, y, sample_domain=sample_domain), expected, **tol)
    np.testing.assert_allclose(get_adapter(name, **_SMALL.get(name, {})).fit_transform(X, y), expected, **tol)
    assert adapter.fit(X, y, sample_domain=sample_domain) is adapter
    again = adapter.transform(X, sample_domain=sample_domain, allow_source=True)
    np.testing.assert_allclose(again, expected, **tol)
    np.testing.assert_allclose(adapter.transform(Xt), Ta, rtol=1e-12, atol=1e-12 * np.abs(Ta).max())


def test_transform_refuses_source_rows_unless_allowed_and_checks_its_input(domains):
    from sklearn.exceptions import NotFittedError

    Xs, ys, Xt = domains
    with pytest.raises(NotFittedError):
        get_adapter("CORAL").transform(Xt)
    adapter = get_adapter("CORAL").fit(*_stacked(Xs, ys, Xt)[:1], _stacked(Xs, ys, Xt)[1])
    with pytest.raises(ValueError, match=r"got 40 source sample\(s\) \(sample_domain > 0\) with allow_source=False"):
        adapter.transform(Xs, sample_domain=np.ones(len(Xs), int))
    with pytest.raises(ValueError, match="X has 11 features, but CorrelationAlignment was fitted with 12"):
        adapter.transform(Xt[:, :11])
    with pytest.raises(ValueError, match="one value per sample of X"):
        adapter.transform(Xt, sample_domain=[-2, -2])
    with pytest.raises(ValueError, match="needs sample_domain, or y with the target samples' labels masked"):
        get_adapter("NA").fit(Xs)
    with pytest.raises(ValueError, match="one source domain .* and one target domain"):
        get_adapter("NA").fit(Xs, ys, sample_domain=np.ones(len(Xs), int))


@pytest.mark.simd
def test_ot_adapters_map_new_source_samples_as_pots_transport_does(domains):
    """A source sample outside the training set moves as its nearest training source sample (POT's
    out-of-sample map, Ferradans et al. 2014): checked against ot.da.EMDTransport and SinkhornTransport."""
    Xs, ys, Xt = domains
    X, y, sample_domain = _stacked(Xs, ys, Xt)
    new = Xs[:7] + 0.05 * np.random.default_rng(3).normal(size=(7, Xs.shape[1]))
    cases = [("OT", ot.da.EMDTransport(metric="sqeuclidean", norm=None, max_iter=100000)),
             ("OT2", ot.da.SinkhornTransport(reg_e=2.0, method="sinkhorn", metric="sqeuclidean", norm="median", max_iter=1000,
                                             tol=1e-8, out_of_sample_map="ferradans"))]
    for name, reference in cases:
        reference.fit(Xs=Xs, ys=ys, Xt=Xt)
        adapter = get_adapter(name).fit(X, y, sample_domain=sample_domain)
        np.testing.assert_allclose(adapter.coupling_, reference.coupling_, rtol=1e-12, atol=1e-15, err_msg=name)
        ours = adapter.transform(new, sample_domain=np.ones(len(new), int), allow_source=True)
        np.testing.assert_allclose(ours, reference.transform(Xs=new), rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_array_equal(adapter.transform(Xt), Xt)  # the target stays where it is


def test_linear_maps_apply_to_new_samples(domains):
    """SA, CORAL and TCA keep their fitted maps: new samples go through the same matrices as the training
    samples (SA: sklearn's PCA directions; CORAL: the dense formula; TCA: skada's out-of-sample kernel map)."""
    Xs, ys, Xt = domains
    X, y, sample_domain = _stacked(Xs, ys, Xt)
    rng = np.random.default_rng(5)
    new_s, new_t = Xs[:6] + rng.normal(size=(6, 12)), Xt[:6] + rng.normal(size=(6, 12))
    src, tgt = np.ones(6, int), np.full(6, -2)

    sa = get_adapter("SA", n_components=4).fit(X, y, sample_domain=sample_domain)
    Ps = PCA(4, svd_solver="full").fit(Xs).components_.T
    Pt = PCA(4, svd_solver="full").fit(Xt).components_.T
    Ps, Pt = _sign_aligned(sa.source_components_, Ps), _sign_aligned(sa.target_components_, Pt)
    np.testing.assert_allclose(sa.transform(new_t), new_t @ Pt, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(sa.transform(new_s, sample_domain=src, allow_source=True),
                               new_s @ Ps @ Ps.T @ Pt, rtol=1e-10, atol=1e-10)

    coral = get_adapter("CORAL").fit(X, y, sample_domain=sample_domain)
    Cs = np.cov(Xs, rowvar=False) + np.eye(12)
    Ct = np.cov(Xt, rowvar=False) + np.eye(12)
    dense = np.linalg.inv(np.real(scipy.linalg.sqrtm(Cs))) @ np.real(scipy.linalg.sqrtm(Ct))
    np.testing.assert_allclose(coral.transform(new_s, sample_domain=src, allow_source=True), new_s @ dense,
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(coral.transform(new_t, sample_domain=tgt), new_t)

    tca = get_adapter("TCA", n_components=4).fit(X, y, sample_domain=sample_domain)
    ref = skada.TransferComponentAnalysisAdapter(kernel="linear", n_components=4, mu=1.0)
    ref.fit(X, sample_domain=np.where(sample_domain > 0, 1, -1))
    expected = ref.transform(new_t, sample_domain=np.full(6, -1))
    ours = tca.transform(new_t)
    np.testing.assert_allclose(_sign_aligned(expected, ours), expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


def test_docs_skada_pipeline_example_runs_as_written(capsys):
    """docs/library.md's block: the paper's CORAL in skada's pipeline scores what adapt + 1-NN scores."""
    from skada.datasets import make_shifted_datasets
    from sklearn.neighbors import KNeighborsClassifier

    from otfs._skada import routing
    from otfs.adapters import CorrelationAlignment

    from .conftest import docs_block

    with routing():
        exec(docs_block("library.md", "# the paper's CORAL in a skada pipeline"), {})
    printed = float(capsys.readouterr().out.strip())
    X, y, sample_domain = make_shifted_datasets(20, 20, shift="covariate_shift", noise=0.5, random_state=0)
    source = sample_domain > 0
    Sa, Ta = CorrelationAlignment(reg=1.0).adapt(X[source], y[source], X[~source])
    assert printed == KNeighborsClassifier(1).fit(Sa, y[source]).score(Ta, y[~source])
    assert 0.0 < printed < 1.0
