"""``source-anova``: scikit-learn's ANOVA F-statistic on the source labels, a relevance baseline blind to shift.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

import warnings

import numpy as np

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker
from otfs.rankers._base import FEATURE_RANKERS


@FEATURE_RANKERS.register("source-anova")
class SourceANOVARanker(TwoDomainRanker):
    """Rank features by their ANOVA F-statistic on the labelled source (``sklearn.feature_selection.f_classif``).

    The classic relevance filter: it ignores the target, so it shows what
    ranking by relevance alone gives, beside the rankers that measure shift.
    Higher F ranks first. A feature constant within the source has no F
    (scikit-learn gives NaN); it scores 0, with a warning saying how many.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None

    Attributes
    ----------
    f_statistics_, pvalues_ : ndarray of shape (n_features_in_,)
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`.

    References
    ----------
    .. [1] I. Guyon, A. Elisseeff. An introduction to variable and feature
       selection. JMLR 3, 2003.
    """

    _needs_class_labels = True

    _parameter_constraints: dict = {"n_features_to_select": N_FEATURES_TO_SELECT}

    def __init__(self, n_features_to_select=None):
        self.n_features_to_select = n_features_to_select

    def _score(self, Xs, ys, Xt):
        from sklearn.feature_selection import f_classif

        if ys is None:
            raise ValueError("source-anova ranks by the source labels: fit(X, y, X_target=...) needs y")
        if np.unique(ys).size < 2:
            raise ValueError(f"source-anova needs at least 2 classes in y, got {np.unique(ys).tolist()}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)  # scikit-learn's "features are constant"
            F, p = f_classif(Xs, ys)
        bad = ~np.isfinite(F)
        if bad.any():
            from otfs._checks import DegenerateResultWarning

            warnings.warn(f"source-anova: {int(bad.sum())} of {F.size} features are constant within every class "
                          "of the source; they score 0", DegenerateResultWarning, stacklevel=3)
        self.f_statistics_, self.pvalues_ = np.where(bad, 0.0, F), np.where(bad, 1.0, p)
        return self.f_statistics_
