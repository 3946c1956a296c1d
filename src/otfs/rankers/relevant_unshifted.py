"""``relevant-unshifted``: source relevance among the features a label-free shift test keeps, then the rest.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from otfs.base import N_FEATURES_TO_SELECT, TwoDomainRanker
from otfs.rankers._base import FEATURE_RANKERS


@FEATURE_RANKERS.register("relevant-unshifted")
class RelevantUnshiftedRanker(TwoDomainRanker):
    """Rank the features a two-sample test finds unshifted by source relevance, then the shifted ones.

    Relevance and invariance without target labels: each feature's shift is
    tested by the two-sample Kolmogorov–Smirnov test between the source and
    the target (the zoo's ``ks``), corrected for the ``d`` tests (Bonferroni
    at ``alpha``, Rabanser et al.'s aggregation, or Benjamini–Hochberg);
    the features it does not reject come first, ordered by their ANOVA F on
    the source labels (the zoo's ``source-anova``), most relevant first; the
    rejected ones follow, least shifted first (largest p-value). The
    trade-off between the two criteria is thus set by the test, a
    label-free rule, instead of a weight tuned on target labels.

    It takes Persello and Bruzzone's idea, a subset both relevant (HSIC
    with the labels) and invariant (the distance between the domains'
    class-conditional embeddings), to the unsupervised setting: their
    invariance reads target labels and their trade-off is picked on
    labelled target samples; here invariance is the marginal shift test and
    the trade-off its significance level. Where the paper leaves a choice:
    a lexicographic order (invariant first) rather than a weighted sum of
    the two scores, whose weight would need a rule of its own.

    Which planted shifts it recovers (``shift_recovery``, 10 seeds): those
    the corrected KS test rejects, mean and scale shifts (1.00). A shape
    shift the test does not reject stays among the kept features, ordered
    by relevance (0.32, where ``ks`` alone has 0.98).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    alpha : float, default=0.05
        The test's level, in (0, 1).
    correction : {"bonferroni", "bh"}, default="bonferroni"
        Bonferroni (family-wise error) or Benjamini–Hochberg (false
        discovery rate, ``scipy.stats.false_discovery_control``).

    Attributes
    ----------
    f_statistics_ : ndarray of shape (n_features_in_,)
        The source ANOVA F (0 for a feature constant within every class).
    pvalues_ : ndarray of shape (n_features_in_,)
        The KS test's p-values, uncorrected.
    unshifted_ : ndarray of bool, shape (n_features_in_,)
        The features the corrected test does not reject.
    scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        See :class:`otfs.base.BaseFeatureRanker`; ``scores_`` is
        ``d - position`` in that order.

    References
    ----------
    .. [1] C. Persello, L. Bruzzone. Relevant and invariant feature selection
       of hyperspectral images for domain generalization. IGARSS 2014.
    .. [2] S. Rabanser, S. Günnemann, Z. C. Lipton. Failing Loudly: An
       Empirical Study of Methods for Detecting Dataset Shift. NeurIPS 2019.
    """

    _needs_class_labels = True

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "correction": [StrOptions({"bonferroni", "bh"})],
    }

    def __init__(self, n_features_to_select=None, alpha=0.05, correction="bonferroni"):
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha
        self.correction = correction

    def _score(self, Xs, ys, Xt):
        from otfs.rankers._per_feature import ks_pvalue, ks_statistic
        from otfs.rankers.source_anova import SourceANOVARanker

        anova = SourceANOVARanker()
        self.f_statistics_ = anova._score(Xs, ys, Xt)
        statistics = ks_statistic(Xs, Xt)
        self.pvalues_ = ks_pvalue(statistics, Xs.shape[0], Xt.shape[0])
        d = self.pvalues_.size
        if self.correction == "bonferroni":
            self.unshifted_ = self.pvalues_ > self.alpha / d
        else:
            from scipy.stats import false_discovery_control

            self.unshifted_ = false_discovery_control(self.pvalues_, method="bh") > self.alpha
        idx = np.arange(d)
        kept, shifted = idx[self.unshifted_], idx[~self.unshifted_]
        # unshifted by decreasing F, then shifted by decreasing p-value (equal p-values: smaller statistic first);
        # lexsort's last key is the primary one; remaining ties keep the feature order
        order = np.concatenate([kept[np.lexsort((kept, -self.f_statistics_[kept]))],
                                shifted[np.lexsort((shifted, statistics[shifted], -self.pvalues_[shifted]))]])
        scores = np.empty(d)
        scores[order] = d - np.arange(d)
        return scores
