"""The straightforward implementations, written the paper's way.

These are the yardsticks of :mod:`otfs_benchmarks`: each computes what a
method of the library computes, the way the paper's released code (or a user
of POT and scikit-learn) would write it, with dense matrices and library
classes. The library's implementations must give the same results, to
round-off, and the benchmark suite measures both their speed and their
difference. They are not used by the pipeline.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018.
"""

from __future__ import annotations

import warnings

import numpy as np
import ot
import scipy.linalg
from sklearn.decomposition import PCA
from sklearn.neighbors import KNeighborsClassifier

from otfs.preprocessing import zscore
from otfs.sample_selection._base import argmax_rows

__all__ = [
    "coral",
    "mmd2_by_pairs",
    "na_curve",
    "ot_adapter",
    "rank",
    "subspace_alignment",
    "tca",
    "wda_autograd",
]


def rank(Xs, Xt, *, reg=1.0, norm="log", tie_break="lowest", sinkhorn_method=None):
    """Algorithms 1 and 2 with POT's domain-adaptation classes.

    ``ot.da.EMDTransport`` pairs the samples (the smaller set keeps all its
    samples, each matched to the largest entry of its coupling row), and
    ``ot.da.SinkhornTransport(reg_e=reg, norm=norm)`` couples the z-scored
    features. ``sinkhorn_method=None`` keeps POT's current default solver
    (``"sinkhorn_log"`` since POT 0.9.4, with ``out_of_sample_map="continuous"``);
    every other option is POT's default.

    Returns
    -------
    scores : ndarray of shape (d,)
        The coupling diagonal.
    """
    flipped = Xs.shape[0] > Xt.shape[0]
    small, large = (Xt, Xs) if flipped else (Xs, Xt)
    emd = ot.da.EMDTransport().fit(Xs=small, Xt=large)
    chosen = argmax_rows(emd.coupling_, tie_break=tie_break)
    Su, Tu = (large[chosen], small) if flipped else (small, large[chosen])
    options = {} if sinkhorn_method is None else {"method": sinkhorn_method, "out_of_sample_map": "ferradans"}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sinkhorn did not converge")
        sk = ot.da.SinkhornTransport(reg_e=reg, norm=norm, **options)
        sk.fit(Xs=zscore(Su.T, axis=0), Xt=zscore(Tu.T, axis=0))
    return np.diag(sk.coupling_).copy()


def coral(Xs, Xt, reg=1.0):
    """CORAL with ``scipy.linalg.sqrtm`` and ``inv`` on the ``d x d`` covariances."""
    eye = reg * np.eye(Xs.shape[1])
    Cs = np.cov(Xs, rowvar=False) + eye
    Ct = np.cov(Xt, rowvar=False) + eye
    Cs_inv_sqrt = scipy.linalg.inv(np.real(scipy.linalg.sqrtm(Cs)))
    return Xs @ Cs_inv_sqrt @ np.real(scipy.linalg.sqrtm(Ct)), Xt.copy()


def tca(Xs, Xt, n_components=80, mu=1.0):
    """Linear-kernel TCA as the released code: dense ``L``, ``H``, ``pinv`` and ``eigh``."""
    ns, nt = Xs.shape[0], Xt.shape[0]
    n = ns + nt
    X = np.vstack([Xs, Xt])
    K = X @ X.T
    e = np.vstack([np.full((ns, 1), 1.0 / ns), np.full((nt, 1), -1.0 / nt)])
    L = e @ e.T
    H = np.eye(n) - np.full((n, n), 1.0 / n)
    A = np.eye(n) + mu * K @ L @ K
    B = K @ H @ K
    vals, vecs = np.linalg.eigh(np.linalg.pinv(A) @ B)
    m = min(n_components, Xs.shape[1])
    W = vecs[:, np.argsort(-vals, kind="stable")[:m]]
    Z = K @ W
    return Z[:ns], Z[ns:]


def subspace_alignment(Xs, Xt, n_components=80):
    """Subspace alignment with scikit-learn's exact PCA."""
    d = min(n_components, Xs.shape[1], Xs.shape[0], Xt.shape[0])
    Ps = PCA(d, svd_solver="full").fit(Xs).components_.T
    Pt = PCA(d, svd_solver="full").fit(Xt).components_.T
    return Xs @ Ps @ Ps.T @ Pt, Xt @ Pt


def ot_adapter(name, Xs, ys, Xt):
    """OT, OT2 or OT3 with POT's ``ot.da`` classes, options as in the paper's code."""
    if name == "OT":
        model = ot.da.EMDTransport()
    elif name == "OT2":
        model = ot.da.SinkhornTransport(
            reg_e=2.0, norm="median", method="sinkhorn", out_of_sample_map="ferradans"
        )
    elif name == "OT3":
        model = ot.da.SinkhornLpl1Transport(reg_e=2.0, reg_cl=1.0, norm="median")
    else:
        raise ValueError(f"unknown OT adapter {name!r}")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sinkhorn did not converge")
        model.fit(Xs=Xs, ys=ys, Xt=Xt)
    return model.transform(Xs=Xs), Xt.copy()


def na_curve(Xs, ys, Xt, yt, order, n_features):
    """1-NN accuracy (%) on the first ``n`` features of ``order``: a fresh classifier per ``n``."""
    out = []
    for n in n_features:
        cols = np.asarray(order)[:n]
        knn = KNeighborsClassifier(n_neighbors=1).fit(Xs[:, cols], ys)
        out.append(100.0 * float(np.mean(knn.predict(Xt[:, cols]) == yt)))
    return out


def mmd2_by_pairs(Xs, Xt):
    """The per-feature unbiased MMD² with the median heuristic, every pair of samples written out.

    For each feature: the squared distances of all pairs of the pooled samples, σ the square root of their
    median (1 where it is 0), and Gretton et al.'s unbiased estimate from the three kernel matrices.
    """
    n_s, n_t = Xs.shape[0], Xt.shape[0]
    out = np.empty(Xs.shape[1])
    for j in range(Xs.shape[1]):
        s, t = Xs[:, j], Xt[:, j]
        pooled = np.r_[s, t]
        d2 = ((pooled[:, None] - pooled[None, :]) ** 2)[np.triu_indices(n_s + n_t, 1)]
        sigma = np.sqrt(np.median(d2))
        sigma = sigma if sigma > 0 else 1.0

        def k(a, b, sigma=sigma):
            return np.exp((a[:, None] - b[None, :]) ** 2 / (-2 * sigma**2))

        kss, ktt = k(s, s), k(t, t)
        out[j] = ((kss.sum() - np.trace(kss)) / (n_s * (n_s - 1)) + (ktt.sum() - np.trace(ktt)) / (n_t * (n_t - 1))
                  - 2 * k(s, t).mean())
    return out


def wda_autograd(X, y, n_components, *, max_iter, random_state, reg_lambda=1.0, sinkhorn_iter=10,
                 normalize=False, init="random"):
    """WDA with the gradient traced by autograd, as POT's ``ot.dr.wda`` takes it: ``(P, iterations, cost)``,
    the ``d x p`` projection, the optimiser's iterations and the objective there.

    The batched objective of :class:`otfs.reducers.WassersteinDiscriminantAnalysis`, differentiated by
    autograd (``pymanopt.function.autograd``), its cost evaluated again at each iterate, and pymanopt's
    steepest descent from the same start: the library before its gradient was written out.
    """
    import autograd.numpy as anp
    import pymanopt

    from otfs.reducers._wda import _BatchedObjective, initial_projection

    Xc = X - X.mean(axis=0)
    P0 = initial_projection(init, Xc, y, n_components, random_state)
    objective = _BatchedObjective(Xc, y, 1.0 / reg_lambda, sinkhorn_iter, P0, normalize)
    manifold = pymanopt.manifolds.Stiefel(X.shape[1], n_components)

    @pymanopt.function.autograd(manifold)
    def cost(P):
        return objective(anp, P)

    solver = pymanopt.optimizers.SteepestDescent(max_iterations=max_iter, verbosity=0, log_verbosity=0)
    result = solver.run(pymanopt.Problem(manifold=manifold, cost=cost), initial_point=P0)
    return result.point, result.iterations, result.cost
