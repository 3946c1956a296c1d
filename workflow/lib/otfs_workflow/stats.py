"""Paired tests shared by the reports (the verdict, the leaderboard, the recommendation's evaluation).

Wilcoxon's signed-rank test is SciPy's (``scipy.stats.wilcoxon``), Holm's correction statsmodels'
(``multipletests``); this module only fixes how the reports call them.

References
----------
Demšar, J. (2006). Statistical Comparisons of Classifiers over Multiple Data Sets. JMLR 7, 1-30.
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
    """Holm's step-down correction of the p-values ``p`` (statsmodels' ``multipletests``)."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p, dtype=float)
    return multipletests(p, method="holm")[1] if p.size else p
