"""``relevance-over-shift``: the source ANOVA F with each feature's domain shift counted as noise.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

import warnings

import numpy as np

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker
from otfs.rankers._base import FEATURE_RANKERS

__all__ = ["RelevanceOverShiftRanker", "class_variances", "wasserstein2_squared_1d"]


@FEATURE_RANKERS.register("relevance-over-shift")
class RelevanceOverShiftRanker(TwoDomainRanker):
    """Rank features by source class separation over within-class noise plus the squared 2-Wasserstein shift.

    ``score_j = MS_between,j / (MS_within,j + W2²_j)``

    with ``MS_between`` and ``MS_within`` the source's ANOVA mean squares
    (their ratio is scikit-learn's ``f_classif`` F) and ``W2²_j`` the squared
    2-Wasserstein distance between the feature's source and target
    marginals (the squared difference of their quantile functions,
    integrated). Without shift it is the F statistic (``source-anova``'s
    order).

    Relevance and invariance without target labels, with the trade-off set
    by a model instead of a weight: a classifier learnt on the source reads
    a target sample moved by the domain shift, and to first order the shift
    adds its mean square to the within-class spread the classes must stand
    out of; ``W2²`` is that mean square for the best pairing of source and
    target values (the 1-D optimal transport plan, which pairs quantiles).
    A feature whose classes stand apart by more than both the noise and the
    shift ranks first. This is my construction, after Persello and
    Bruzzone's relevant-and-invariant criterion (there the invariance reads
    target labels and its weight is tuned on labelled target samples); it
    has no parameter to tune.

    Which planted shifts it recovers (``shift_recovery``, 10 seeds): the
    marginal ones, in as far as they are large against the feature's class
    separation (mean 0.68, scale 0.90, shape 0.88): a strongly relevant
    feature with a small shift stays ahead.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None

    Attributes
    ----------
    between_, within_ : ndarray of shape (n_features_in_,)
        The source's between- and within-class mean squares.
    w2_squared_ : ndarray of shape (n_features_in_,)
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`.

    References
    ----------
    .. [1] C. Persello, L. Bruzzone. Kernel-based domain-invariant feature
       selection in hyperspectral images for transfer learning. IEEE TGRS
       54(5), 2016 (relevance and invariance, the idea).
    .. [2] R. A. Fisher. The use of multiple measurements in taxonomic
       problems. Annals of Eugenics 7, 1936.
    """

    _needs_class_labels = True

    _parameter_constraints: dict = {"n_features_to_select": N_FEATURES_TO_SELECT}

    def __init__(self, n_features_to_select=None):
        self.n_features_to_select = n_features_to_select

    def _score(self, Xs, ys, Xt):
        if ys is None:
            raise ValueError("relevance-over-shift ranks by the source labels: fit(X, y, X_target=...) needs y")
        self.between_, self.within_ = class_variances(Xs, ys, "relevance-over-shift")
        self.w2_squared_ = wasserstein2_squared_1d(Xs, Xt)
        denominator = self.within_ + self.w2_squared_
        flat = denominator <= 0  # constant in both domains and within every class: nothing to tell apart
        if flat.any():
            from otfs._checks import DegenerateResultWarning

            warnings.warn(f"relevance-over-shift: {int(flat.sum())} of {flat.size} features have no within-class "
                          "spread and no shift; they score 0", DegenerateResultWarning, stacklevel=3)
        return np.where(flat, 0.0, self.between_ / np.where(flat, 1.0, denominator))


def class_variances(X, y, name="ranker"):
    """The ANOVA mean squares of each column: ``(between, within)``, ``between / within`` being ``f_classif``'s F."""
    y = np.asarray(y)
    classes, index = np.unique(y, return_inverse=True)
    k, n = classes.size, X.shape[0]
    if k < 2 or n <= k:
        raise ValueError(f"{name} needs at least 2 classes and more samples than classes in y, got {k} classes "
                         f"and {n} samples")
    counts = np.bincount(index)
    means = np.zeros((k, X.shape[1]))
    np.add.at(means, index, X)
    means /= counts[:, None]
    grand = X.mean(axis=0)
    between = (counts[:, None] * (means - grand) ** 2).sum(axis=0) / (k - 1)
    within = ((X - means[index]) ** 2).sum(axis=0) / (n - k)
    return between, within


def wasserstein2_squared_1d(Xs, Xt):
    """Each column's squared 2-Wasserstein distance between the two samples' empirical distributions (uniform
    weights): ``∫_0^1 (F_s^-1(u) - F_t^-1(u))² du``, over the merged breakpoints of the two quantile functions."""
    n_s, n_t = Xs.shape[0], Xt.shape[0]
    qs, qt = np.sort(Xs, axis=0), np.sort(Xt, axis=0)
    u = np.union1d(np.arange(1, n_s + 1) / n_s, np.arange(1, n_t + 1) / n_t)  # right ends of the pieces
    widths = np.diff(np.r_[0.0, u])
    mid = u - widths / 2
    i_s = np.minimum((mid * n_s).astype(np.intp), n_s - 1)
    i_t = np.minimum((mid * n_t).astype(np.intp), n_t - 1)
    return widths @ (qs[i_s] - qt[i_t]) ** 2
