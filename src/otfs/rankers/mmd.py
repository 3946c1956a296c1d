"""``mmd``: the per-feature unbiased MMD² between source and target, Gaussian kernel, median-heuristic bandwidth.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

from numbers import Integral

from sklearn.utils._param_validation import Interval

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker
from otfs.rankers._base import FEATURE_RANKERS
from otfs.rankers._per_feature import mmd2_unbiased, subsample_domains


@FEATURE_RANKERS.register("mmd")
class MMDRanker(TwoDomainRanker):
    """Rank features by the unbiased MMD² between their source and target marginals.

    For feature ``j``, with the Gaussian kernel ``k(a, b) = exp(-(a - b)² / (2 σ_j²))``
    and ``σ_j`` the median of the pooled sample's pairwise distances (the
    median heuristic),

    ``MMD²_j = mean_{i≠i'} k(s_i, s_i') + mean_{l≠l'} k(t_l, t_l') - 2 mean_{i,l} k(s_i, t_l)``

    (Gretton et al.'s unbiased estimate; it can be slightly negative when
    the marginals agree). The least shifted features rank first:
    ``scores_ = -mmd2_``. The cost is ``O(d (n_s + n_t)²)``: each domain is
    subsampled to at most ``max_samples`` samples (seeded), all of them
    when ``max_samples`` is None.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    max_samples : int or None, default=200
    random_state : int, RandomState instance or None, default=None
        Seeds the subsampling.

    Attributes
    ----------
    mmd2_ : ndarray of shape (n_features_in_,)
    bandwidths_ : ndarray of shape (n_features_in_,)
        The ``σ_j`` used.
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`.

    References
    ----------
    .. [1] A. Gretton, K. Borgwardt, M. Rasch, B. Schölkopf, A. Smola. A
       kernel two-sample test. JMLR 13, 2012 (Eq. 3, the unbiased MMD²).
    """

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "max_samples": [None, Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select=None, max_samples=200, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.max_samples = max_samples
        self.random_state = random_state

    def _score(self, Xs, ys, Xt):
        Xs, Xt = subsample_domains(Xs, Xt, self.max_samples, self.random_state)
        self.mmd2_, self.bandwidths_ = mmd2_unbiased(Xs, Xt)
        return -self.mmd2_
