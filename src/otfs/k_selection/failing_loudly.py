"""``failing-loudly``: as many features as univariate KS tests leave unshifted after a Bonferroni correction.

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from otfs.k_selection._base import register_rule
from otfs.k_selection.shift_test import ShiftTest, snap_down


@register_rule("failing-loudly")
class FailingLoudly(ShiftTest):
    """k* = the number of features whose KS test is not significant at ``alpha / d`` (Bonferroni).

    Rabanser, Günnemann and Lipton detect a dataset shift from a
    representation's ``d`` dimensions by one univariate two-sample
    Kolmogorov–Smirnov test each, aggregated by the Bonferroni correction:
    the shift is declared when a p-value falls below ``alpha / d``. As a
    ranking, their tests order the features by KS statistic, which is the
    zoo's ``ks`` ranker (at fixed sample sizes the p-value decreases with
    the statistic, so both orders agree). As a stopping rule, here: the
    features whose p-value is above ``alpha / d`` count as unshifted, and
    their number ``m`` is snapped down to the grid as :class:`ShiftTest`
    does (the largest count not above ``m``; the smallest when ``m`` is
    below all). Bonferroni controls the family-wise error, so it keeps at
    least as many features as Benjamini–Hochberg at the same level
    (``shift-test``).

    Parameters
    ----------
    alpha : float, default=0.05
        The family-wise significance level, in (0, 1).

    References
    ----------
    .. [1] S. Rabanser, S. Günnemann, Z. C. Lipton. Failing Loudly: An
       Empirical Study of Methods for Detecting Dataset Shift. NeurIPS 2019.
       Code: https://github.com/steverab/failing-loudly
    """

    _parameter_constraints: dict = {"alpha": [Interval(Real, 0, 1, closed="neither")]}

    def __init__(self, alpha=0.05):
        self.alpha = alpha

    test = "ks"  # ShiftTest.pvalues' test, fixed

    def choose_count(self, Xs, Xt, counts):
        self._validate_params()
        p = self.pvalues(Xs, Xt)
        m = int(np.sum(p > self.alpha / p.size))
        return snap_down(m, counts), {"unshifted": m}
