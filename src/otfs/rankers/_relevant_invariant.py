"""Relevant and invariant feature selection (Persello & Bruzzone).

A subset of ``m`` features is scored by two kernel criteria:

- relevance ``R``, the HSIC between the features and the labels, Eq. (1):
  ``R = tr(K H L H) / n^2``, with an RBF input kernel ``K`` on the selected
  features and a linear output kernel ``L`` on one-hot labels;
- invariance ``Theta``, the distance between the kernel embeddings of the
  conditional distributions ``P(X | Y)`` of the two domains, Eq. (3):
  ``sum(Ls * Os Ks Os) + sum(Lt * Ot Kt Ot) - 2 sum(Lst * Os Kst Ot)`` with
  ``O = (L + lambda I)^-1``. It is the squared Hilbert-Schmidt distance
  between the two empirical conditional-embedding operators; with the 0/1
  output kernel it is ``sum_c ||mu_s(X | c) - mu_t(X | c)||^2`` and tends to
  the sum of the per-class MMDs as ``lambda -> 0``.

The subsets on the Pareto front of ``min(-R, Theta)`` over ``|subset| = m``
are searched with NSGA-II from pymoo; a rule then picks one subset from the
front: the best accuracy on labelled target samples (the paper's choice), the
knee of the front, or the largest relevance (relevance-only selection).

The method needs labelled samples in both domains. With three classes or
more, the paper's 1/-1 output kernel is not positive semi-definite: ``Theta``
is then no longer a squared distance and can be negative (it is one for two
classes, and always with the 0/1 kernel, the default).

References
----------
.. [1] C. Persello, L. Bruzzone. Relevant and invariant feature selection of
   hyperspectral images for domain generalization. IGARSS 2014.
.. [2] K. Deb, A. Pratap, S. Agarwal, T. Meyarivan. A fast and elitist
   multiobjective genetic algorithm: NSGA-II. IEEE TEC 6(2), 2002.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from otfs._checks import as_float_matrix, as_label_vector, check_same_features
from otfs.base import N_FEATURES_TO_SELECT, BaseFeatureRanker, n_features_kept

__all__ = [
    "OUTPUT_KERNELS",
    "RULES",
    "InvarianceCriteria",
    "RelevantInvariantSelector",
    "conditional_shift",
    "hsic",
    "knee_point",
    "non_dominated",
    "output_kernel",
]

OUTPUT_KERNELS = ("delta", "signed")
RULES = ("target_accuracy", "knee", "relevance")


def output_kernel(ya, yb, kind: str = "delta") -> np.ndarray:
    """Output kernel of section 2.3: 1 for the same class, else 0 (``"delta"``) or -1 (``"signed"``)."""
    same = np.asarray(ya)[:, None] == np.asarray(yb)[None, :]
    if kind == "delta":
        return same.astype(float)
    if kind == "signed":
        return np.where(same, 1.0, -1.0)
    raise ValueError(f"unknown output kernel {kind!r}; choose one of {OUTPUT_KERNELS}")


def _sqdist(A, B):
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.maximum(d, 0.0)


def _input_kernel(A, B, gamma):
    if gamma == "linear":
        return A @ B.T
    return np.exp(-gamma * _sqdist(A, B))


def hsic(X, y, gamma=None) -> float:
    """Empirical HSIC of Eq. (1): ``tr(K H L H) / n^2``.

    ``K`` is the RBF kernel ``exp(-gamma ||x - x'||^2)`` (``gamma=None``:
    ``1 / (d var(X))``, scikit-learn's ``"scale"``; ``"linear"``: ``X X^T``),
    ``L`` the linear kernel on one-hot labels.
    """
    X = as_float_matrix(X, "X")
    y = as_label_vector(y, X.shape[0])
    return InvarianceCriteria(X, y, X, y, gamma=gamma).relevance(np.arange(X.shape[1]))


def conditional_shift(Xs, ys, Xt, yt, reg=1e-2, gamma=None, output="delta") -> float:
    """The invariance term Theta of Eq. (3) between two labelled domains (0 for identical ones)."""
    Xs, Xt = as_float_matrix(Xs, "Xs"), as_float_matrix(Xt, "Xt")
    check_same_features(Xs, Xt)
    ys = as_label_vector(ys, Xs.shape[0], "ys")
    yt = as_label_vector(yt, Xt.shape[0], "yt")
    crit = InvarianceCriteria(Xs, ys, Xt, yt, reg=reg, gamma=gamma, output=output)
    return crit.invariance(np.arange(Xs.shape[1]))


class InvarianceCriteria:
    """``R`` and ``Theta`` of any feature subset, with the label-only parts precomputed.

    Both criteria are linear in the input kernels:
    ``R = sum(Ks * H Ls H) / n_s^2`` and
    ``Theta = sum(Ks * Os Ls Os) + sum(Kt * Ot Lt Ot) - 2 sum(Kst * Os Lst Ot)``,
    so the matrices that depend on the labels only are computed once and
    each subset costs three kernel evaluations.

    Parameters
    ----------
    Xs, ys : source samples and labels (the relevance is measured on them)
    Xt, yt : labelled target samples
    reg : float
        ``lambda`` of the conditional embeddings.
    gamma : float, "linear" or None
        RBF width; None: ``1 / (m var)`` of the selected source features.
    output : {"delta", "signed"}
    """

    def __init__(self, Xs, ys, Xt, yt, reg=1e-2, gamma=None, output="delta"):
        self.Xs, self.Xt = Xs, Xt
        self.gamma = gamma
        ns, nt = len(ys), len(yt)
        Ls, Lt, Lst = output_kernel(ys, ys, output), output_kernel(yt, yt, output), output_kernel(ys, yt, output)
        H = np.eye(ns) - 1.0 / ns
        self._hlh = H @ output_kernel(ys, ys, "delta") @ H / ns**2
        Os = np.linalg.inv(Ls + reg * np.eye(ns))
        Ot = np.linalg.inv(Lt + reg * np.eye(nt))
        self._bs, self._bt, self._bst = Os @ Ls @ Os, Ot @ Lt @ Ot, Os @ Lst @ Ot

    def _gamma(self, cols):
        if self.gamma is not None:
            return self.gamma
        var = self.Xs[:, cols].var()
        return 1.0 / (len(cols) * var) if var > 0 else 1.0

    def relevance(self, cols) -> float:
        A = self.Xs[:, cols]
        return float(np.sum(_input_kernel(A, A, self._gamma(cols)) * self._hlh))

    def invariance(self, cols) -> float:
        g = self._gamma(cols)
        A, B = self.Xs[:, cols], self.Xt[:, cols]
        return float(np.sum(_input_kernel(A, A, g) * self._bs) + np.sum(_input_kernel(B, B, g) * self._bt)
                     - 2.0 * np.sum(_input_kernel(A, B, g) * self._bst))


def non_dominated(F) -> np.ndarray:
    """Mask of the rows of ``F`` (objectives to minimise) that no other row dominates."""
    F = np.asarray(F, dtype=float)
    le = (F[:, None, :] <= F[None, :, :]).all(axis=2)
    lt = (F[:, None, :] < F[None, :, :]).any(axis=2)
    dominated = (le & lt).any(axis=0)  # row j is dominated by some row i
    return ~dominated


def knee_point(F) -> int:
    """Index of the knee of a 2-objective front: farthest from the line through its extremes."""
    F = np.asarray(F, dtype=float)
    span = F.max(axis=0) - F.min(axis=0)
    G = (F - F.min(axis=0)) / np.where(span > 0, span, 1.0)
    a, b = G[np.argmin(G[:, 0])], G[np.argmin(G[:, 1])]
    direction = b - a
    norm = np.linalg.norm(direction)
    if norm == 0:
        return int(np.argmin(G.sum(axis=1)))
    dist = np.abs(direction[0] * (G[:, 1] - a[1]) - direction[1] * (G[:, 0] - a[0])) / norm
    return int(np.argmax(dist))


def _nsga2(crit, d, m, pop_size, n_gen, seed):
    """Pareto front of ``min(-R, Theta)`` over subsets of size ``m``, by pymoo's NSGA-II."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.crossover import Crossover
    from pymoo.core.mutation import Mutation
    from pymoo.core.problem import Problem
    from pymoo.core.sampling import Sampling
    from pymoo.optimize import minimize

    class SubsetProblem(Problem):
        def __init__(self):
            super().__init__(n_var=d, n_obj=2, xl=0, xu=1, vtype=bool)

        def _evaluate(self, x, out, *args, **kwargs):
            F = np.empty((len(x), 2))
            for i, mask in enumerate(x):
                cols = np.flatnonzero(mask)
                F[i] = (-crit.relevance(cols), crit.invariance(cols))
            out["F"] = F

    class SubsetSampling(Sampling):
        def _do(self, problem, n_samples, **kwargs):
            rng = kwargs.get("random_state") or np.random.default_rng(seed)
            X = np.zeros((n_samples, d), dtype=bool)
            for row in X:
                row[rng.choice(d, m, replace=False)] = True
            return X

    class SubsetCrossover(Crossover):
        """Keep the features both parents share; fill up from their union, at random."""

        def __init__(self):
            super().__init__(2, 1)

        def _do(self, problem, X, **kwargs):
            rng = kwargs.get("random_state") or np.random.default_rng(seed)
            _, n_matings, _ = X.shape
            out = np.zeros((1, n_matings, d), dtype=bool)
            for k in range(n_matings):
                p1, p2 = X[0, k], X[1, k]
                both = np.flatnonzero(p1 & p2)
                either = np.flatnonzero(p1 ^ p2)
                fill = rng.choice(either, m - len(both), replace=False)
                out[0, k, both] = True
                out[0, k, fill] = True
            return out

    class SwapMutation(Mutation):
        """Swap one selected feature for an unselected one, with probability 1/2 per child."""

        def _do(self, problem, X, **kwargs):
            rng = kwargs.get("random_state") or np.random.default_rng(seed)
            X = X.copy()
            for row in X:
                if rng.random() < 0.5:
                    row[rng.choice(np.flatnonzero(row))] = False
                    row[rng.choice(np.flatnonzero(~row))] = True
            return X

    algorithm = NSGA2(pop_size=pop_size, sampling=SubsetSampling(), crossover=SubsetCrossover(),
                      mutation=SwapMutation(), eliminate_duplicates=True)
    res = minimize(SubsetProblem(), algorithm, ("n_gen", n_gen), seed=seed, verbose=False)
    X = np.atleast_2d(res.X).astype(bool)
    F = np.atleast_2d(res.F)
    keep = non_dominated(F)
    X, F = X[keep], F[keep]
    order = np.lexsort((F[:, 1], F[:, 0]))
    return X[order], F[order]


def _one_nn_accuracy(Xtr, ytr, Xte, yte):
    from sklearn.neighbors import KNeighborsClassifier

    return 100.0 * float(np.mean(KNeighborsClassifier(1).fit(Xtr, ytr).predict(Xte) == yte))


class RelevantInvariantSelector(BaseFeatureRanker):
    """Select ``m`` features that are relevant (HSIC) and invariant across domains (Theta).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=10
        Subset size ``m`` (a float: a fraction of the features; None: half),
        by the rankers' shared rule; it must be below the number of features.
    reg : float, default=1e-2
        ``lambda`` of the conditional embeddings (Eq. 3).
    output_kernel : {"delta", "signed"}, default="delta"
        Output kernel of the invariance term (section 2.3): 1 for the same
        class and 0 (``"delta"``) or -1 (``"signed"``) otherwise.
    gamma : float or None, default=None
        RBF width of the input kernel; None: ``1 / (m var)``.
    pop_size : int, default=60
    n_gen : int, default=60
        NSGA-II population and generations.
    rule : {"target_accuracy", "knee", "relevance"}, default="target_accuracy"
        How one subset is picked from the front: the best 1-NN accuracy on
        the labelled target samples (trained on the source; ties to the
        larger relevance), the knee, or the largest relevance.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    front_masks_ : ndarray of shape (n_front, n_features), bool
        The Pareto-optimal subsets, sorted by decreasing relevance.
    front_ : ndarray of shape (n_front, 2)
        Their objectives ``(-R, Theta)``.
    chosen_ : int
        Row of the front the rule picked.
    front_frequency_ : ndarray of shape (n_features,)
        Fraction of the front's subsets that contain each feature.
    scores_ : ndarray of shape (n_features,)
        ``front_frequency_``, plus 2 for the features of the chosen subset,
        so that the chosen subset comes first.
    order_, ranking_, support_ : the shared ranker contract
        (:mod:`otfs.base`): feature indices by decreasing score; the rank of
        each feature (1 = best); the chosen subset (the first
        ``n_features_to_select`` of ``order_``).
    n_features_in_ : int

    References
    ----------
    .. [1] C. Persello, L. Bruzzone. Relevant and invariant feature selection
       of hyperspectral images for domain generalization. IGARSS 2014.
    """

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "reg": [Interval(Real, 0, None, closed="neither")],
        "output_kernel": [StrOptions(set(OUTPUT_KERNELS))],
        "gamma": [None, Interval(Real, 0, None, closed="neither")],
        "pop_size": [Interval(Integral, 4, None, closed="left")],
        "n_gen": [Interval(Integral, 1, None, closed="left")],
        "rule": [StrOptions(set(RULES))],
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select=10, reg=1e-2, output_kernel="delta", gamma=None,
                 pop_size=60, n_gen=60, rule="target_accuracy", random_state=None):
        self.n_features_to_select = n_features_to_select
        self.reg = reg
        self.output_kernel = output_kernel
        self.gamma = gamma
        self.pop_size = pop_size
        self.n_gen = n_gen
        self.rule = rule
        self.random_state = random_state

    def fit(self, X, y, X_target=None, y_target=None, sample_domain=None):
        """Search the front on labelled source ``(X, y)`` and labelled target ``(X_target, y_target)``.

        Or both domains stacked in ``X, y`` with skada's ``sample_domain``
        (positive: source, negative: target); the target's labels are read,
        as this method needs them.
        """
        if sample_domain is not None:
            if X_target is not None or y_target is not None:
                raise ValueError("give the target either as X_target, y_target or through sample_domain, not both")
            from otfs._checks import split_domains

            X, X_target, y, y_target, _ = split_domains(X, sample_domain, y)
        elif X_target is None or y_target is None:
            raise ValueError("RelevantInvariantSelector needs labelled target samples: X_target and y_target, "
                             "or sample_domain")
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        Xt = as_float_matrix(X_target, "X_target")
        check_same_features(X, Xt, ("X", "X_target"))
        yt = as_label_vector(y_target, Xt.shape[0], "y_target")
        missing = sorted(set(np.unique(y).tolist()) - set(np.unique(yt).tolist()))
        if missing:
            raise ValueError(f"y_target has no sample of the classes {missing}: the invariance term "
                             "compares each class across domains")
        d = X.shape[1]
        m = n_features_kept(self.n_features_to_select, d)  # the shared rule (otfs.base)
        if m >= d:
            raise ValueError(f"n_features_to_select={m} must be below the {d} features")
        seed = int(check_random_state(self.random_state).randint(2**31 - 1))
        crit = InvarianceCriteria(X, y, Xt, yt, reg=self.reg, gamma=self.gamma, output=self.output_kernel)
        masks, F = _nsga2(crit, d, m, self.pop_size, self.n_gen, seed)
        self.front_masks_, self.front_ = masks, F
        if self.rule == "relevance":
            chosen = int(np.argmin(F[:, 0]))
        elif self.rule == "knee":
            chosen = knee_point(F)
        else:
            acc = np.array([_one_nn_accuracy(X[:, mk], y, Xt[:, mk], yt) for mk in masks])
            self.target_accuracies_ = acc
            best = np.flatnonzero(acc == acc.max())
            chosen = int(best[np.argmin(F[best, 0])])
        self.chosen_ = chosen
        self.front_frequency_ = masks.mean(axis=0)
        # the chosen subset scores above 2, every other feature at most 1: it is the top of the order
        return self._set_scores(self.front_frequency_ + 2.0 * masks[chosen], warn_equal=False)
