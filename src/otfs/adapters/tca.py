"""TCA: transfer component analysis (Pan et al., 2011), linear kernel.

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.utils._param_validation import StrOptions

from otfs.adapters._base import (
    _AT_LEAST_ONE,
    _NON_NEGATIVE,
    BaseAdapter,
    register_adapter,
)


@register_adapter("TCA")
class LinearTransferComponentAnalysis(BaseAdapter):
    """Transfer component analysis with a linear kernel (Pan et al., 2011).

    With ``K = X X^T`` over the stacked domains, the MMD matrix
    ``L = e e^T`` (``e_i = 1/n_s`` on source rows, ``-1/n_t`` on target rows)
    and the centring matrix ``H``, the transfer components are the leading
    eigenvectors ``W`` of ``(I + mu K L K)^{-1} K H K``; both domains are
    embedded as ``K W``.

    Parameters
    ----------
    n_components : int, default=80
        Embedding dimension; fewer when fewer features.
    mu : float, default=1.0
        Trade-off parameter (the paper's code uses 1).
    solver : {"paper", "generalized"}, default="paper"
        ``"paper"`` reproduces the released code: ``numpy.linalg.eigh`` of the
        (non-symmetric) matrix ``pinv(I + mu K L K) K H K``, which reads its
        lower triangle only; scikit-learn-compatible skada does the same.
        ``"generalized"`` solves the symmetric-definite generalized problem
        ``K H K w = lambda (I + mu K L K) w`` exactly, with ``W^T A W = I``.

    Attributes
    ----------
    X_fit_ : ndarray of shape (n_s + n_t, n_features)
        The stacked training samples.
    components_ : ndarray of shape (n_s + n_t, n_components)
        ``W``; new samples of either domain are embedded as ``X X_fit^T W`` (skada's out-of-sample map).

    Notes
    -----
    ``L`` has rank one, so ``K L K = k k^T`` with ``k = K e`` and
    ``(I + mu k k^T)^{-1}`` has a closed form (Sherman-Morrison): the
    ``(n_s + n_t)^2`` matrices ``L``, ``H`` and the pseudo-inverse of the
    released code are never formed, and only the ``n_components`` leading
    eigenpairs are computed. :func:`otfs_workflow.benchmark.reference.tca` is the
    dense version this is measured against.

    References
    ----------
    .. [1] S. J. Pan, I. W. Tsang, J. T. Kwok, Q. Yang. Domain Adaptation via
       Transfer Component Analysis. IEEE TNN 22(2), 2011.
    .. [2] Gautheron, Redko, Lartizien. ECML PKDD 2018, Table 3.
    """

    _parameter_constraints: dict = {
        "n_components": [_AT_LEAST_ONE],
        "mu": [_NON_NEGATIVE],
        "solver": [StrOptions({"paper", "generalized"})],
    }

    def __init__(self, n_components=80, mu=1.0, solver="paper"):
        self.n_components = n_components
        self.mu = mu
        self.solver = solver

    def _fit_adapt(self, Xs, ys, Xt):
        ns, nt = Xs.shape[0], Xt.shape[0]
        n, n_feat = ns + nt, Xs.shape[1]
        m = int(min(self.n_components, n_feat, n))
        X = np.vstack([Xs, Xt])
        K = X @ X.T
        e = np.concatenate([np.full(ns, 1.0 / ns), np.full(nt, -1.0 / nt)])
        k = K @ e  # K L K = k k^T, as L = e e^T has rank one
        # K H K, as H is idempotent: through the features when that is cheaper
        if 2 * n_feat * n_feat + n * n_feat < n * n:
            Xc = X - X.mean(axis=0)
            B = X @ (Xc.T @ Xc) @ X.T
        else:
            Kc = K - K.mean(axis=0, keepdims=True)
            B = Kc.T @ Kc
        top = [n - m, n - 1]
        if self.solver == "paper":
            # A = I + mu k k^T, so A^{-1} = I - c k k^T (Sherman-Morrison) and
            # A^{-1} B = B - c k (B k)^T: no pseudo-inverse, no n^3 product.
            # Like numpy.linalg.eigh on the released code's non-symmetric
            # matrix, scipy's eigh reads its lower triangle only.
            c = self.mu / (1.0 + self.mu * float(k @ k))
            M = B - c * np.outer(k, B @ k)
            vals, vecs = scipy.linalg.eigh(M, lower=True, subset_by_index=top, driver="evr")
        else:
            A = np.eye(n) + self.mu * np.outer(k, k)
            vals, vecs = scipy.linalg.eigh(B, A, subset_by_index=top)
        W = vecs[:, np.argsort(-vals, kind="stable")]
        self.X_fit_, self.components_ = X, W
        Z = K @ W
        return Z[:ns], Z[ns:]

    def _transform_source(self, X):
        return (X @ self.X_fit_.T) @ self.components_

    _transform_target = _transform_source
