"""Paired tests shared by the reports (the verdict, the leaderboard, the recommendation's evaluation).

Wilcoxon's signed-rank test is SciPy's (``scipy.stats.wilcoxon``). Holm's correction is computed here by
its formula, the same operations as statsmodels' ``multipletests(p, method="holm")`` (a test checks the values
equal), since statsmodels' Holm branch runs a full garbage collection at every call (statsmodels 0.15.0;
statsmodels/statsmodels#8671), tens of milliseconds each in a report's process, hundreds of calls a run.

References
----------
Demšar, J. (2006). Statistical Comparisons of Classifiers over Multiple Data Sets. JMLR 7, 1-30.
Holm, S. (1979). A Simple Sequentially Rejective Multiple Test Procedure. Scand. J. Statist. 6(2), 65-70.
"""

from __future__ import annotations

import numpy as np

__all__ = ["holm", "min_wilcoxon_p", "wilcoxon_p"]


def wilcoxon_p(diff) -> float:
    """Two-sided p-value of Wilcoxon's signed-rank test on the paired differences ``diff`` (zeros dropped,
    ``zero_method="wilcox"``); 1 where every difference is 0."""
    from scipy.stats import wilcoxon

    diff = np.asarray(diff, dtype=float)
    if np.all(diff == 0):
        return 1.0
    return float(wilcoxon(diff, zero_method="wilcox").pvalue)


def min_wilcoxon_p(n: int) -> float:
    """The smallest two-sided p-value of Wilcoxon's exact signed-rank test on ``n`` non-zero differences."""
    return min(1.0, 2.0 / 2.0 ** n) if n > 0 else 1.0


def holm(p) -> np.ndarray:
    """Holm's step-down correction of the p-values ``p``: sorted ascending, the i-th (from 0) of n times
    ``n - i``, the running maximum, at most 1, in the input's order (Holm 1979)."""
    p = np.asarray(p, dtype=float)
    if not p.size:
        return p
    order = np.argsort(p)
    adjusted = np.maximum.accumulate(p[order] * np.arange(p.size, 0, -1))
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out
