"""Algorithm 1 of the paper: selecting the samples that describe the features.

The feature ranking (Algorithm 2) compares a source feature with a target
feature through their values on *paired* samples, so both domains must be
described by the same number of samples. Algorithm 1 builds those pairs: it
solves an exact optimal-transport problem between the source set S and the
target set T (squared Euclidean cost, uniform weights) and matches each
sample of the smaller set to the sample of the larger set with the largest
coupling value, Eq. (10).

Ties
----
With uniform weights an exact coupling row usually holds several equal
maxima: a source sample of mass ``1/N_S`` is split over target samples of
mass ``1/N_T``, and every target sample it fully absorbs carries the same
value ``1/N_T``. Which maximum is chosen decides which target samples form
``T_u`` and therefore the whole ranking, so the rule is a parameter:

``"lowest"`` (default)
    the lowest index among the maxima, which is what :func:`numpy.argmax`
    returns and what the paper's released code does;
``"highest"``
    the highest index among the maxima;
``"random"``
    one of the maxima drawn uniformly with ``random_state``;
``"nearest"``
    the maximum whose sample is nearest (squared Euclidean) to the matched
    sample, then the lowest index; it does not depend on the storage order.

Two coupling values are considered equal when they differ by at most
``tie_rtol`` times the row maximum, which absorbs the round-off of the
network-simplex solver.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Section 4.3 and Algorithm 1; Supplementary B.1 for the ``1nn`` and
   ``random`` strategies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from otfs._checks import as_float_matrix, check_random_state, check_same_features
from otfs._ot.emd import sqeuclidean, uniform
from otfs._ot.solvers import emd_max_iter as emd_max_iter_check
from otfs._ot.solvers import exact_coupling
from otfs.registry import Registry

__all__ = ["STRATEGIES", "TIE_BREAKS", "SampleMatching", "argmax_rows", "select_samples"]

#: Sample-selection strategies by name (entry-point group ``otfs.sample_selection``): a function
#: ``f(small, large, *, tie_break, emd_max_iter, rng)`` returning, for each row of the smaller set ``small``,
#: the index of the row of ``large`` it is matched to.
STRATEGIES = Registry("sample-selection strategy", "sample-selection strategies", package="otfs.sample_selection")

TIE_BREAKS = ("lowest", "highest", "random", "nearest")


@dataclass(frozen=True)
class SampleMatching:
    """Paired samples produced by Algorithm 1.

    Attributes
    ----------
    source_index, target_index : ndarray of int
        ``Xs[source_index[k]]`` is paired with ``Xt[target_index[k]]``. Their
        common length is ``min(N_S, N_T)``.
    flipped : bool
        True when ``N_S > N_T`` and the roles were inverted: every target
        sample is kept once and source samples are selected.
    """

    source_index: np.ndarray
    target_index: np.ndarray
    flipped: bool

    def __len__(self) -> int:
        return int(self.source_index.shape[0])


def argmax_rows(P, tie_break: str = "lowest", random_state=None, tie_rtol: float = 1e-9,
                cost=None):
    """Index of the largest entry of every row, with an explicit tie rule.

    Parameters
    ----------
    P : array-like of shape (n_rows, n_cols)
    tie_break : {"lowest", "highest", "random", "nearest"}
        See the module documentation.
    random_state : int, RandomState instance or None
        Used only when ``tie_break="random"``.
    tie_rtol : float
        Entries within ``tie_rtol * row_max`` of the row maximum tie.
    cost : array-like of shape (n_rows, n_cols), optional
        Required by ``tie_break="nearest"``: ties go to the lowest cost.

    Returns
    -------
    ndarray of int of shape (n_rows,)
    """
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {tie_break!r}")
    P = np.asarray(P, dtype=np.float64)
    row_max = P.max(axis=1, keepdims=True)
    is_max = P >= row_max - tie_rtol * np.abs(row_max)
    if tie_break == "lowest":
        return np.argmax(is_max, axis=1)
    if tie_break == "highest":
        return P.shape[1] - 1 - np.argmax(is_max[:, ::-1], axis=1)
    if tie_break == "nearest":
        if cost is None:
            raise ValueError('tie_break="nearest" needs the cost matrix')
        return np.argmin(np.where(is_max, np.asarray(cost, dtype=np.float64), np.inf), axis=1)
    rng = check_random_state(random_state)
    out = np.empty(P.shape[0], dtype=np.intp)
    for i, row in enumerate(is_max):
        candidates = np.flatnonzero(row)
        out[i] = candidates[rng.randint(candidates.size)]
    return out


def _emd_coupling(A: np.ndarray, B: np.ndarray, max_iter):
    """Exact OT coupling between uniform measures on A and B, and its cost matrix (``max_iter``: an integer
    or ``"auto"``, Algorithm 1's ``emd_max_iter``)."""
    M = sqeuclidean(A, B)  # ot.dist(A, B, metric="sqeuclidean")
    G = exact_coupling(uniform(A.shape[0]), uniform(B.shape[0]), M, max_iter, param="emd_max_iter",
                       what="Algorithm 1's exact OT between the source and target samples")
    return G, M


def select_samples(
    Xs,
    Xt,
    strategy: str = "ot",
    *,
    tie_break: str = "lowest",
    emd_max_iter: int | str = "auto",
    random_state=None,
) -> SampleMatching:
    """Pair the samples of two domains (Algorithm 1 and its alternatives).

    The smaller set keeps all its samples; each one is matched to one sample
    of the larger set. When ``N_S <= N_T`` the target samples are selected
    (``T_u``); when ``N_S > N_T`` the roles flip and source samples are
    selected (``S_u``).

    Parameters
    ----------
    Xs : array-like of shape (N_S, d)
        Source samples.
    Xt : array-like of shape (N_T, d)
        Target samples.
    strategy : str, a name of :data:`STRATEGIES`
        ``"ot"``: argmax of the rows of the exact OT coupling (the paper's
        method); ``"1nn"``: the nearest neighbour in squared Euclidean
        distance (ties: lowest index); ``"random"``: ``min(N_S, N_T)``
        samples of the larger set drawn without replacement; or a
        registered plug-in.
    tie_break : {"lowest", "highest", "random", "nearest"}
        Tie rule for the coupling rows (``"ot"`` only).
    emd_max_iter : int or "auto", default="auto"
        Iteration limit of the network-simplex solver; reaching it is an error
        naming it. ``"auto"`` allows ``max(100000, N_S * N_T)`` iterations
        (POT's default, 100,000, is too few from about 2,000 x 2,000 samples);
        a larger limit never changes a result that a smaller one reached.
    random_state : int, RandomState instance or None
        Seeds the ``"random"`` strategy and the ``"random"`` tie rule.

    Returns
    -------
    SampleMatching

    References
    ----------
    .. [1] Gautheron, Redko, Lartizien. ECML PKDD 2018, Algorithm 1.
    """
    select = STRATEGIES[strategy]
    emd_max_iter_check(emd_max_iter, 1, 1)
    Xs = as_float_matrix(Xs, "Xs")
    Xt = as_float_matrix(Xt, "Xt")
    check_same_features(Xs, Xt)
    rng = check_random_state(random_state)

    flipped = Xs.shape[0] > Xt.shape[0]
    small, large = (Xt, Xs) if flipped else (Xs, Xt)

    chosen = select(small, large, tie_break=tie_break, emd_max_iter=emd_max_iter, rng=rng)

    kept = np.arange(small.shape[0])
    chosen = np.asarray(chosen, dtype=np.intp)
    if flipped:
        return SampleMatching(source_index=chosen, target_index=kept, flipped=True)
    return SampleMatching(source_index=kept, target_index=chosen, flipped=False)
