"""Algorithm 2 of the paper: ranking features by their similarity across domains.

Each feature is turned into a point described by the paired samples of
Algorithm 1: the matrices ``S_u`` and ``T_u`` are transposed (features become
rows) and each of their columns, i.e. each sample, is z-scored. An entropic
OT problem (Eq. 9) is then solved between the ``d`` source features and the
``d`` target features with cost ``C_ij = ||f_i^S - f_j^T||^2``, normalised as
``log(1 + C)``, and the diagonal of its coupling scores every feature: a
feature that keeps its place across the domains keeps its mass on its own
counterpart, a shifted one spreads it. Features are ranked by decreasing
diagonal, Eq. (11).

The OT problems are solved with POT; every solver option is passed
explicitly, because POT's defaults have changed across releases (the
``method`` of ``SinkhornTransport`` changed in 0.9.4).

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
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import ot
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from ._checks import DegenerateResultWarning, as_float_matrix, check_same_features
from ._ot import NumericalFallbackWarning, gibbs_kernel, normalise_cost, sinkhorn_scalings
from .base import N_FEATURES_TO_SELECT, BaseFeatureRanker
from .preprocessing import zscore
from .registry import Registry
from .selection import TIE_BREAKS, SampleMatching, select_samples

__all__ = [
    "FEATURE_RANKERS",
    "ORDERS",
    "FeatureRanking",
    "OTFeatureRanker",
    "feature_coupling_diagonal",
    "feature_orders",
    "rank_features",
]

#: Feature rankers by name (entry-point group ``otfs.feature_rankers``): scikit-learn selectors fitted as
#: ``fit(Xs, ys, X_target=Xt)`` with ``scores_`` (higher: more similar across domains) and ``ranking_``.
FEATURE_RANKERS = Registry("feature ranker", "feature rankers", package="otfs.rankers")

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
    if diag.size > 1 and np.ptp(diag) == 0:
        warnings.warn(
            f"every one of the {diag.size} features has the same score ({diag[0]:.6g}): the paired samples do "
            "not tell the features apart (constant or identical samples, or d = 2 after the per-sample "
            "z-score), so the order is the index order and says nothing",
            DegenerateResultWarning,
            stacklevel=3,
        )


def _pot_diagonal(Fs, Ft, reg, norm, method, max_iter, tol):
    """Diagonal of ``ot.sinkhorn`` with ``method``, and its iteration count."""
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

    See :func:`otfs._ot.gibbs_kernel` and :func:`otfs._ot.sinkhorn_scalings`:
    POT's iterations and stopping rule, with the cost, its normalisation and
    the kernel computed in place, and only the diagonal of
    ``diag(u) K diag(v)`` formed. The results agree with POT's to round-off
    (:mod:`otfs.benchmark` measures it). None when the iteration hit a
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


@dataclass(frozen=True)
class FeatureRanking:
    """Result of :func:`rank_features`.

    Attributes
    ----------
    scores : ndarray of shape (d,)
        Diagonal of the feature coupling (higher: more similar across domains).
    order : ndarray of shape (d,)
        Feature indices by decreasing score.
    matching : SampleMatching
        The sample pairs of Algorithm 1 that described the features.
    n_iter : int
        Sinkhorn iterations run for the feature coupling.
    """

    scores: np.ndarray
    order: np.ndarray
    matching: SampleMatching
    n_iter: int


def rank_features(
    Xs,
    Xt,
    *,
    selection: str = "ot",
    tie_break: str = "lowest",
    emd_max_iter: int = 100_000,
    reg: float = 1.0,
    norm: str = "log",
    method: str = "sinkhorn",
    max_iter: int = 1000,
    tol: float = 1e-8,
    random_state=None,
) -> FeatureRanking:
    """Rank features by similarity between a source and a target domain (Algorithm 2).

    Parameters
    ----------
    Xs : array-like of shape (N_S, d)
        Source samples.
    Xt : array-like of shape (N_T, d)
        Target samples (unlabelled).
    selection, tie_break, emd_max_iter :
        Passed to :func:`otfs.selection.select_samples` (Algorithm 1).
    reg, norm, method, max_iter, tol :
        Passed to :func:`feature_coupling_diagonal`.
    random_state : int, RandomState instance or None
        Seeds the random selection strategy and random tie rule.

    Returns
    -------
    FeatureRanking

    References
    ----------
    .. [1] Gautheron, Redko, Lartizien. ECML PKDD 2018, Algorithm 2.
    """
    Xs = as_float_matrix(Xs, "Xs")
    Xt = as_float_matrix(Xt, "Xt")
    check_same_features(Xs, Xt)
    matching = select_samples(
        Xs,
        Xt,
        selection,
        tie_break=tie_break,
        emd_max_iter=emd_max_iter,
        random_state=random_state,
    )
    scores, n_iter = feature_coupling_diagonal(
        Xs[matching.source_index],
        Xt[matching.target_index],
        reg=reg,
        norm=norm,
        method=method,
        max_iter=max_iter,
        tol=tol,
        return_n_iter=True,
    )
    return FeatureRanking(
        scores=scores, order=descending_order(scores), matching=matching, n_iter=n_iter
    )


class OTFeatureRanker(BaseFeatureRanker):
    """Unsupervised feature selection for domain adaptation with optimal transport.

    Ranks the features of a labelled source domain by how similar they are in
    an unlabelled target domain (Algorithms 1 and 2 of [1]_) and keeps the
    ``n_features_to_select`` most similar ones.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        Number of features to keep. A float in (0, 1] is a fraction of the
        features; None keeps half of them.
    selection : {"ot", "1nn", "random"}, default="ot"
        Sample-selection strategy of Algorithm 1.
    tie_break : {"lowest", "highest", "random", "nearest"}, default="lowest"
        Tie rule for the rows of the exact coupling (see :mod:`otfs.selection`).
    emd_max_iter : int, default=100000
        Iteration limit of the exact OT solver.
    reg : float, default=1.0
        Entropic regularisation λ of the feature coupling.
    norm : {"log", "median", "max", "none"}, default="log"
        Normalisation of the feature cost matrix.
    method : {"sinkhorn", "sinkhorn_log", "sinkhorn_stabilized"}, default="sinkhorn"
        POT Sinkhorn solver, always passed explicitly.
    max_iter : int, default=1000
        Sinkhorn iteration limit.
    tol : float, default=1e-8
        Sinkhorn stopping threshold.
    random_state : int, RandomState instance or None, default=None
        Seeds the random selection strategy and the random tie rule.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        Diagonal of the feature coupling; higher means more similar.
    ranking_ : ndarray of shape (n_features_in_,)
        ``ranking_[i]`` is the rank of feature ``i`` (1 = most similar).
    order_ : ndarray of shape (n_features_in_,)
        Feature indices from most to least similar.
    support_ : ndarray of bool of shape (n_features_in_,)
        Mask of the selected features.
    n_features_ : int
        Number of selected features.
    matching_ : SampleMatching
        Sample pairs found by Algorithm 1.
    n_iter_ : int
        Sinkhorn iterations run for the feature coupling.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    The target domain is given to :meth:`fit` as ``X_target``. In a
    :class:`~sklearn.pipeline.Pipeline` it is passed with the step name,
    ``pipe.fit(Xs, ys, ranker__X_target=Xt)``, or, when scikit-learn's
    metadata routing is enabled, requested with
    ``OTFeatureRanker().set_fit_request(X_target=True)`` and passed as
    ``pipe.fit(Xs, ys, X_target=Xt)``. Without ``X_target`` the
    ranker compares ``X`` with itself, which scores how distinct each feature
    is rather than how it shifts; a warning says so.

    References
    ----------
    .. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
       Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from otfs.ranking import OTFeatureRanker
    >>> rng = np.random.RandomState(0)
    >>> Xs, Xt = rng.randn(30, 6), rng.randn(40, 6)
    >>> Xt[:, 0] += 5
    >>> ranker = OTFeatureRanker(n_features_to_select=3).fit(Xs, X_target=Xt)
    >>> int(ranker.order_[-1])
    0
    """

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "selection": [str],  # a name of otfs.selection.STRATEGIES, checked by select_samples
        "tie_break": [StrOptions(set(TIE_BREAKS))],
        "emd_max_iter": [Interval(Integral, 1, None, closed="left")],
        "reg": [Interval(Real, 0, None, closed="neither")],
        "norm": [StrOptions(set(NORMS))],
        "method": [StrOptions(set(SINKHORN_METHODS))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    # With scikit-learn's metadata routing on (skada turns it on), ``fit`` asks for skada's
    # ``sample_domain``: in ``skada.make_da_pipeline`` the ranker then sees which rows are the target.
    __metadata_request__fit = {"sample_domain": True}

    def __init__(
        self,
        n_features_to_select=None,
        *,
        selection="ot",
        tie_break="lowest",
        emd_max_iter=100_000,
        reg=1.0,
        norm="log",
        method="sinkhorn",
        max_iter=1000,
        tol=1e-8,
        random_state=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.selection = selection
        self.tie_break = tie_break
        self.emd_max_iter = emd_max_iter
        self.reg = reg
        self.norm = norm
        self.method = method
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None, X_target=None, sample_domain=None):
        """Rank the features of ``X`` (source) against ``X_target`` (target).

        The two domains come either as ``X`` and ``X_target``, or stacked in
        ``X`` with skada's ``sample_domain`` (positive: source, negative:
        target); both give the same ranking.

        Parameters
        ----------
        X : array-like of shape (n_source, n_features)
            Source samples (with ``sample_domain``: the samples of both domains).
        y : ignored
            Present for Pipeline compatibility; the method is unsupervised.
        X_target : array-like of shape (n_target, n_features), default=None
            Unlabelled target samples.
        sample_domain : array-like of shape (n_samples,), default=None
            skada's domain labels of the rows of ``X``.

        Returns
        -------
        self : OTFeatureRanker
        """
        self._validate_params()
        if sample_domain is not None:
            if X_target is not None:
                raise ValueError("give the target either as X_target or through sample_domain, not both")
            from ._checks import split_domains

            X, X_target, *_ = split_domains(X, sample_domain)
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=True)
        if X_target is None:
            warnings.warn(
                "OTFeatureRanker.fit got no X_target; ranking X against itself",
                UserWarning,
                stacklevel=2,
            )
            Xt = X
        else:
            Xt = validate_data(self, X_target, dtype=np.float64, reset=False)
        result = rank_features(
            X,
            Xt,
            selection=self.selection,
            tie_break=self.tie_break,
            emd_max_iter=self.emd_max_iter,
            reg=self.reg,
            norm=self.norm,
            method=self.method,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=check_random_state(self.random_state),
        )
        self._set_scores(result.scores, order=result.order, warn_equal=False)  # rank_features warned
        self.matching_ = result.matching
        self.n_iter_ = result.n_iter
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.target_tags.required = False
        return tags

