"""The contract every feature ranker shares.

A feature ranker is a scikit-learn ``SelectorMixin``. After ``fit`` it has:

``scores_``
    One score per feature; higher is kept first (for the domain-adaptation
    rankers: more similar across domains).
``order_``
    Feature indices by decreasing score, ties to the lower index.
``ranking_``
    The rank of each feature, 1 for the best, as scikit-learn's ``RFE``:
    ``ranking_[order_] == 1..d``.
``support_``, ``n_features_``
    The ``n_features_`` first features of ``order_``, by one rule for
    ``n_features_to_select``: None keeps half of the features (at least 1);
    an integer keeps that many and must not exceed the number of features;
    a float in (0, 1] keeps that fraction (at least 1).

Subclasses call :meth:`BaseFeatureRanker._set_scores` at the end of ``fit``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

__all__ = ["BaseFeatureRanker", "N_FEATURES_TO_SELECT", "TwoDomainRanker", "n_features_kept"]

#: The constraint of ``n_features_to_select`` (scikit-learn's parameter validation).
N_FEATURES_TO_SELECT = [None, Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="right")]


def n_features_kept(n_features_to_select, d: int) -> int:
    """How many of ``d`` features ``n_features_to_select`` keeps (the module's one rule)."""
    n = n_features_to_select
    if n is None:
        return max(1, d // 2)
    if isinstance(n, Integral) and not isinstance(n, bool):
        if n > d:
            raise ValueError(f"n_features_to_select={n} exceeds the {d} features of X")
        return int(n)
    return max(1, int(n * d))


class BaseFeatureRanker(SelectorMixin, BaseEstimator):
    """Base class of the feature rankers: ``scores_``, ``order_``, ``ranking_``, ``support_`` (module docstring)."""

    def _set_scores(self, scores, order=None, *, warn_equal=True):
        """Set the fitted attributes from one score per feature.

        ``order`` defaults to the scores' descending order (ties to the lower
        index). Non-finite scores are an error; all-equal scores a warning
        (``warn_equal=False`` where the caller has already warned).
        """
        from ._checks import DegenerateResultWarning

        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 1 or not np.isfinite(scores).all():
            raise FloatingPointError(f"{type(self).__name__}: the feature scores are not finite "
                                     f"({int(np.sum(~np.isfinite(scores)))} of {scores.size})")
        d = scores.size
        if warn_equal and d > 1 and np.all(scores == scores[0]):
            warnings.warn(f"{type(self).__name__}: all {d} feature scores are equal; the order is the index order",
                          DegenerateResultWarning, stacklevel=3)
        order = np.argsort(-scores, kind="stable") if order is None else np.asarray(order, dtype=np.intp)
        ranking = np.empty(d, dtype=np.intp)
        ranking[order] = np.arange(1, d + 1)
        n_keep = n_features_kept(self.n_features_to_select, d)
        support = np.zeros(d, dtype=bool)
        support[order[:n_keep]] = True
        self.scores_, self.order_, self.ranking_ = scores, order, ranking
        self.n_features_, self.support_ = n_keep, support
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_


class TwoDomainRanker(BaseFeatureRanker):
    """Base class of the rankers that score each feature from a source and a target sample.

    ``fit(X, y=None, X_target=None, sample_domain=None)`` takes the two domains
    either as ``X`` and ``X_target`` or stacked in ``X`` with skada's
    ``sample_domain`` (positive: source, negative: target; without either,
    ``X`` against itself, with a warning, as :class:`otfs.ranking.OTFeatureRanker`), checks them (finite,
    2-D, the same features, at least ``_min_samples`` samples each) and calls
    :meth:`_score(Xs, ys, Xt)`, which returns one score per feature (higher:
    more similar across the domains). Inputs are never modified.
    """

    #: The fewest samples a domain may have.
    _min_samples = 2

    # With scikit-learn's metadata routing on (skada turns it on), ``fit`` asks for skada's
    # ``sample_domain``: in ``skada.make_da_pipeline`` the ranker then sees which rows are the target.
    __metadata_request__fit = {"sample_domain": True}

    def fit(self, X, y=None, X_target=None, sample_domain=None):
        """Score the features of ``X`` (source) against ``X_target`` (target); returns ``self``."""
        from sklearn.utils.validation import validate_data

        from ._checks import split_domains

        self._validate_params()
        if sample_domain is not None:
            if X_target is not None:
                raise ValueError("give the target either as X_target or through sample_domain, not both")
            X, X_target, y, _, _ = split_domains(X, sample_domain, y)
        if X_target is None:  # as OTFeatureRanker: scikit-learn's checks and a Pipeline without routing
            import warnings

            warnings.warn(f"{type(self).__name__}.fit got no X_target; scoring X against itself", UserWarning,
                          stacklevel=2)
            X_target = X
        Xs = validate_data(self, X, dtype=np.float64, ensure_min_samples=self._min_samples)
        Xt = validate_data(self, X_target, dtype=np.float64, reset=False, ensure_min_samples=self._min_samples)
        ys = None if y is None else np.asarray(y)
        if ys is not None and ys.shape != (Xs.shape[0],):
            raise ValueError(f"y has shape {ys.shape}, expected ({Xs.shape[0]},): one label per source sample")
        return self._set_scores(self._score(Xs, ys, Xt))

    def _score(self, Xs, ys, Xt):
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags
