"""``fmmd``: MMD feature weighting, in the spirit of Uguroglu & Carbonell (the paper's reference [23]).

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker, n_features_kept
from otfs.rankers._base import FEATURE_RANKERS
from otfs.rankers._per_feature import subsample_domains

__all__ = ["FMMDRanker", "mmd2_weighted", "project_capped_simplex"]


def mmd2_weighted(w, Xs, Xt, sigma2):
    """The biased MMD² between ``Xs`` and ``Xt`` under the Gaussian kernel of weighted features, and its gradient.

    ``k_w(a, b) = exp(-sum_j w_j (a_j - b_j)² / (2 sigma2))``;
    ``MMD² = mean k(s, s') + mean k(t, t') - 2 mean k(s, t)`` over all pairs (the V-statistic, smooth in ``w``).
    """
    X = np.concatenate([Xs, Xt])
    n_s, n_t = len(Xs), len(Xt)
    sq = (X**2) @ w
    D = np.maximum(sq[:, None] + sq[None, :] - 2 * (X * w) @ X.T, 0.0)
    K = np.exp(-D / (2 * sigma2))
    c = np.concatenate([np.full(n_s, 1 / n_s), np.full(n_t, -1 / n_t)])
    M = np.outer(c, c) * K  # + for same-domain pairs, - for cross pairs: sum(M) is the MMD²
    value = float(M.sum())
    # d K_ab / d w_j = -K_ab (x_aj - x_bj)² / (2 sigma2); sum_ab M_ab (x_aj - x_bj)² = 2 (r @ X² - sum_a x_aj (M X)_aj)
    grad = -(M.sum(axis=1) @ X**2 - np.sum(X * (M @ X), axis=0)) / sigma2
    return value, grad


def project_capped_simplex(v, m, tol=1e-12):
    """The Euclidean projection of ``v`` onto ``{w : 0 <= w <= 1, sum(w) = m}`` (bisection on the shift)."""
    lo, hi = v.min() - 1.0, v.max()
    for _ in range(200):
        tau = (lo + hi) / 2
        s = np.clip(v - tau, 0.0, 1.0).sum()
        if abs(s - m) <= tol:
            break
        lo, hi = (tau, hi) if s > m else (lo, tau)
    return np.clip(v - tau, 0.0, 1.0)


@FEATURE_RANKERS.register("fmmd")
class FMMDRanker(TwoDomainRanker):
    """Rank features by the weights that make the two domains closest in MMD.

    Feature weights ``w`` in ``[0, 1]^d`` summing to ``m`` (the number of
    features kept, :mod:`otfs.base`'s rule) minimise the MMD² between
    source and target under the Gaussian kernel of the weighted features
    (:func:`mmd2_weighted`), by projected gradient descent with a
    backtracking step, from uniform weights. Jointly weighted, the features
    that carry the shift get weight 0 and rank last; ``scores_`` is ``w``,
    ties between equal weights broken by the gradient at the solution (a
    smaller increase of the MMD ranks first) through a term below 1e-6.
    The bandwidth is the median heuristic at the uniform weights. Each
    domain is subsampled to at most ``max_samples`` samples (seeded).

    This follows the idea of Uguroglu & Carbonell (select the features whose
    removal minimises the distance between the domains' distributions in an
    RKHS); it is solved here with SciPy-free NumPy projected gradients, not
    with their formulation's solver, and ADAPT's ``fMMD`` (TensorFlow) is
    not a dependency.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        ``m``, the total weight; also the features kept by ``transform``.
    max_iter : int, default=100
        Projected-gradient steps at most; stopping there before the relative decrease of the MMD² falls
        below ``tol`` is a ``ConvergenceWarning``.
    tol : float, default=1e-7
    max_samples : int or None, default=200
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    weights_ : ndarray of shape (n_features_in_,)
    objective_ : float
        MMD² at the solution.
    n_iter_ : int
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`.

    References
    ----------
    .. [1] S. Uguroglu, J. Carbonell. Feature selection for transfer learning.
       ECML PKDD 2011.
    .. [2] A. Gretton, K. Borgwardt, M. Rasch, B. Schölkopf, A. Smola. A
       kernel two-sample test. JMLR 13, 2012.
    """

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_samples": [None, Interval(Integral, 2, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select=None, max_iter=100, max_samples=200, tol=1e-7, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.max_iter = max_iter
        self.max_samples = max_samples
        self.tol = tol
        self.random_state = random_state

    def _score(self, Xs, ys, Xt):
        Xs, Xt = subsample_domains(Xs, Xt, self.max_samples, self.random_state)
        d = Xs.shape[1]
        m = n_features_kept(self.n_features_to_select, d)
        w = np.full(d, m / d)
        X = np.concatenate([Xs, Xt])
        sq = (X**2) @ w
        D = sq[:, None] + sq[None, :] - 2 * (X * w) @ X.T
        sigma2 = float(np.median(D[np.triu_indices(len(X), 1)]))
        if not sigma2 > 0:
            sigma2 = 1.0
        f, g = mmd2_weighted(w, Xs, Xt, sigma2)
        step, n_iter, converged = 1.0, 0, False
        for n_iter in range(1, self.max_iter + 1):  # noqa: B007
            scale = np.abs(g).max()
            if scale == 0:
                converged = True
                break
            while True:
                w_new = project_capped_simplex(w - step * g / scale, m)
                f_new, g_new = mmd2_weighted(w_new, Xs, Xt, sigma2)
                if f_new <= f or step < 1e-8:
                    break
                step /= 2
            done = f - f_new <= self.tol * max(abs(f), 1e-12)
            w, f, g = w_new, f_new, g_new
            step = min(1.0, step * 2)
            if done:
                converged = True
                break
        if not converged:
            import warnings

            from sklearn.exceptions import ConvergenceWarning

            warnings.warn(f"fmmd: the MMD² still fell by more than tol={self.tol} (relative) at max_iter="
                          f"{self.max_iter}; the weights may not be final (raise max_iter)", ConvergenceWarning,
                          stacklevel=3)
        self.weights_, self.objective_, self.n_iter_ = w, f, n_iter
        span = g.max() - g.min()
        tie = (g - g.min()) / span if span > 0 else np.zeros(d)
        return w - 1e-7 * tie
