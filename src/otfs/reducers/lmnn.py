"""``LMNN``: large margin nearest neighbor metric learning (Weinberger & Saul, 2009).

One file of the reducers' folder (:data:`otfs.reducers.REDUCERS`).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.optimize
import scipy.sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from otfs._checks import DegenerateResultWarning
from otfs.reducers._base import register_reducer

__all__ = ["LargeMarginNearestNeighbor", "lmnn_loss"]


@register_reducer("LMNN")
def _lmnn(p, n_classes, seed, **params):
    return LargeMarginNearestNeighbor(n_components=p, **params)


def target_neighbors(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Each sample's ``k`` nearest neighbours of its own class in the input space, ``(n, k)`` indices.

    Ties go to the smaller index. A class of ``m <= k`` samples gives its samples ``m - 1`` neighbours; the
    missing slots are ``-1``.
    """
    n = X.shape[0]
    out = np.full((n, k), -1, dtype=np.intp)
    sq = np.einsum("ij,ij->i", X, X)
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        d2 = sq[idx, None] + sq[None, idx] - 2.0 * (X[idx] @ X[idx].T)
        np.fill_diagonal(d2, np.inf)
        m = min(k, len(idx) - 1)
        if m > 0:
            out[idx, :m] = idx[np.argsort(d2, axis=1, kind="stable")[:, :m]]
    return out


def lmnn_loss(L: np.ndarray, X: np.ndarray, y: np.ndarray, targets: np.ndarray,
              push_weight: float = 0.5) -> tuple[float, np.ndarray, int]:
    """LMNN's loss at the linear map ``L`` (``p x d``), its gradient and its number of active constraints.

    ``(1 - mu) sum_{i, j ~> i} |L(x_i - x_j)|^2
    + mu sum_{i, j ~> i} sum_{l: y_l != y_i} [1 + |L(x_i - x_j)|^2 - |L(x_i - x_l)|^2]_+``
    (Weinberger & Saul 2009, Eq. 13-14; ``mu`` is ``push_weight``, ``j ~> i`` the target neighbours
    ``targets``, ``-1`` for none). Only the pairs ``(i, l)`` of different classes closer than ``1 +`` the
    squared distance to ``i``'s farthest target neighbour can be active; they are found in one pass over the
    ``n x n`` distances. The gradient is ``2 L sum_ab w_ab (x_a - x_b)(x_a - x_b)^T`` with the pairs' weights
    ``w`` from the pull term and the active triplets, computed as ``2 Z^T (D - S) X`` with ``Z = X L^T``,
    ``S = W + W^T`` sparse and ``D`` the diagonal of its row sums: no ``d x d`` outer product is formed.
    Where a hinge is exactly 0, its gradient is taken as 0 (a subgradient).
    """
    n = X.shape[0]
    Z = X @ L.T
    sq = np.einsum("ij,ij->i", Z, Z)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (Z @ Z.T), 0.0)
    has = targets >= 0
    rows = np.broadcast_to(np.arange(n)[:, None], targets.shape)
    d_t = np.where(has, D2[rows, np.where(has, targets, 0)], -np.inf)  # (n, k)
    radius = 1.0 + d_t.max(axis=1)
    ci, cl = np.nonzero((D2 < radius[:, None]) & (y[:, None] != y[None, :]))  # the candidate impostors
    d_il = D2[ci, cl]
    loss = (1.0 - push_weight) * float(d_t[has].sum())
    active = 0
    pull = np.full(targets.shape, 1.0 - push_weight)
    push = np.zeros(len(ci))
    for slot in range(targets.shape[1]):
        hinge = 1.0 + d_t[ci, slot] - d_il  # -inf where i has no such target neighbour
        on = hinge > 0.0
        loss += push_weight * float(hinge[on].sum())
        active += int(on.sum())
        pull[:, slot] += push_weight * np.bincount(ci[on], minlength=n)
        push += push_weight * on
    keep = push > 0
    W = scipy.sparse.coo_array(
        (np.concatenate([pull[has], -push[keep]]),
         (np.concatenate([rows[has], ci[keep]]), np.concatenate([targets[has], cl[keep]]))),
        shape=(n, n)).tocsr()
    S = W + W.T
    lap_X = np.asarray(S.sum(axis=1)).ravel()[:, None] * X - S @ X
    grad = 2.0 * (Z.T @ lap_X)
    return loss, grad, active


class LargeMarginNearestNeighbor(TransformerMixin, BaseEstimator):
    """Large margin nearest neighbor (Weinberger & Saul, JMLR 2009): a linear map for kNN classification.

    Each sample's ``n_neighbors`` nearest neighbours of its own class in the input space are its target
    neighbours. The map ``L`` (``n_components x d``) pulls them close and pushes every sample of another
    class at least one unit (squared distance) farther than each target neighbour:

    ``(1 - mu) sum_{i, j ~> i} |L(x_i - x_j)|^2
    + mu sum_{i, j ~> i} sum_{l: y_l != y_i} [1 + |L(x_i - x_j)|^2 - |L(x_i - x_l)|^2]_+``

    (:func:`lmnn_loss`). The loss is minimised over ``L`` itself by SciPy's L-BFGS-B with the exact
    gradient (a subgradient at the hinges' kinks), as scikit-learn's NCA and ``pylmnn`` do, rather than by
    the paper's sub-gradient descent on ``M = L^T L`` with active-set updates: L-BFGS needs no learning rate,
    and optimising ``L`` keeps the metric positive semidefinite and of rank ``n_components`` without
    projections. The paper's sub-gradient descent and metric-learn's gradient descent reach different local
    minima of the same loss; ``tests/test_wda.py`` compares the results with metric-learn 0.7.0's.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows of the map (the projection's dimension); None keeps ``d``.
    n_neighbors : int, default=3
        Target neighbours per sample. 3 is the paper's choice in its experiments and metric-learn's default;
        a class of ``m <= n_neighbors`` samples gives ``m - 1``.
    push_weight : float in [0, 1], default=0.5
        ``mu``, the weight of the push (hinge) term against the pull term; the paper finds 0.5 works well
        and uses it throughout (its Section 3.2).
    init : {"pca", "identity"}, default="pca"
        The map's start: the leading principal directions (scikit-learn's ``PCA(n_components).components_``),
        or the first ``n_components`` rows of the identity. ``"pca"``, metric-learn's choice when the
        projection is smaller than the data (its ``"auto"``), keeps the most variance in the first iterate.
    max_iter : int, default=1000
        L-BFGS-B iterations at most (``n_iter_`` and ``converged_`` say whether it stopped before). The
        budget leaves room for the path's dependence on the CPU: L-BFGS on this piecewise quadratic loss
        follows the rounding of its sums, so the iterations to convergence change with the SIMD kernels
        numpy and OpenBLAS pick (digits, ``n_components=10``: 175 with AVX-512 kernels, 224 with AVX2 ones,
        otfs 2026-12-02; wine 127 and iris 72 on both). With
        few samples per feature LMNN fits the training samples as it converges and its test error grows:
        on MNIST (1,000 training samples, 784 features, p = 10, one split) the 3-NN test error was 16.2 % after 25
        iterations, 21.9 % after 100 and 26.2 % after 400; so the number of iterations is a regulariser,
        which WDA Table 1 cross-validates (``config.yaml``, ``wda.methods.LMNN``).
    tol : float, default=1e-5
        L-BFGS-B's ``ftol``: the relative decrease of the loss below which it stops.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map ``L``; ``transform(X) = X L^T`` and the metric is ``L^T L``.
    target_neighbors_ : ndarray of shape (n_samples, n_neighbors)
        The training samples' target neighbours (``-1`` for a missing one).
    objective_ : float
        The loss at ``components_``.
    n_active_ : int
        The active triplets (positive hinges) at ``components_``.
    n_iter_ : int
        L-BFGS-B's iterations.
    converged_ : bool
        Whether L-BFGS-B met ``tol`` before ``max_iter``.
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Their names, when ``X`` has string column names.

    References
    ----------
    .. [1] K. Q. Weinberger, L. K. Saul. Distance Metric Learning for Large Margin Nearest Neighbor
       Classification. JMLR 10:207-244, 2009.
    .. [2] R. Flamary, M. Cuturi, N. Courty, A. Rakotomamonjy. Wasserstein Discriminant Analysis. GRETSI
       2017, Table 1 (its LMNN column).
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "push_weight": [Interval(Real, 0, 1, closed="both")],
        "init": [StrOptions({"pca", "identity"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_components=None, n_neighbors=3, push_weight=0.5, init="pca", max_iter=1000, tol=1e-5):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.push_weight = push_weight
        self.init = init
        self.max_iter = max_iter
        self.tol = tol

    def _initial_map(self, X, p):
        if self.init == "identity":
            return np.eye(p, X.shape[1])
        from sklearn.decomposition import PCA

        if p > min(X.shape):
            raise ValueError(f"init='pca' gives at most min(n_samples, n_features) = {min(X.shape)} "
                             f"components, not n_components={p}: use init='identity'")
        return PCA(n_components=p, svd_solver="full").fit(X).components_

    def fit(self, X, y):
        """Learn the map from labelled samples ``X``, ``y``; returns ``self``."""
        self._validate_params()
        X, y = validate_data(self, X, y, ensure_min_samples=2, dtype=np.float64)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"LMNN needs at least 2 classes, got {len(self.classes_)}")
        d = X.shape[1]
        p = d if self.n_components is None else int(self.n_components)
        if p > d:
            raise ValueError(f"n_components={p} exceeds the {d} features")
        self.target_neighbors_ = target_neighbors(X, y_idx, int(self.n_neighbors))
        if (self.target_neighbors_ < 0).all():
            raise ValueError("LMNN: every class has a single sample, so no sample has a target neighbour")
        L0 = self._initial_map(X, p)

        def fun(flat):
            loss, grad, _ = lmnn_loss(flat.reshape(p, d), X, y_idx, self.target_neighbors_, self.push_weight)
            return loss, grad.ravel()

        res = scipy.optimize.minimize(fun, L0.ravel(), jac=True, method="L-BFGS-B",
                                      options={"maxiter": int(self.max_iter), "ftol": float(self.tol),
                                               "gtol": 0.0, "maxcor": 20})
        self.components_ = res.x.reshape(p, d)
        self.objective_, _, self.n_active_ = lmnn_loss(self.components_, X, y_idx, self.target_neighbors_,
                                                       self.push_weight)
        self.n_iter_ = int(res.nit)
        self.converged_ = bool(res.success)
        if not np.isfinite(self.components_).all():
            raise FloatingPointError("LMNN: the map has non-finite entries")
        if not np.any(self.components_):
            warnings.warn("LMNN: the map is 0 (every distance collapsed)", DegenerateResultWarning,
                          stacklevel=2)
        return self

    def transform(self, X):
        """Samples mapped by ``components_``: ``X L^T``."""
        check_is_fitted(self, "components_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.components_.T
