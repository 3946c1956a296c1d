"""``ks``: the two-sample Kolmogorov–Smirnov statistic of each feature, with its p-value.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker
from otfs.rankers._base import FEATURE_RANKERS
from otfs.rankers._per_feature import ks_pvalue, ks_statistic


@FEATURE_RANKERS.register("ks")
class KSRanker(TwoDomainRanker):
    """Rank features by the two-sample Kolmogorov–Smirnov statistic between source and target.

    ``D_j = max_x |F_s,j(x) - F_t,j(x)|``, vectorised over the features; the
    least shifted features (smallest ``D``) rank first: ``scores_ = -statistics_``.
    The p-values are the asymptotic two-sided ones
    (``scipy.stats.ks_2samp(method="asymp")``), for tests of many features
    at once (for example with a false-discovery-rate correction).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features_in_,)
    pvalues_ : ndarray of shape (n_features_in_,)
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`.

    References
    ----------
    .. [1] N. Smirnov. Table for estimating the goodness of fit of empirical
       distributions. Annals of Mathematical Statistics 19(2), 1948.
    """

    _parameter_constraints: dict = {"n_features_to_select": N_FEATURES_TO_SELECT}

    def __init__(self, n_features_to_select=None):
        self.n_features_to_select = n_features_to_select

    def _score(self, Xs, ys, Xt):
        self.statistics_ = ks_statistic(Xs, Xt)
        self.pvalues_ = ks_pvalue(self.statistics_, Xs.shape[0], Xt.shape[0])
        return -self.statistics_
