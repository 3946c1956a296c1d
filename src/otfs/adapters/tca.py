"""TCA: transfer component analysis (Pan et al., 2011), linear kernel.

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse.linalg
from sklearn.utils._param_validation import StrOptions

from otfs.adapters._base import (
    _AT_LEAST_ONE,
    _NON_NEGATIVE,
    BaseAdapter,
    leading_eigenpairs,
    register_adapter,
)

#: ARPACK's mat-vec through sparse features (4 passes over the nonzeros) is taken where it costs at most this
#: share of ``n^2`` operations: the measured crossover of the mat-vec through dense features (``2 n d`` at
#: ``d = 0.4 n``). On Amazon 5,000's pairs (1,200 samples, 1.8 % to 8 % nonzero at 625 to 5,000 words) it is
#: 2.0x to 2.3x faster than LAPACK's dense solver, with embeddings within 3e-14 (CHANGELOG.md, 2026-11-29).
SPARSE_MATVEC_SHARE = 0.8



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
    eigen_solver : {"auto", "dense", "arpack"}, default="auto"
        How the ``"paper"`` solver finds its leading eigenpairs. ``"dense"``:
        LAPACK's ``syevr`` on the ``n x n`` matrix (``n = n_s + n_t``), whose
        tridiagonal reduction costs ``O(n^3)`` whatever ``n_components``.
        ``"arpack"``: the implicitly restarted Lanczos method of
        :func:`scipy.sparse.linalg.eigsh` (tolerance 0: machine precision)
        on a matrix-vector product that never forms the matrix, ``O(n d)``
        through the features, ``O(nnz)`` through sparse features (word
        counts) or ``O(n^2)`` through the kernel. ``"auto"`` takes
        ``"arpack"`` when the embedding has at most ``n / 8`` dimensions and
        the features are fewer than ``0.4 n`` (the product goes through
        them) or have at most ``0.2 n^2`` nonzero values (the product goes
        through them as a sparse matrix, :data:`SPARSE_MATVEC_SHARE`), where
        it was measured faster on the data families and the images
        (CHANGELOG.md, "TCA"). The ``"generalized"`` solver is always dense.

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
    eigenpairs are computed. :func:`otfs_benchmarks.reference.tca` is the
    dense version this is measured against. Each column of ``W`` is signed so
    that its largest entry is positive (an eigenvector's sign is arbitrary;
    no distance depends on it), so both eigen-solvers give the same embedding.

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
        "eigen_solver": [StrOptions({"auto", "dense", "arpack"})],
    }

    def __init__(self, n_components=80, mu=1.0, solver="paper", eigen_solver="auto"):
        self.n_components = n_components
        self.mu = mu
        self.solver = solver
        self.eigen_solver = eigen_solver

    def _uses_arpack(self, n, n_feat, m, nnz=None):
        """Whether ARPACK finds the components, and whether its mat-vec goes through sparse features."""
        if self.solver != "paper" or self.eigen_solver == "dense":
            return False, False
        sparse = nnz is not None and 4 * nnz <= SPARSE_MATVEC_SHARE * n * n
        if self.eigen_solver == "arpack":
            return m < n, sparse and 5 * n_feat >= 2 * n  # ARPACK finds fewer eigenpairs than the matrix's order
        # measured crossovers (CHANGELOG.md, "TCA"): 0.30 n to 0.45 n features, by the data's Lanczos
        # iterations, that is a mat-vec through the dense features of 2 n d <= 0.8 n^2 operations; through
        # sparse features one of 4 nnz operations, at most as many
        if 8 * m > n:
            return False, False
        if 5 * n_feat < 2 * n:
            return True, False
        return sparse, sparse

    def _fit_adapt(self, Xs, ys, Xt):
        ns, nt = Xs.shape[0], Xt.shape[0]
        n, n_feat = ns + nt, Xs.shape[1]
        m = int(min(self.n_components, n_feat, n))
        X = np.vstack([Xs, Xt])
        e = np.concatenate([np.full(ns, 1.0 / ns), np.full(nt, -1.0 / nt)])
        arpack, sparse = self._uses_arpack(n, n_feat, m, nnz=np.count_nonzero(X))
        # ARPACK with fewer features than half the samples, or through sparse ones, never forms the n x n kernel
        K = None if arpack and (sparse or 2 * n_feat < n) else X @ X.T
        S = scipy.sparse.csr_array(X) if sparse else None
        W = self._arpack_components(X if S is None else S, K, e, m) if arpack else None
        if W is None:  # LAPACK, chosen or because ARPACK did not converge: the dense solver's embedding
            K = X @ X.T if K is None else K
            W = self._dense_components(X, K, e, m)
        W = _flip_signs(W)
        self.X_fit_, self.components_ = X, W
        if K is not None:
            Z = K @ W
        elif S is not None:
            Z = S @ (S.T @ W)
        else:
            Z = X @ (X.T @ W)
        return Z[:ns], Z[ns:]

    def _dense_components(self, X, K, e, m):
        n, n_feat = X.shape
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
        return vecs[:, np.argsort(-vals, kind="stable")]

    def _arpack_components(self, X, K, e, m):
        """The ``m`` leading eigenvectors of the paper's matrix by Lanczos, without forming it (None where
        ARPACK fails or does not converge, and where the m-th eigenvalue is not separated from the next,
        so that LAPACK's solution, an arbitrary basis of a repeated eigenvalue's space, is kept). ARPACK gets
        :data:`~otfs.adapters._base.ARPACK_MAX_RESTARTS` restarts, not SciPy's ``10 n``.

        The matrix ``syevr`` reads is ``S = tril(M) + tril(M, -1)^T`` with
        ``M = B - c k g^T`` (``B = K H K``, ``g = B k``): ``S = B - c (tril(k g^T)
        + tril(k g^T, -1)^T)``, whose two triangular rank-one parts multiply a
        vector in ``O(n)`` by cumulative sums.
        """
        n = X.shape[0]
        if scipy.sparse.issparse(X):  # B v = X (X^T X - n mu mu^T) X^T v: four passes over the nonzeros, O(nnz)
            Xt = X.T.tocsr()
            mean = np.asarray(X.mean(axis=0)).ravel()

            def B(v):
                u = Xt @ v
                return X @ (Xt @ (X @ u) - n * mean * float(mean @ u))

            k = X @ (Xt @ e)
        elif K is None:  # B v = X Xc^T Xc X^T v = P (X^T v) with P = X (Xc^T Xc): two passes over n x d, O(n d)
            Xc = X - X.mean(axis=0)
            P = X @ (Xc.T @ Xc)

            def B(v):
                return P @ (X.T @ v)

            k = X @ (X.T @ e)
        else:  # B v = Kc^T Kc v, O(n^2)
            Kc = K - K.mean(axis=0, keepdims=True)

            def B(v):
                return Kc.T @ (Kc @ v)

            k = K @ e
        g = B(k)
        c = self.mu / (1.0 + self.mu * float(k @ k))

        def S(v):
            v = np.ravel(v)
            kv = k * v
            lower = k * np.cumsum(g * v)  # tril(k g^T) v
            upper = g * (np.cumsum(kv[::-1])[::-1] - kv)  # tril(k g^T, -1)^T v
            return B(v) - c * (lower + upper)

        found = leading_eigenpairs(S, n, m)
        return None if found is None else found[1]

    def _transform_source(self, X):
        return (X @ self.X_fit_.T) @ self.components_

    _transform_target = _transform_source


def _flip_signs(W):
    """Each eigenvector signed so that its largest entry in absolute value is positive.

    An eigenvector's sign is arbitrary and differs between LAPACK and ARPACK;
    this makes the embedding the same whichever solver found it.
    """
    idx = np.argmax(np.abs(W), axis=0)
    signs = np.sign(W[idx, np.arange(W.shape[1])])
    signs[signs == 0] = 1.0
    return W * signs
