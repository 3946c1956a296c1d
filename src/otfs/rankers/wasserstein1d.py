"""``wasserstein1d``: the 1-D Wasserstein distance between each feature's source and target marginals.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker
from otfs.rankers._base import FEATURE_RANKERS
from otfs.rankers._per_feature import wasserstein1d


@FEATURE_RANKERS.register("wasserstein1d")
class Wasserstein1DRanker(TwoDomainRanker):
    """Rank features by the 1-Wasserstein distance between their source and target marginals.

    ``W1_j = ∫ |F_s,j(x) - F_t,j(x)| dx`` from the two empirical distribution
    functions of feature ``j``, computed for every feature at once from one
    sort of the pooled columns. The least shifted features (smallest
    distance) rank first: ``scores_ = -distances_``.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        Features kept by ``transform`` (the rule of :mod:`otfs.base`).

    Attributes
    ----------
    distances_ : ndarray of shape (n_features_in_,)
        ``W1`` of each feature.
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`.

    References
    ----------
    .. [1] C. Villani. Optimal Transport: Old and New. Springer, 2009
       (the 1-D distance as the L1 distance between distribution functions).
    .. [2] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
       Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018
       (the multivariate ranking this per-feature baseline is compared with).
    """

    _parameter_constraints: dict = {"n_features_to_select": N_FEATURES_TO_SELECT}

    def __init__(self, n_features_to_select=None):
        self.n_features_to_select = n_features_to_select

    def _score(self, Xs, ys, Xt):
        self.distances_ = wasserstein1d(Xs, Xt)
        return -self.distances_
