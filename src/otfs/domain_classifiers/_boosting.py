"""Non-linear domain adaptation with boosting (Becker, Christoudias & Fua).

Gradient boosting of the exponential loss over several tasks (domains) with
one decision boundary ``beta`` shared by all of them (Algorithm 1 of [1]_):

    f_t(x) = sum_k beta_k h_k(x - tau_k^t)

Each weak learner ``h_k`` is a regression tree whose every split tests one
feature ``n`` against a threshold ``tau^t`` of its own in each task ``t``,
while the tree's structure and leaf values are shared (Eq. 6). A feature
shift between the domains is thus absorbed by the thresholds; decision stumps
are trees of depth 1.

Each iteration follows Algorithm 1: weights ``w = exp(-y f_t(x))`` and targets
``r = y`` (the quadratic approximation of Zheng et al.), a weighted
least-squares tree fitted to them, a line search for its weight ``alpha``
(step 5, :func:`scipy.optimize.minimize_scalar`), and the shrunken update
``beta = gamma * alpha``.

Split search
------------
The features are binned once per task (quantile edges placed between
distinct values; exact while a feature has at most ``max_bins`` distinct
values in a task). At a node, per-bin sums of ``w``, ``w r`` and counts are
accumulated for every feature at once (``numpy.bincount``), the smaller
child's histograms are computed and its sibling's obtained by subtraction,
and prefix sums give every candidate threshold of every feature.

With one task the best split of every feature is exact, as in an ordinary
regression tree. With several, the thresholds are coupled only through the
shared leaf values: for fixed leaf values ``eta_1 > eta_2`` the loss of task
``t`` is ``2 (eta_1 - eta_2) (m W_L^t - S_L^t)`` plus a constant, with
``m = (eta_1 + eta_2) / 2`` and ``W_L^t, S_L^t`` the left sums of ``w`` and
``w r``, so each task chooses its threshold independently. The search scans a
grid of ``m`` (both orientations) and refines the best candidate of every
feature by alternating leaf values and thresholds; every candidate is scored
by the exact weighted squared error of the joint split.

References
----------
.. [1] C. Becker, C. M. Christoudias, P. Fua. Non-Linear Domain Adaptation
   with Boosting. NIPS 2013.
.. [2] Z. Zheng, H. Zha, T. Zhang, O. Chapelle, K. Chen, G. Sun. A General
   Boosting Method and its Application to Learning Ranking Functions for Web
   Search. NIPS 2007.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from otfs._checks import as_label_vector
from otfs.registry import Registry

__all__ = ["DOMAIN_CLASSIFIERS", "BoostedTree", "DomainAdaptationBoosting", "bin_edges", "register_domain_classifier"]

_EPS = 1e-12

#: Classifiers trained on several domains at once, ``fit(X, y, sample_domain=...)``, by name. The boosting
#: experiment (config ``boosting.methods``) runs the ones it names beside its single-domain baselines.
DOMAIN_CLASSIFIERS = Registry("domain classifier", "domain classifiers", package="otfs.domain_classifiers")


#: ``@register_domain_classifier("NAME")`` on a class taking the ``boosting.model`` parameters and implementing
#: ``fit(X, y, sample_domain)`` and ``predict(X, sample_domain)`` adds it to :data:`DOMAIN_CLASSIFIERS`.
register_domain_classifier = DOMAIN_CLASSIFIERS.register

#: Features whose best split is searched over the whole grid of m (multi-task trees).
_SHORTLIST = 32


def bin_edges(x: np.ndarray, max_bins: int) -> np.ndarray:
    """Split points of one feature: midpoints between distinct values, at most ``max_bins - 1``.

    With at most ``max_bins`` distinct values every midpoint is kept (exact
    thresholds); otherwise the midpoints next to evenly spaced quantiles.
    """
    u = np.unique(x)
    if u.size <= 1:
        return np.empty(0)
    mids = (u[:-1] + u[1:]) / 2.0
    if u.size <= max_bins:
        return mids
    # the split point after each quantile's distinct value: ranks of the cut points
    ranks = np.searchsorted(u, np.quantile(x, np.linspace(0, 1, max_bins + 1)[1:-1]), side="left")
    ranks = np.unique(np.clip(ranks, 0, mids.size - 1))
    return mids[ranks]


@dataclass
class BoostedTree:
    """One weak learner: a regression tree with one threshold per task at every split.

    Node ``i`` is a leaf when ``feature[i] == -1``; samples of task ``t`` go
    left when ``x[feature[i]] <= threshold[i, t]``.
    """

    feature: np.ndarray    # (n_nodes,) int, -1 at leaves
    threshold: np.ndarray  # (n_nodes, n_tasks) float
    left: np.ndarray       # (n_nodes,) int
    right: np.ndarray      # (n_nodes,) int
    value: np.ndarray      # (n_nodes,) float: the leaf's weighted mean of r (the shared eta)

    def apply(self, X: np.ndarray, task: np.ndarray) -> np.ndarray:
        """Leaf index of every sample (``task`` holds task indices)."""
        node = np.zeros(X.shape[0], dtype=np.intp)
        rows = np.arange(X.shape[0])
        while True:
            f = self.feature[node]
            inner = f >= 0
            if not inner.any():
                return node
            go_left = X[rows, np.where(inner, f, 0)] <= self.threshold[node, task]
            node = np.where(inner, np.where(go_left, self.left[node], self.right[node]), node)

    def predict(self, X: np.ndarray, task: np.ndarray) -> np.ndarray:
        return self.value[self.apply(X, task)]

    @property
    def depth(self) -> int:
        depth = np.zeros(self.feature.size, dtype=int)
        for i in range(self.feature.size):  # children always come after their parent
            if self.feature[i] >= 0:
                depth[self.left[i]] = depth[self.right[i]] = depth[i] + 1
        return int(depth.max())


class _TaskData:
    """One task's samples binned once: codes, split points and flat histogram indices."""

    def __init__(self, X: np.ndarray, max_bins: int):
        n, d = X.shape
        self.edges = [bin_edges(X[:, j], max_bins) for j in range(d)]
        self.n_bins = max(1, max(e.size for e in self.edges) + 1)
        self.pad_edges = np.full((d, self.n_bins - 1), np.inf)
        codes = np.empty((n, d), dtype=np.intp)
        for j, e in enumerate(self.edges):
            self.pad_edges[j, : e.size] = e
            codes[:, j] = np.searchsorted(e, X[:, j], side="left")  # x <= e[b] <=> code <= b
        self.codes = codes
        # flat index into an (n_bins, d) histogram
        self.flat = codes * d + np.arange(d)

    def threshold(self, feature: int, position: int) -> float:
        """Threshold of 'left = the first ``position`` bins' (-inf: none left, +inf: all left)."""
        if position == 0:
            return -np.inf
        if position - 1 < self.edges[feature].size:
            return float(self.edges[feature][position - 1])
        return np.inf


class _TreeBuilder:
    """Greedy top-down construction of one multi-task tree (Eq. 6 at every node)."""

    def __init__(self, tasks, w, r, max_depth, min_samples_leaf, m_grid, refine_steps):
        self.tasks, self.w, self.r = tasks, w, r
        self.wr = [wt * rt for wt, rt in zip(w, r, strict=True)]
        self.max_depth, self.min_leaf = max_depth, min_samples_leaf
        self.m_grid, self.refine_steps = m_grid, refine_steps
        self.d = tasks[0].pad_edges.shape[0]
        self.nodes: list[list] = []  # [feature, thresholds, left, right, value]

    def _hist(self, t, rows):
        task = self.tasks[t]
        size = self.d * task.n_bins
        flat = task.flat[rows].ravel()
        hw = np.bincount(flat, np.repeat(self.w[t][rows], self.d), size)
        hs = np.bincount(flat, np.repeat(self.wr[t][rows], self.d), size)
        hc = np.bincount(flat, minlength=size)
        shape = (task.n_bins, self.d)
        return hw.reshape(shape), hs.reshape(shape), hc.reshape(shape)

    def build(self, rows):
        hists = [self._hist(t, r) for t, r in enumerate(rows)]
        self._grow(rows, hists, 0)
        return self.nodes

    def _grow(self, rows, hists, depth) -> int:
        node = len(self.nodes)
        W = sum(float(self.w[t][r].sum()) for t, r in enumerate(rows))
        S = sum(float(self.wr[t][r].sum()) for t, r in enumerate(rows))
        value = S / W if W > 0 else 0.0
        self.nodes.append([-1, np.full(len(self.tasks), np.inf), -1, -1, value])
        n = sum(r.size for r in rows)
        if depth >= self.max_depth or n < 2 * self.min_leaf or W <= 0:
            return node
        split = self._best_split(hists, W, S)
        if split is None:
            return node
        feature, positions = split
        thresholds = np.array([task.threshold(feature, p) for task, p in zip(self.tasks, positions, strict=True)])
        go_left = [self.tasks[t].codes[r, feature] < positions[t] for t, r in enumerate(rows)]
        left_rows = [r[g] for r, g in zip(rows, go_left, strict=True)]
        right_rows = [r[~g] for r, g in zip(rows, go_left, strict=True)]
        if depth + 1 < self.max_depth:  # children will search splits: histograms by subtraction
            small_left = sum(map(len, left_rows)) <= sum(map(len, right_rows))
            small = left_rows if small_left else right_rows
            small_h = [self._hist(t, r) for t, r in enumerate(small)]
            big_h = [tuple(p - c for p, c in zip(ph, ch, strict=True)) for ph, ch in zip(hists, small_h, strict=True)]
            lh, rh = (small_h, big_h) if small_left else (big_h, small_h)
        else:
            lh = rh = None
        self.nodes[node][0], self.nodes[node][1] = feature, thresholds
        self.nodes[node][2] = self._grow(left_rows, lh, depth + 1)
        self.nodes[node][3] = self._grow(right_rows, rh, depth + 1)
        return node

    def _best_split(self, hists, W, S):
        """(feature, per-task prefix positions) of the largest decrease of the weighted squared error."""
        pre = []  # per task, prefix sums (P, d): row p sums the first p bins
        for hists_t in hists:
            prefix = []
            for h in hists_t:
                out = np.zeros((h.shape[0] + 1, self.d), dtype=h.dtype)
                for i in range(h.shape[0]):  # row by row: several times faster than np.cumsum(axis=0)
                    np.add(out[i], h[i], out=out[i + 1])
                prefix.append(out)
            pre.append(tuple(prefix))
        n = sum(int(c[-1, 0]) for _, _, c in pre)
        base = S * S / W
        cols = np.arange(self.d)

        gain = self._gain_fn(pre, cols, W, S, n)

        if len(pre) == 1:  # one task: every threshold of every feature, exactly
            pw, ps, pc = pre[0]
            WR, SR = W - pw, S - ps
            ok = (pc >= self.min_leaf) & (n - pc >= self.min_leaf) & (pw > _EPS * W) & (WR > _EPS * W)
            with np.errstate(divide="ignore", invalid="ignore"):
                g = np.where(ok, ps * ps / pw + SR * SR / WR - base, -np.inf)
            best_p = np.argmax(g, axis=0)
            best_g = g[best_p, cols]
            best_pos = [best_p]
        else:
            # every feature: m = 0 (leaf values +-eta, the decoupled search of the paper's stumps),
            # both orientations, then one alternation
            cand = [np.stack([np.argmax(ps, axis=0), np.argmin(ps, axis=0)]) for _, ps, _ in pre]
            best_g, best_pos = self._keep_best(gain, cand, cols)
            best_g, best_pos = self._refine(pre, gain, best_g, best_pos, W, S, 1)
            # the shortlist: the whole grid of m, then alternations
            short = np.argsort(-best_g, kind="stable")[:_SHORTLIST]
            sub = [tuple(a[:, short] for a in arrays) for arrays in pre]
            sub_cols = np.arange(short.size)
            sub_gain = self._gain_fn(sub, sub_cols, W, S, n)
            cand = []
            for pw, ps, _ in sub:
                V = np.multiply.outer(self.m_grid, pw)  # (G, P, shortlist)
                V -= ps
                cand.append(np.concatenate([np.argmin(V, axis=1), np.argmax(V, axis=1)]))
            g2, pos2 = self._keep_best(sub_gain, cand, sub_cols)
            g2, pos2 = self._refine(sub, sub_gain, g2, pos2, W, S, self.refine_steps)
            better = g2 > best_g[short]
            best_g[short[better]] = g2[better]
            for b, p2 in zip(best_pos, pos2, strict=True):
                b[short[better]] = p2[better]
        feature = int(np.argmax(best_g))
        if not np.isfinite(best_g[feature]) or best_g[feature] <= _EPS * max(W, 1.0):
            return None
        return feature, [int(p[feature]) for p in best_pos]


    def _gain_fn(self, pre, cols, W, S, n):
        """Decrease of the weighted squared error for per-task prefix positions ``pos`` (each (..., d))."""
        base = S * S / W

        def gain(pos):
            WL = sum(pw[p, cols] for (pw, _, _), p in zip(pre, pos, strict=True))
            SL = sum(ps[p, cols] for (_, ps, _), p in zip(pre, pos, strict=True))
            CL = sum(pc[p, cols] for (_, _, pc), p in zip(pre, pos, strict=True))
            WR, SR = W - WL, S - SL
            ok = (CL >= self.min_leaf) & (n - CL >= self.min_leaf) & (WL > _EPS * W) & (WR > _EPS * W)
            with np.errstate(divide="ignore", invalid="ignore"):
                g = SL * SL / WL + SR * SR / WR - base
            return np.where(ok, g, -np.inf)

        return gain

    @staticmethod
    def _keep_best(gain, cand, cols):
        g = gain(cand)
        k = np.argmax(g, axis=0)
        return g[k, cols], [c[k, cols] for c in cand]

    @staticmethod
    def _refine(pre, gain, best_g, best_pos, W, S, steps):
        """Alternate: leaf values of the current split, then each task's best threshold for them."""
        cols = np.arange(best_g.size)
        for _ in range(steps):
            WL = sum(pw[p, cols] for (pw, _, _), p in zip(pre, best_pos, strict=True))
            SL = sum(ps[p, cols] for (_, ps, _), p in zip(pre, best_pos, strict=True))
            with np.errstate(divide="ignore", invalid="ignore"):  # leaf values are means of r in [-1, 1]
                eta1 = np.clip(np.nan_to_num(SL / WL), -1.0, 1.0)
                eta2 = np.clip(np.nan_to_num((S - SL) / (W - WL)), -1.0, 1.0)
            m = (eta1 + eta2) / 2.0
            flip = eta1 < eta2
            new = []
            for pw, ps, _ in pre:
                V = m * pw - ps
                new.append(np.where(flip, np.argmax(V, axis=0), np.argmin(V, axis=0)))
            g_new = gain(new)
            better = g_new > best_g
            if not better.any():
                break
            best_g = np.where(better, g_new, best_g)
            best_pos = [np.where(better, a, b) for a, b in zip(new, best_pos, strict=True)]
        return best_g, best_pos

class DomainAdaptationBoosting(ClassifierMixin, BaseEstimator):
    """Boosted trees with one shared decision boundary and per-task split thresholds.

    A binary classifier trained on samples of several tasks (domains), given
    by ``sample_domain``; predictions for a sample use its own task's
    thresholds. With a single task it is ordinary gradient boosting of the
    exponential loss with weighted least-squares trees and a line search.

    Parameters
    ----------
    n_estimators : int, default=500
        Number of boosting iterations ``K`` (the paper's default).
    learning_rate : float, default=0.1
        Shrinkage ``gamma`` applied to the line-search step.
    max_depth : int, default=3
        Depth ``L`` of the regression trees (1: decision stumps).
    min_samples_leaf : int, default=1
        Fewest samples, over all tasks, in a leaf.
    max_bins : int, default=64
        Most candidate thresholds per feature and task, plus one (quantile
        bins; exact below that many distinct values).
    n_directions : int, default=9
        Size of the grid of ``m = (eta_1 + eta_2) / 2`` scanned by the
        multi-task split search (unused with one task).
    refine_steps : int, default=2
        Alternations between leaf values and thresholds after the scan.
    max_step : float, default=100.0
        Upper bound of the line search (a tree that separates its training
        samples would otherwise get an infinite step).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class (``y = +1``).
    domains_ : ndarray
        The task labels seen in ``fit``; ``sample_domain`` values at predict
        time must be among them.
    estimators_ : list of BoostedTree
    estimator_weights_ : ndarray of shape (n_estimators,)
        The shared boundary ``beta`` (shrunken line-search steps).
    train_loss_ : ndarray of shape (n_estimators,)
        Mean exponential loss on the training samples after each iteration.
    n_features_in_ : int

    References
    ----------
    .. [1] C. Becker, C. M. Christoudias, P. Fua. Non-Linear Domain
       Adaptation with Boosting. NIPS 2013.
    """

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, 1, closed="right")],
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_bins": [Interval(Integral, 2, None, closed="left")],
        "n_directions": [Interval(Integral, 1, None, closed="left")],
        "refine_steps": [Interval(Integral, 0, None, closed="left")],
        "max_step": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, n_estimators=500, learning_rate=0.1, max_depth=3, min_samples_leaf=1, max_bins=64,
                 n_directions=9, refine_steps=2, max_step=100.0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_bins = max_bins
        self.n_directions = n_directions
        self.refine_steps = refine_steps
        self.max_step = max_step

    def _task_index(self, sample_domain, n, fitting):
        if sample_domain is None:
            sample_domain = np.zeros(n, dtype=int)
        sample_domain = as_label_vector(sample_domain, n, "sample_domain")
        if fitting:
            self.domains_, task = np.unique(sample_domain, return_inverse=True)
            return task
        known = np.isin(sample_domain, self.domains_)
        if not known.all():
            unknown = sorted(set(np.asarray(sample_domain)[~known].tolist()))
            raise ValueError(f"sample_domain holds tasks not seen in fit: {unknown}; fitted on {self.domains_.tolist()}")
        return np.searchsorted(self.domains_, sample_domain)

    def fit(self, X, y, sample_domain=None):
        """Fit on samples ``X`` with binary labels ``y`` from the tasks ``sample_domain`` (default: one task)."""
        from scipy.optimize import minimize_scalar

        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        if type_of_target(y) != "binary":
            raise ValueError(f"DomainAdaptationBoosting is a binary classifier; y has {np.unique(y).size} classes")
        self.classes_, yi = np.unique(y, return_inverse=True)
        ypm = np.where(yi == 1, 1.0, -1.0)
        task = self._task_index(sample_domain, X.shape[0], fitting=True)
        members = [np.flatnonzero(task == t) for t in range(self.domains_.size)]
        Xs = [X[m] for m in members]  # each task's samples, copied once
        tasks = [_TaskData(x, self.max_bins) for x in Xs]
        ys = [ypm[m] for m in members]
        m_grid = np.linspace(-1.0, 1.0, self.n_directions) if self.n_directions > 1 else np.zeros(1)
        f = [np.zeros(m.size) for m in members]
        trees, betas, losses = [], [], []
        for _ in range(self.n_estimators):
            margins = [-yt * ft for yt, ft in zip(ys, f, strict=True)]
            top = max(float(mg.max()) for mg in margins)
            w = [np.exp(mg - top) for mg in margins]  # scaled: the fit and the line search are invariant
            builder = _TreeBuilder(tasks, w, ys, self.max_depth, self.min_samples_leaf, m_grid, self.refine_steps)
            nodes = builder.build([np.arange(m.size) for m in members])
            tree = BoostedTree(
                feature=np.array([nd[0] for nd in nodes], dtype=np.intp),
                threshold=np.vstack([nd[1] for nd in nodes]),
                left=np.array([nd[2] for nd in nodes], dtype=np.intp),
                right=np.array([nd[3] for nd in nodes], dtype=np.intp),
                value=np.array([nd[4] for nd in nodes], dtype=np.float64),
            )
            h = [tree.predict(x, np.full(len(x), t)) for t, x in enumerate(Xs)]
            yh = np.concatenate([yt * ht for yt, ht in zip(ys, h, strict=True)])
            wall = np.concatenate(w)
            res = minimize_scalar(lambda a: float(np.dot(wall, np.exp(-a * yh))), bounds=(0.0, self.max_step),
                                  method="bounded", options={"xatol": 1e-10})
            beta = self.learning_rate * float(res.x)
            f = [ft + beta * ht for ft, ht in zip(f, h, strict=True)]
            trees.append(tree)
            betas.append(beta)
            losses.append(float(np.mean(np.exp(-np.concatenate([yt * ft for yt, ft in zip(ys, f, strict=True)])))))
        self.estimators_ = trees
        self.estimator_weights_ = np.asarray(betas)
        self.train_loss_ = np.asarray(losses)
        return self

    def decision_function(self, X, sample_domain=None):
        """``f_t(x)``: positive values predict ``classes_[1]``."""
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        task = self._task_index(sample_domain, X.shape[0], fitting=False)
        out = np.zeros(X.shape[0])
        for beta, tree in zip(self.estimator_weights_, self.estimators_, strict=True):
            out += beta * tree.predict(X, task)
        return out

    def predict(self, X, sample_domain=None):
        return self.classes_[(self.decision_function(X, sample_domain) > 0).astype(int)]

    def thresholds(self, feature: int) -> np.ndarray:
        """Every split threshold on ``feature``: one row per split, one column per task (``domains_``)."""
        check_is_fitted(self, "estimators_")
        rows = [t.threshold[t.feature == feature] for t in self.estimators_]
        return np.vstack(rows) if rows else np.empty((0, self.domains_.size))
