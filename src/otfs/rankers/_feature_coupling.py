"""Algorithm 2's numerical core: the entropic OT coupling between the features of two paired sets.

:func:`feature_coupling_diagonal` scores the features and
:func:`feature_orders` turns the scores into the paper's three orders;
:class:`otfs.rankers.OTFeatureRanker` is the scikit-learn estimator built on
them, and :mod:`otfs.rankers._base` re-exports both. They live here, apart from the
estimator, so that a pipeline job that ranks Algorithm 1's sample pairs
imports NumPy only: scikit-learn and POT cost seconds to import, more than
the ranking of a pair's 19 iterations takes (POT is imported on use, by the
solvers other than ``"sinkhorn"``).

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Section 4.4, Algorithm 2.
.. [2] M. Cuturi. Sinkhorn Distances: Lightspeed Computation of Optimal
   Transport. NIPS 2013.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

from otfs._checks import DegenerateResultWarning, as_float_matrix, check_random_state, scores_all_equal
from otfs._ot.solvers import NumericalFallbackWarning, gibbs_kernel, normalise_cost, sinkhorn_scalings
from otfs.preprocessing import zscore

__all__ = [
    "NORMS",
    "ORDERS",
    "SINKHORN_METHODS",
    "descending_order",
    "feature_coupling_diagonal",
    "feature_orders",
]

#: Feature orders of the paper's experiments.
ORDERS = ("Descending", "Ascending", "Random")
NORMS = ("log", "median", "max", "none")
SINKHORN_METHODS = ("sinkhorn", "sinkhorn_log", "sinkhorn_stabilized")


def feature_coupling_diagonal(
    Su,
    Tu,
    *,
    reg: float = 1.0,
    norm: str = "log",
    method: str = "sinkhorn",
    max_iter: int = 1000,
    tol: float = 1e-8,
    return_n_iter: bool = False,
):
    """Diagonal of the entropic OT coupling between the features of two paired sets.

    Parameters
    ----------
    Su, Tu : array-like of shape (n, d)
        Paired samples (row ``k`` of ``Su`` is matched to row ``k`` of ``Tu``).
    reg : float
        Entropic regularisation of POT's ``sinkhorn`` (the paper's λ = 1).
    norm : {"log", "median", "max", "none"}
        Cost normalisation; ``"log"`` is ``log(1 + C)`` as in the paper.
    method : {"sinkhorn", "sinkhorn_log", "sinkhorn_stabilized"}
        POT Sinkhorn variant. ``"sinkhorn"`` is what the paper's POT 0.4 ran.
    max_iter, tol : int, float
        Sinkhorn iteration limit and stopping threshold.
    return_n_iter : bool
        Also return the number of Sinkhorn iterations run.

    Returns
    -------
    diag : ndarray of shape (d,)
        ``gamma[i, i]`` for every feature ``i``; the coupling sums to one.
    n_iter : int
        Only with ``return_n_iter=True``.

    Raises
    ------
    ValueError
        A parameter out of its range, naming it.
    FloatingPointError
        Non-finite scores, or several scores that underflowed to exactly 0
        (their order would be the index order, not a ranking): ``reg`` is
        too small even for the log-domain solver.

    Warns
    -----
    DegenerateResultWarning
        Scores that are all equal: the paired samples do not tell the
        features apart (constant data), so the order says nothing.
    NumericalFallbackWarning
        With ``method="sinkhorn"``, when the Gibbs kernel ``exp(-C / reg)``
        underflows (a small ``reg``): POT's ``"sinkhorn"`` stops at once on a
        zero or infinite scaling and would return meaningless scores. The
        coupling is then computed by POT's log-domain ``"sinkhorn_log"``,
        the same iterations in log space: where both work they give the same
        coupling to round-off, and so the same order (``tests/test_ranking.py``).
    """
    _check_solver_params(reg=reg, max_iter=max_iter, tol=tol)
    Su = as_float_matrix(Su, "Su")
    Tu = as_float_matrix(Tu, "Tu")
    if Su.shape != Tu.shape:
        raise ValueError(f"Su and Tu must be paired (same shape), got {Su.shape} and {Tu.shape}")
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if method not in SINKHORN_METHODS:
        raise ValueError(f"method must be one of {SINKHORN_METHODS}, got {method!r}")
    # Features become points described by the paired samples; each sample
    # (a column of the transposed matrix) is z-scored.
    Fs = zscore(Su.T, axis=0)
    Ft = zscore(Tu.T, axis=0)
    result = _sinkhorn_diagonal(Fs, Ft, reg, norm, max_iter, tol) if method == "sinkhorn" else None
    if result is None and method == "sinkhorn":
        warnings.warn(
            f"feature_coupling_diagonal: the Gibbs kernel exp(-C/reg) underflows at reg={reg} (POT's "
            "'sinkhorn' would return meaningless scores: zero or infinite scalings, or a diagonal of zeros); "
            "solved with POT's log-domain 'sinkhorn_log' instead, which gives the same coupling where both work",
            NumericalFallbackWarning,
            stacklevel=2,
        )
        method = "sinkhorn_log"
    if result is None:
        result = _pot_diagonal(Fs, Ft, reg, norm, method, max_iter, tol)
    diag, n_iter = result
    _check_scores(diag, reg, method)
    if return_n_iter:
        return diag, n_iter
    return diag


def _check_solver_params(reg, max_iter, tol) -> None:
    """A ``ValueError`` naming the parameter and its range, before any work."""
    if isinstance(reg, bool) or not isinstance(reg, Real) or not (np.isfinite(reg) and reg > 0):
        raise ValueError(f"reg must be a positive finite number (the entropic regularisation), got {reg!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1 (the Sinkhorn iteration limit), got {max_iter!r}")
    if isinstance(tol, bool) or not isinstance(tol, Real) or not tol >= 0:
        raise ValueError(f"tol must be a number >= 0 (the Sinkhorn stopping threshold), got {tol!r}")


def _check_scores(diag: np.ndarray, reg: float, method: str) -> None:
    """Scores that cannot rank the features are an error, never returned in silence."""
    if not np.isfinite(diag).all():
        raise FloatingPointError(f"Sinkhorn ({method}, reg={reg}) produced non-finite scores; use a larger reg")
    zeros = int(np.count_nonzero(diag == 0))
    if zeros > 1:
        raise FloatingPointError(
            f"Sinkhorn ({method}, reg={reg}): the coupling diagonal underflowed to 0 for {zeros} of "
            f"{diag.size} features, so their order would be the index order; use a larger reg"
        )
    if scores_all_equal(diag):
        warnings.warn(
            f"every one of the {diag.size} features has the same score ({diag[0]:.6g}, up to round-off): the "
            "paired samples do "
            "not tell the features apart (constant or identical samples, or d = 2 after the per-sample "
            "z-score), so the order is the index order and says nothing",
            DegenerateResultWarning,
            stacklevel=3,
        )


def _pot_diagonal(Fs, Ft, reg, norm, method, max_iter, tol):
    """Diagonal of ``ot.sinkhorn`` with ``method``, and its iteration count."""
    import ot  # on use: only the solvers other than "sinkhorn" need POT

    C = normalise_cost(ot.dist(Fs, Ft, metric="sqeuclidean"), norm)
    w = ot.unif(C.shape[0])
    # Stopping at max_iter without a warning is the paper's protocol: POT 0.4
    # stopped silently after its 1000 iterations. The log-domain solver's
    # exponentials may overflow in its marginal check; the coupling is checked.
    with np.errstate(over="ignore"):
        G, log = ot.sinkhorn(w, w, C, reg, method=method, numItermax=max_iter, stopThr=tol, warn=False, log=True)
    return np.ascontiguousarray(np.diag(G)), int(log.get("niter", max_iter))


def _sinkhorn_diagonal(Fs, Ft, reg, norm, max_iter, tol):
    """Diagonal of POT's ``sinkhorn_knopp`` coupling, computed in one ``d x d`` buffer.

    See :func:`otfs._ot.solvers.gibbs_kernel` and :func:`otfs._ot.solvers.sinkhorn_scalings`:
    POT's iterations and stopping rule, with the cost, its normalisation and
    the kernel computed in place, and only the diagonal of
    ``diag(u) K diag(v)`` formed. The results agree with POT's to round-off
    (:mod:`otfs_benchmarks` measures it). None when the iteration hit a
    numerical failure or several diagonal entries underflowed to 0 (an
    underflowed kernel).
    """
    with np.errstate(under="ignore"):
        K = gibbs_kernel(Fs, Ft, reg, norm)
    w = np.full(K.shape[0], 1.0 / K.shape[0])
    u, v, n_iter, failed = sinkhorn_scalings(K, w, w, max_iter, tol)
    if failed:
        return None
    diag = u * np.diagonal(K) * v
    if np.count_nonzero(diag == 0) > 1:  # kernel entries underflowed: the log domain may still resolve them
        return None
    return diag, n_iter


def descending_order(scores) -> np.ndarray:
    """Feature indices by decreasing score; equal scores keep index order."""
    scores = np.asarray(scores, dtype=np.float64)
    return np.argsort(-scores, kind="stable")


def feature_orders(scores, random_state=None) -> dict[str, np.ndarray]:
    """The three feature orders of the paper's experiments.

    ``Descending`` is the method (most similar features first), ``Ascending``
    its exact reverse, and ``Random`` a permutation drawn with
    ``random_state``, independent of the scores.
    """
    desc = descending_order(scores)
    rng = check_random_state(random_state)
    return {
        "Descending": desc,
        "Ascending": desc[::-1].copy(),
        "Random": rng.permutation(desc.size),
    }
