"""``shift-test``: as many features as a two-sample test finds unshifted, after Benjamini–Hochberg.

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from otfs.k_selection._base import DataRule, register_rule


@register_rule("shift-test")
class ShiftTest(DataRule):
    """k* = the number of features whose two-sample test is not significant after a false-discovery guard.

    Each feature's source and target values are compared by the two-sample
    Kolmogorov–Smirnov test (asymptotic p-values, as
    ``scipy.stats.ks_2samp(method="asymp")``); the p-values are adjusted by
    Benjamini–Hochberg (``scipy.stats.false_discovery_control``) and the
    features with an adjusted p-value above ``q`` count as unshifted. Their
    number ``m`` is snapped down to the grid: k* is the largest number of
    features of the grid not above ``m`` (the smallest one when ``m`` is below
    all of them). The features kept are the ranker's first k*.

    Parameters
    ----------
    q : float, default=0.05
        The false-discovery rate, in (0, 1).
    test : {"ks"}, default="ks"
        The per-feature test.

    References
    ----------
    .. [1] Y. Benjamini, Y. Hochberg. Controlling the false discovery rate: a
       practical and powerful approach to multiple testing. JRSS B 57(1), 1995.
    """

    _parameter_constraints: dict = {
        "q": [Interval(Real, 0, 1, closed="neither")],
        "test": [StrOptions({"ks"})],
    }

    def __init__(self, q=0.05, test="ks"):
        self.q = q
        self.test = test

    def pvalues(self, Xs, Xt) -> np.ndarray:
        """The per-feature p-values of the test."""
        from otfs.rankers._per_feature import ks_pvalue, ks_statistic

        Xs, Xt = np.asarray(Xs, dtype=float), np.asarray(Xt, dtype=float)
        return ks_pvalue(ks_statistic(Xs, Xt), Xs.shape[0], Xt.shape[0])

    def choose_count(self, Xs, Xt, counts):
        from scipy.stats import false_discovery_control

        self._validate_params()
        adjusted = false_discovery_control(self.pvalues(Xs, Xt), method="bh")
        m = int(np.sum(adjusted > self.q))
        return snap_down(m, counts), {"unshifted": m}


def snap_down(m: int, counts) -> int:
    """The largest number of features of the grid not above ``m`` (the smallest one when ``m`` is below all)."""
    counts = np.sort(np.asarray(counts))
    below = counts[counts <= m]
    return int(below.max() if below.size else counts.min())
