"""``domain-auc``: how well each feature alone tells target from source samples, ``|AUC - 0.5|``.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker
from otfs.rankers._base import FEATURE_RANKERS
from otfs.rankers._per_feature import domain_auc


@FEATURE_RANKERS.register("domain-auc")
class DomainAUCRanker(TwoDomainRanker):
    """Rank features by how little they alone separate the domains: ``|AUC - 0.5|``.

    The AUC of feature ``j`` as a score for "is a target sample" is the
    Mann–Whitney statistic ``U / (n_s n_t)`` from the pooled ranks (ties at
    half), as ``sklearn.metrics.roc_auc_score`` gives it. A feature whose
    values do not tell the domains apart has AUC 0.5 and ranks first:
    ``scores_ = -|auc_ - 0.5|``.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None

    Attributes
    ----------
    auc_ : ndarray of shape (n_features_in_,)
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`.

    References
    ----------
    .. [1] H. B. Mann, D. R. Whitney. On a test of whether one of two random
       variables is stochastically larger than the other. Annals of
       Mathematical Statistics 18(1), 1947.
    .. [2] S. Ben-David, J. Blitzer, K. Crammer, F. Pereira. Analysis of
       representations for domain adaptation. NIPS 2006 (a domain classifier's
       error as a measure of shift).
    """

    _parameter_constraints: dict = {"n_features_to_select": N_FEATURES_TO_SELECT}

    def __init__(self, n_features_to_select=None):
        self.n_features_to_select = n_features_to_select

    def _score(self, Xs, ys, Xt):
        self.auc_ = domain_auc(Xs, Xt)
        return -np.abs(self.auc_ - 0.5)
