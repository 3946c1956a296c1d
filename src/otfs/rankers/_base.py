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

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from otfs._checks import as_float_matrix, check_random_state, check_same_features
from otfs.base import N_FEATURES_TO_SELECT, BaseFeatureRanker, check_two_domains
from otfs.rankers._feature_coupling import (
    NORMS,
    ORDERS,
    SINKHORN_METHODS,
    descending_order,
    feature_coupling_diagonal,
    feature_orders,
)
from otfs.registry import Registry
from otfs.sample_selection._base import TIE_BREAKS, SampleMatching, select_samples

__all__ = [
    "FEATURE_RANKERS",
    "ORDERS",
    "FeatureRanking",
    "OTFeatureRanker",
    "feature_coupling_diagonal",
    "feature_orders",
    "rank_features",
]

#: Feature rankers by name (entry-point group ``otfs.rankers``): scikit-learn selectors fitted as
#: ``fit(Xs, ys, X_target=Xt)`` with ``scores_`` (higher: more similar across domains) and ``ranking_``.
FEATURE_RANKERS = Registry("feature ranker", "feature rankers", package="otfs.rankers")

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
    emd_max_iter: int | str = "auto",
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
        Passed to :func:`otfs.sample_selection.select_samples` (Algorithm 1).
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
        Tie rule for the rows of the exact coupling (see :mod:`otfs.sample_selection._base`).
    emd_max_iter : int or "auto", default="auto"
        Iteration limit of Algorithm 1's exact OT solver; ``"auto"`` allows
        ``max(100000, N_S * N_T)`` iterations. Reaching it is an error naming
        this parameter.
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
    >>> from otfs.rankers._base import OTFeatureRanker
    >>> rng = np.random.RandomState(0)
    >>> Xs, Xt = rng.randn(30, 6), rng.randn(40, 6)
    >>> Xt[:, 0] += 5
    >>> ranker = OTFeatureRanker(n_features_to_select=3).fit(Xs, X_target=Xt)
    >>> int(ranker.order_[-1])
    0
    """

    _parameter_constraints: dict = {
        "n_features_to_select": N_FEATURES_TO_SELECT,
        "selection": [str],  # a name of otfs.sample_selection.STRATEGIES, checked by select_samples
        "tie_break": [StrOptions(set(TIE_BREAKS))],
        "emd_max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "reg": [Interval(Real, 0, None, closed="neither")],
        "norm": [StrOptions(set(NORMS))],
        "method": [StrOptions(set(SINKHORN_METHODS))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    # With scikit-learn's metadata routing on (skada turns it on), ``fit`` asks for skada's
    # ``sample_domain`` (in ``skada.make_da_pipeline`` the ranker then sees which rows are the target) and
    # for ``X_target`` (a scikit-learn Pipeline then takes ``pipe.fit(Xs, ys, X_target=Xt)``).
    __metadata_request__fit = {"sample_domain": True, "X_target": True}

    def __init__(
        self,
        n_features_to_select=None,
        *,
        selection="ot",
        tie_break="lowest",
        emd_max_iter="auto",
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
        X, Xt, _ = check_two_domains(self, X, X_target, sample_domain)
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

