"""``random``: a random order of the features, the floor every ranker must beat.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

from sklearn.utils import check_random_state

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker
from otfs.rankers._base import FEATURE_RANKERS


@FEATURE_RANKERS.register("random")
class RandomRanker(TwoDomainRanker):
    """Order the features at random (seeded): what any ranker is compared with.

    ``scores_`` is a random permutation of ``0 .. d-1`` scaled to [0, 1], so
    the order is a uniformly random permutation.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`.

    References
    ----------
    .. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
       Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018
       (its "Random" order).
    """

    _parameter_constraints: dict = {"n_features_to_select": N_FEATURES_TO_SELECT, "random_state": ["random_state"]}

    def __init__(self, n_features_to_select=None, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state

    def _score(self, Xs, ys, Xt):
        d = Xs.shape[1]
        return check_random_state(self.random_state).permutation(d) / max(d - 1, 1)
