"""``LFDA``: local Fisher discriminant analysis (Sugiyama, 2007).

One file of the reducers' folder (:data:`otfs.reducers.REDUCERS`).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from otfs.reducers._base import register_reducer

__all__ = ["LocalFisherDiscriminantAnalysis", "local_scatters"]


@register_reducer("LFDA")
def _lfda(p, n_classes, seed, **params):
    return LocalFisherDiscriminantAnalysis(n_components=p, **params)


def local_scatters(X: np.ndarray, y: np.ndarray, k: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """LFDA's local between-class and within-class scatter matrices ``(S_b, S_w)``.

    ``S = 1/2 sum_ij W_ij (x_i - x_j)(x_i - x_j)^T`` with, for ``x_i`` and
    ``x_j`` of the same class ``c`` (``n_c`` samples), ``W^w_ij = A_ij / n_c``
    and ``W^b_ij = A_ij (1/n - 1/n_c)``, and for different classes
    ``W^w_ij = 0``, ``W^b_ij = 1/n``. The affinity is Zelnik-Manor and
    Perona's local scaling, ``A_ij = exp(-|x_i - x_j|^2 / (sigma_i sigma_j))``,
    ``sigma_i`` the distance from ``x_i`` to its ``k``-th nearest neighbour of
    its class (``A_ij = 0`` where ``sigma_i sigma_j = 0``), computed as
    Sugiyama's released ``LFDA.m`` computes it: class by class, through the
    Laplacian ``X^T (D - A) X`` instead of the double sum.
    """
    n, d = X.shape
    Sw = np.zeros((d, d))
    Sb = np.zeros((d, d))
    for c in np.unique(y):
        Xc = X[y == c]
        nc = Xc.shape[0]
        sq = np.einsum("ij,ij->i", Xc, Xc)
        dist2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (Xc @ Xc.T), 0.0)
        kth = np.sort(dist2, axis=0)[min(k, nc - 1)]  # the k-th neighbour, the sample itself at 0
        scale = np.sqrt(kth)[:, None] * np.sqrt(kth)[None, :]
        A = np.zeros_like(dist2)
        np.divide(-dist2, scale, out=A, where=scale != 0)
        np.exp(A, out=A, where=scale != 0)
        A[scale == 0] = 0.0
        G = Xc.T @ (A.sum(axis=1)[:, None] * Xc) - Xc.T @ A @ Xc  # 1/2 sum_ij A_ij (x_i - x_j)(x_i - x_j)^T
        total = Xc.sum(axis=0)
        Sb += G / n + Xc.T @ Xc * (1.0 - nc / n) + np.outer(total, total) / n
        Sw += G / nc
    total = X.sum(axis=0)
    Sb -= np.outer(total, total) / n + Sw
    return (Sb + Sb.T) / 2.0, (Sw + Sw.T) / 2.0


class LocalFisherDiscriminantAnalysis(TransformerMixin, BaseEstimator):
    """Local Fisher discriminant analysis (Sugiyama, JMLR 2007), a supervised linear projection.

    Fisher's criterion with local scatter matrices (:func:`local_scatters`):
    pairs of the same class count in proportion to their affinity, so a
    class made of several clusters keeps them apart instead of being
    squeezed into one. The projection's directions are the leading
    generalized eigenvectors of ``S_b phi = lambda S_w phi``, scaled as the
    released code's default ``"weighted"`` metric does (``sqrt(lambda)``
    per direction).

    Where the paper leaves a choice: with fewer samples per class than
    features (the WDA protocol's 100 added noise features) ``S_w`` is
    singular and the eigenproblem undefined, so ``reg`` times its mean
    eigenvalue is added to its diagonal (the released code has no
    regularisation; ``reg=0`` keeps it so).

    Parameters
    ----------
    n_components : int or None, default=None
        The projection's dimension (all features by default).
    k : int, default=7
        The neighbour of the local scaling (the paper's 7).
    embedding : {"weighted", "orthonormalized", "plain"}, default="weighted"
        The released code's ``metric``: the eigenvectors scaled by
        ``sqrt(lambda)``, an orthonormal basis of their span, or as they are.
    reg : float, default=1e-3
        Added to ``S_w``'s diagonal, relative to its mean eigenvalue.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features_in_)
        ``transform(X) = X @ components_.T``.
    eigenvalues_ : ndarray of shape (n_components,)
    n_features_in_ : int

    References
    ----------
    .. [1] M. Sugiyama. Dimensionality Reduction of Multimodal Labeled Data by
       Local Fisher Discriminant Analysis. JMLR 8, 2007.
    .. [2] L. Zelnik-Manor, P. Perona. Self-tuning spectral clustering.
       NIPS 2004.
    .. [3] R. Flamary, M. Cuturi, N. Courty, A. Rakotomamonjy. Wasserstein
       Discriminant Analysis. GRETSI 2017, Table 1 (LFDA's column).
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "embedding": [StrOptions({"weighted", "orthonormalized", "plain"})],
        "reg": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_components=None, k=7, embedding="weighted", reg=1e-3):
        self.n_components = n_components
        self.k = k
        self.embedding = embedding
        self.reg = reg

    def fit(self, X, y):
        """Fit the projection on labelled samples; returns ``self``."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        d = X.shape[1]
        r = d if self.n_components is None else int(self.n_components)
        if r > d:
            raise ValueError(f"n_components={r} is more than the {d} features")
        if np.unique(y).size < 2:
            raise ValueError("LFDA needs at least two classes")
        Sb, Sw = local_scatters(X, np.asarray(y), int(self.k))
        if self.reg:
            Sw = Sw + self.reg * max(np.trace(Sw) / d, np.finfo(float).tiny) * np.eye(d)
        try:
            vals, vecs = scipy.linalg.eigh(Sb, Sw, subset_by_index=[d - r, d - 1])
        except np.linalg.LinAlgError:
            raise ValueError("LFDA's within-class scatter is singular: set reg > 0") from None
        order = np.argsort(-vals, kind="stable")
        vals, vecs = vals[order], vecs[:, order]
        if self.embedding == "weighted":
            vecs = vecs * np.sqrt(np.clip(vals, 0.0, None))
        elif self.embedding == "orthonormalized":
            vecs = np.linalg.qr(vecs)[0]
        self.components_, self.eigenvalues_ = vecs.T, vals
        return self

    def transform(self, X):
        check_is_fitted(self, "components_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.components_.T
