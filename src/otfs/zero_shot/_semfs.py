"""Zero-shot feature selection (SemFS, Wang et al.) and the baselines of its experiment.

SemFS ranks features by how well they generate the *attributes* of the seen
classes, so that the selection carries over to classes never seen
(Algorithm 1 of [1]_). With ``D = diag(s)``, ``Y_s`` the attribute vector of
each sample's class and ``Xbar`` each sample's class centre, it minimises
(Eq. 5)

    J(W, s) = ||Y_s - X D W||^2 + alpha ||Y_s - Xbar D W||^2 + gamma ||W||^2,  s >= 0

alternating

- the closed-form ``W`` of Eq. 8, solved as the linear system of Eq. 12
  (:func:`scipy.linalg.solve`, symmetric positive definite);
- projected gradient steps on ``s`` (Eqs. 10-11). For fixed ``W`` the
  objective is the quadratic ``s' (G o W W') s - 2 s' diag(C W') + const``
  with ``G = X'X + alpha Xbar'Xbar`` and ``C = (X' + alpha Xbar') Y_s``; its
  gradient is Lipschitz with constant ``2 lambda_max(G o W W')``, at most
  ``2 max_i (W W')_ii lambda_max(G)`` (Schur). The step is the inverse of
  that bound, so every step decreases the objective.

``alpha = 0`` is the paper's variant SemFS/c (no center-characteristic loss).

The module also holds the experiment's unsupervised baseline
(:class:`SpectralSelector`, in the spirit of MCFS: spectral embedding, then a
sparse regression per eigenvector), the supervised LASSO baseline
(:class:`LassoSelector`) and the clustering scores (:func:`clustering_accuracy`).

References
----------
.. [1] Z. Wang, Q. Wang, T. Zhao, X. Ye. Zero-shot Feature Selection via
   Transferring Supervised Knowledge. arXiv, 2019.
.. [2] D. Cai, C. Zhang, X. He. Unsupervised feature selection for multi-cluster
   data (MCFS). KDD 2010.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from otfs.base import N_FEATURES_TO_SELECT, BaseFeatureRanker
from otfs.registry import Registry

__all__ = ["ZERO_SHOT_SELECTORS", "LassoSelector", "SemanticFeatureSelector", "SpectralSelector",
           "class_attribute_matrix", "clustering_accuracy", "projected_gradient", "register_zero_shot_selector"]


def class_attribute_matrix(y, class_attributes) -> tuple[np.ndarray, np.ndarray]:
    """The classes of ``y`` and their attribute rows, from a mapping or an array.

    ``class_attributes`` is a mapping class -> vector, or an array with one
    row per class of ``np.unique(y)`` in that order.
    """
    classes = np.unique(y)
    if isinstance(class_attributes, Mapping):
        missing = [c for c in classes.tolist() if c not in class_attributes]
        if missing:
            raise ValueError(f"class_attributes has no vector for the classes {missing}")
        A = np.asarray([class_attributes[c] for c in classes.tolist()], dtype=np.float64)
    else:
        A = np.asarray(class_attributes, dtype=np.float64)
        if A.ndim != 2 or A.shape[0] != classes.size:
            raise ValueError(f"class_attributes must have one row per class ({classes.size}), got shape {A.shape}")
    if A.ndim != 2 or not np.isfinite(A).all():
        raise ValueError("class_attributes must be finite vectors of one length")
    return classes, A


def projected_gradient(H, lin, s, step: float, n_steps: int) -> np.ndarray:
    """``n_steps`` projected gradient steps on ``s' H s - 2 lin' s`` over ``s >= 0`` (Eqs. 10-11).

    With ``step <= 1 / (2 lambda_max(H))`` every step decreases the objective.
    Returns a new array.
    """
    s = np.array(s, dtype=np.float64)
    for _ in range(n_steps):
        grad = 2.0 * (H @ s - lin)             # Eq. 10
        s = np.maximum(s - step * grad, 0.0)   # Eq. 11
    return s


class SemanticFeatureSelector(BaseFeatureRanker):
    """SemFS: features that generate the seen classes' attributes, scored by ``s``.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        Features kept by :meth:`transform` (None: half).
    alpha : float, default=1.0
        Weight of the center-characteristic loss (0: SemFS/c).
    gamma : float, default=0.1
        Ridge penalty on ``W``.
    max_iter : int, default=50
        Alternations of the ``W`` and ``s`` updates.
    s_steps : int, default=10
        Projected gradient steps on ``s`` per alternation.
    tol : float, default=1e-10
        Stop when an alternation lowers the objective by less than ``tol``
        times its value.

    Notes
    -----
    With ``W`` at its optimum the gradient in ``s`` is ``-2 gamma ||W_i||^2 /
    s_i``: the scores rise from their start at 1 for the features that
    generate the attributes most, slowly (the objective is invariant to
    scaling ``s`` up and ``W`` down, but for the ridge term). The ranking
    settles within a few alternations while the objective keeps decreasing
    by small amounts, hence the small default ``tol``. Started from 1 with
    ``W`` at its optimum, the scores seldom reach the bound 0 in practice; the
    projection acts when the inner steps overshoot.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        The relaxed indicator ``s`` (non-negative); higher is more important.
    ranking_ : ndarray of shape (n_features_in_,)
        Rank of each feature (1 = highest score).
    order_ : ndarray of shape (n_features_in_,)
        Features from the highest score to the lowest.
    coef_ : ndarray of shape (n_features_in_, n_attributes)
        The generating function ``W``.
    objective_ : ndarray
        The objective after the initial ``W`` update and after every ``s``
        and ``W`` update (non-increasing).
    n_iter_ : int
    classes_ : ndarray
        Seen classes, in the order of the rows of the attribute matrix.
    n_features_in_ : int

    References
    ----------
    .. [1] Z. Wang, Q. Wang, T. Zhao, X. Ye. Zero-shot Feature Selection via
       Transferring Supervised Knowledge. arXiv, 2019.
    """

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "alpha": [Interval(Real, 0, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "s_steps": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_features_to_select=None, alpha=1.0, gamma=0.1, max_iter=50, s_steps=10, tol=1e-10):
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha
        self.gamma = gamma
        self.max_iter = max_iter
        self.s_steps = s_steps
        self.tol = tol

    def fit(self, X, y, class_attributes):
        """Score the features of the seen-class samples ``X`` (labels ``y``) against ``class_attributes``."""
        from scipy.linalg import solve

        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_, A = class_attribute_matrix(y, class_attributes)
        idx = np.searchsorted(self.classes_, y)
        Ys = A[idx]                                            # (n, m) attributes of each sample's class
        centres = np.vstack([X[idx == k].mean(axis=0) for k in range(self.classes_.size)])
        Xbar = centres[idx]                                    # (n, d) each sample's class centre
        d = X.shape[1]
        a, g = float(self.alpha), float(self.gamma)
        G = X.T @ X + a * (Xbar.T @ Xbar)
        C = X.T @ Ys + a * (Xbar.T @ Ys)
        const = float(np.sum(Ys * Ys)) * (1.0 + a)
        lam_G = float(np.linalg.eigvalsh(G)[-1])

        def objective(s, W):  # Eq. 5, expanded with G and C (exact)
            sW = s[:, None] * W
            return const - 2.0 * float(np.sum(C * sW)) + float(np.sum(sW * (G @ sW))) + g * float(np.sum(W * W))

        def update_W(s):  # Eq. 8 as the linear system of Eq. 12
            M = s[:, None] * G * s[None, :]
            M[np.diag_indices(d)] += g
            return solve(M, s[:, None] * C, assume_a="pos")

        s = np.ones(d)
        W = update_W(s)
        trace = [objective(s, W)]
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):  # noqa: B007 - n_iter_ reports it
            WW = W @ W.T
            H = G * WW                                         # half the Hessian in s
            lin = np.sum(C * W, axis=1)                        # diag(C W')
            step = 1.0 / (2.0 * max(float(np.max(np.diag(WW))) * lam_G, 1e-300))
            s = projected_gradient(H, lin, s, step, self.s_steps)
            trace.append(objective(s, W))
            W = update_W(s)
            trace.append(objective(s, W))
            if trace[-3] - trace[-1] <= self.tol * abs(trace[-3]):
                break
        self.coef_ = W
        self.objective_ = np.asarray(trace)
        self.n_iter_ = n_iter
        self._set_scores(s)
        return self


class LassoSelector(BaseFeatureRanker):
    """Supervised LASSO on one-hot labels (or given targets): score = norm of each feature's coefficients.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    alpha : float, default=0.01
        :class:`sklearn.linear_model.Lasso` penalty.
    max_iter : int, default=5000

    References
    ----------
    .. [1] R. Tibshirani. Regression shrinkage and selection via the lasso.
       JRSS B, 1996.
    """

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_features_to_select=None, alpha=0.01, max_iter=5000):
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha
        self.max_iter = max_iter

    def fit(self, X, y):
        from sklearn.linear_model import Lasso
        from sklearn.preprocessing import LabelBinarizer

        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        Y = LabelBinarizer().fit_transform(y).astype(np.float64)
        lasso = Lasso(alpha=self.alpha, max_iter=self.max_iter).fit(X, Y)
        self.n_iter_ = int(np.max(lasso.n_iter_))
        self._set_scores(np.linalg.norm(np.atleast_2d(lasso.coef_), axis=0))
        return self


class SpectralSelector(BaseFeatureRanker):
    """Unsupervised selection in the spirit of MCFS: spectral embedding, then a LASSO per eigenvector.

    The ``n_clusters`` leading non-trivial eigenvectors of a k-nearest-neighbour
    graph Laplacian (:class:`sklearn.manifold.SpectralEmbedding`) are regressed
    on the features with :class:`sklearn.linear_model.Lasso`; a feature scores
    the largest absolute coefficient it gets.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    n_clusters : int, default=5
        Eigenvectors kept (MCFS: the number of clusters).
    n_neighbors : int, default=5
    alpha : float, default=0.001
        LASSO penalty.
    random_state : int, RandomState instance or None, default=None
        Passed to the eigensolver.

    References
    ----------
    .. [1] D. Cai, C. Zhang, X. He. Unsupervised feature selection for
       multi-cluster data. KDD 2010.
    """

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select=None, n_clusters=5, n_neighbors=5, alpha=0.001, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.alpha = alpha
        self.random_state = random_state

    def fit(self, X, y=None):
        from sklearn.linear_model import Lasso
        from sklearn.manifold import SpectralEmbedding

        self._validate_params()
        X = validate_data(self, X, dtype=np.float64)
        E = SpectralEmbedding(n_components=self.n_clusters, affinity="nearest_neighbors",
                              n_neighbors=self.n_neighbors, random_state=self.random_state).fit_transform(X)
        coef = Lasso(alpha=self.alpha, max_iter=5000).fit(X, E).coef_
        self._set_scores(np.max(np.abs(np.atleast_2d(coef)), axis=0))
        return self


def clustering_accuracy(y_true, y_pred) -> float:
    """ACC: the fraction of samples on the best one-to-one matching of clusters to classes (Hungarian)."""
    from scipy.optimize import linear_sum_assignment

    classes, t = np.unique(y_true, return_inverse=True)
    clusters, p = np.unique(y_pred, return_inverse=True)
    counts = np.zeros((clusters.size, classes.size))
    np.add.at(counts, (p, t), 1)
    rows, cols = linear_sum_assignment(counts, maximize=True)
    return float(counts[rows, cols].sum() / len(t))


#: Feature rankers of the zero-shot experiment, by name: ``f(X, y, attributes, X_other, *, seed, **params)``
#: returns the features from the most to the least important. ``X, y`` are the seen-class samples of the
#: clustered domain, ``attributes`` their classes' attribute rows (in the order of ``np.unique(y)``),
#: ``X_other`` the seen-class samples of another domain. ``params`` are keyword arguments (the stage
#: unpacks config ``semfs`` into them); each selector takes the ones it needs and ignores the others.
ZERO_SHOT_SELECTORS = Registry("zero-shot selector", "zero-shot selectors", package="otfs.zero_shot")


#: ``@register_zero_shot_selector("NAME")`` on such a function adds it to :data:`ZERO_SHOT_SELECTORS`.
register_zero_shot_selector = ZERO_SHOT_SELECTORS.register
