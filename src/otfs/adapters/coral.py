"""CORAL: correlation alignment (Sun et al., AAAI 2016).

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from otfs.adapters._base import (
    _POSITIVE,
    BaseAdapter,
    register_adapter,
)


@register_adapter("CORAL")
class CorrelationAlignment(BaseAdapter):
    """Correlation alignment (Sun, Feng & Saenko, AAAI 2016), as in the paper's code.

    ``C_S = cov(Xs) + reg I`` and ``C_T = cov(Xt) + reg I``; the source is
    whitened and re-coloured, ``Xs C_S^{-1/2} C_T^{1/2}``, without centring,
    and the target is unchanged.

    With fewer samples than features the ``d x d`` matrix powers are never
    formed: a covariance of ``n`` samples is low-rank plus ``reg I``,
    ``C = Xc^T U diag(s^2) U^T Xc / (n - 1)`` with ``Xc Xc^T = U diag(s^2) U^T``
    the ``n x n`` Gram matrix of the centred samples, so any power is
    ``f(C) = f(reg) I + Xc^T U diag(g) U^T Xc`` with
    ``g = (f(reg + s^2 / (n - 1)) - f(reg)) / s^2``. Applying it costs
    ``O(n^2 d)`` operations instead of the ``O(d^3)`` of
    ``scipy.linalg.sqrtm``. This is exact (not an
    approximation); :func:`otfs_benchmarks.reference.coral` is the dense
    version it is measured against.

    Parameters
    ----------
    reg : float, default=1.0
        Added to the covariance diagonals (the paper's code uses 1).

    Attributes
    ----------
    source_whitening_, target_colouring_ : callable
        ``Y -> Y C_S^{-1/2}`` and ``Y -> Y C_T^{1/2}``; new source samples go through both, new target
        samples are unchanged.

    References
    ----------
    .. [1] B. Sun, J. Feng, K. Saenko. Return of Frustratingly Easy Domain
       Adaptation. AAAI 2016.
    .. [2] Gautheron, Redko, Lartizien. ECML PKDD 2018, Table 3.
    """

    _parameter_constraints: dict = {"reg": [_POSITIVE]}

    def __init__(self, reg=1.0):
        self.reg = reg

    def _fit_adapt(self, Xs, ys, Xt):
        if Xs.shape[0] < 2 or Xt.shape[0] < 2:
            raise ValueError("CORAL needs at least two samples per domain")
        self.source_whitening_ = _PowerMap.fit(Xs, self.reg, -0.5)
        self.target_colouring_ = _PowerMap.fit(Xt, self.reg, 0.5)
        return self._transform_source(Xs), Xt.copy()

    def _transform_source(self, X):
        return self.target_colouring_(self.source_whitening_(X))

    def _transform_target(self, X):
        return X.copy()


@dataclass(frozen=True)
class _PowerMap:
    """The map ``Y -> Y (cov(X) + reg I)^power``, without forming a ``d x d`` matrix when ``n < d``.

    With ``n >= d`` it holds the eigenpairs ``V, w`` of the ``d x d`` covariance; with ``n < d`` the
    centred samples ``Xc``, the eigenvectors ``U`` of their ``n x n`` Gram matrix and the weights ``g``.
    """

    base: float
    V: np.ndarray | None = None
    w: np.ndarray | None = None
    Xc: np.ndarray | None = None
    U: np.ndarray | None = None
    g: np.ndarray | None = None

    @classmethod
    def fit(cls, X: np.ndarray, reg: float, power: float) -> _PowerMap:
        n, d = X.shape
        Xc = X - X.mean(axis=0)
        base = reg**power
        if n >= d:  # few features: the d x d covariance is the small matrix
            lam, V = np.linalg.eigh(Xc.T @ Xc / (n - 1))
            w = reg**power * np.expm1(power * np.log1p(np.clip(lam, 0.0, None) / reg))
            return cls(base, V=V, w=w)
        # n < d: C = Xc^T U diag(s^2) U^T Xc / (n-1) from the n x n Gram matrix Xc Xc^T = U diag(s^2) U^T,
        # so Y f(C) = f(reg) Y + (Y Xc^T) U diag(g) U^T Xc with g = (f(reg + s^2/(n-1)) - f(reg)) / s^2.
        s2, U = np.linalg.eigh(Xc @ Xc.T)
        s2 = np.clip(s2, 0.0, None)
        lam = s2 / (n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = reg**power * np.expm1(power * np.log1p(lam / reg)) / s2
        # the limit s -> 0 (a null direction of the centred samples)
        small = s2 <= np.finfo(float).eps * max(float(s2.max()), 1.0)
        g[small] = power * reg ** (power - 1.0) / (n - 1)
        return cls(base, Xc=Xc, U=U, g=g)

    def __call__(self, Y: np.ndarray) -> np.ndarray:
        if self.V is not None:
            return self.base * Y + ((Y @ self.V) * self.w) @ self.V.T
        return self.base * Y + ((((Y @ self.Xc.T) @ self.U) * self.g) @ self.U.T) @ self.Xc
