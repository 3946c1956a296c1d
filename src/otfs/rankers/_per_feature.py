"""Per-feature two-sample statistics, vectorised over the features.

Every function takes a source sample ``Xs`` (n_s, d) and a target sample
``Xt`` (n_t, d) and returns one value per feature. They share one sort of the
pooled columns: the empirical distribution functions of both samples at every
pooled value follow from cumulative counts along each sorted column.
"""

from __future__ import annotations

import numpy as np

__all__ = ["subsample_domains", "ecdf_gaps", "ks_statistic", "ks_pvalue", "wasserstein1d", "domain_auc", "mmd2_unbiased"]


def subsample_domains(Xs, Xt, max_samples, random_state=None):
    """Each domain reduced to at most ``max_samples`` rows drawn without replacement (kept in their order);
    both whole when ``max_samples`` is None. One generator draws the source's rows, then the target's."""
    from sklearn.utils import check_random_state

    if max_samples is None:
        return Xs, Xt
    rng = check_random_state(random_state)
    return tuple(X[np.sort(rng.choice(len(X), max_samples, replace=False))] if len(X) > max_samples else X
                 for X in (Xs, Xt))


def ecdf_gaps(Xs, Xt):
    """``(F_s - F_t, widths)`` along each sorted pooled column.

    ``F_s[k, j]`` and ``F_t[k, j]`` are the two empirical CDFs of feature
    ``j`` just after its ``k``-th smallest pooled value, ``widths[k, j]`` the
    distance to the next pooled value (shape ``(n_s + n_t - 1, d)``).
    """
    n_s, n_t = Xs.shape[0], Xt.shape[0]
    pooled = np.concatenate([Xs, Xt])
    order = np.argsort(pooled, axis=0, kind="stable")
    values = np.take_along_axis(pooled, order, axis=0)
    from_source = order < n_s
    gap = np.cumsum(from_source, axis=0) / n_s - np.cumsum(~from_source, axis=0) / n_t
    return gap[:-1], np.diff(values, axis=0)


def _ecdf_gaps_by_feature(Xs, Xt):
    """:func:`ecdf_gaps` transposed, ``(d, n_s + n_t - 1)``: each feature's pooled values lie contiguous in
    memory, so the sort and the cumulative counts run along rows (the same numbers, 3 times faster at
    Amazon's 2,000 x 5,000). A maximum over them is the same whatever the layout; :func:`wasserstein1d`
    keeps :func:`ecdf_gaps`, whose sum over the other layout rounds in another order."""
    n_s, n_t = Xs.shape[0], Xt.shape[0]
    pooled = np.ascontiguousarray(np.concatenate([Xs, Xt]).T)
    order = np.argsort(pooled, axis=1, kind="stable")
    values = np.take_along_axis(pooled, order, axis=1)
    from_source = order < n_s
    gap = np.cumsum(from_source, axis=1) / n_s - np.cumsum(~from_source, axis=1) / n_t
    return gap[:, :-1], np.diff(values, axis=1)


def wasserstein1d(Xs, Xt):
    """The 1-Wasserstein distance between the two marginals of each feature: ``∫ |F_s - F_t|``."""
    gap, widths = ecdf_gaps(Xs, Xt)
    return np.sum(np.abs(gap) * widths, axis=0)


def ks_statistic(Xs, Xt):
    """The two-sample Kolmogorov–Smirnov statistic of each feature: ``max |F_s - F_t|``.

    The CDFs are compared only where the pooled value changes (``widths > 0``),
    so that tied values count once, as in :func:`scipy.stats.ks_2samp`.
    """
    gap, widths = _ecdf_gaps_by_feature(Xs, Xt)
    gap = np.where(widths > 0, np.abs(gap), 0.0)
    return gap.max(axis=1) if gap.shape[1] else np.zeros(Xs.shape[1])


def ks_pvalue(D, n_s, n_t):
    """The asymptotic two-sided p-value of KS statistics ``D`` (``scipy.stats.ks_2samp(method="asymp")``).

    The statistic takes few distinct values (multiples of ``1 / lcm(n_s, n_t)``; every constant or
    equally shifted feature repeats one), and SciPy's ``kstwo.sf`` costs about 0.2 ms a value, so it is
    evaluated once per distinct value: the same numbers, element for element (4.6 s down to 0.07 s for
    an Amazon 5,000-word pair's 5,000 features)."""
    from scipy.stats import kstwo

    D = np.asarray(D, dtype=float)
    en = n_s * n_t / (n_s + n_t)
    distinct, where = np.unique(D, return_inverse=True)
    return np.clip(kstwo.sf(distinct, np.round(en)), 0.0, 1.0)[where].reshape(D.shape)


def domain_auc(Xs, Xt):
    """The AUC of each feature alone at telling target (positive) from source samples (Mann–Whitney U)."""
    from scipy.stats import rankdata

    n_s, n_t = Xs.shape[0], Xt.shape[0]
    ranks = rankdata(np.concatenate([Xs, Xt]), axis=0)  # average ranks for ties
    u = ranks[n_s:].sum(axis=0) - n_t * (n_t + 1) / 2
    return u / (n_s * n_t)


def mmd2_unbiased(Xs, Xt, bandwidth="median", max_floats=2**20):
    """The unbiased MMD² of each feature with a Gaussian kernel ``exp(-(a - b)² / (2 σ²))``.

    ``bandwidth="median"``: σ of each feature is the median of the pooled
    sample's pairwise distances (the median heuristic; 1 where it is 0); a
    number fixes σ for all. Each distinct pair of the pooled sample is
    computed once, and the three means of the estimate are one weighted sum
    over them. Features are processed in chunks of at most ``max_floats``
    pair entries (8 MB per array: a fit at EfficientNet-Lite0's size peaked at 90 MB, 1.6 s).

    Returns ``(mmd2, sigma)``.
    """
    n_s, n_t = Xs.shape[0], Xt.shape[0]
    d = Xs.shape[1]
    mmd2, sigma = np.empty(d), np.empty(d)
    pooled = np.concatenate([Xs, Xt])
    a, b = np.triu_indices(n_s + n_t, 1)  # pairs a < b; the source rows come first
    # MMD² = sum over the pairs of weight * k: 2 / (n_s (n_s - 1)) per source pair, 2 / (n_t (n_t - 1))
    # per target pair, -2 / (n_s n_t) per cross pair (each cross pair appears once, as a < n_s <= b)
    weight = np.where(b < n_s, 2.0 / (n_s * (n_s - 1)),
                      np.where(a >= n_s, 2.0 / (n_t * (n_t - 1)), -2.0 / (n_s * n_t)))
    chunk = max(1, max_floats // a.size)
    for start in range(0, d, chunk):
        cols = slice(start, min(start + chunk, d))
        P = pooled[:, cols].T                                   # (c, n)
        D2 = (P[:, a] - P[:, b]) ** 2                           # (c, pairs)
        if bandwidth == "median":
            s = np.sqrt(np.median(D2, axis=1))
            s = np.where(s > 0, s, 1.0)
        else:
            s = np.full(D2.shape[0], float(bandwidth))
        D2 /= -2 * s[:, None] ** 2
        np.exp(D2, out=D2)
        mmd2[cols] = D2 @ weight
        sigma[cols] = s
    return mmd2, sigma
