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

__all__ = ["BaseFeatureRanker", "N_FEATURES_TO_SELECT", "TwoDomainRanker", "check_two_domains", "n_features_kept"]

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


def _match_columns(estimator, X_target):
    """``X_target`` with its columns in the order of the names ``estimator`` was fitted with: columns are
    matched by name, never by position. Names that differ are an error naming them."""
    names = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X_target, "columns", None)
    if names is None or columns is None:
        return X_target
    columns = [str(c) for c in columns]
    if columns == list(names):
        return X_target
    missing = [n for n in names if n not in columns]
    extra = [c for c in columns if c not in set(names)]
    if missing or extra or len(set(columns)) != len(columns):
        raise ValueError(f"X_target's columns do not match X's: missing {missing}, not in X {extra}"
                         + (" (a name repeated)" if len(set(columns)) != len(columns) else ""))
    return X_target[list(names)]  # the same columns in another order: taken by name


def _enough(X, arg: str, name: str, min_samples: int):
    if X.shape[0] < min_samples:
        raise ValueError(f"{name}: {arg} has {X.shape[0]} sample(s); it needs at least {min_samples} per domain")
    return X


def check_two_domains(estimator, X, X_target=None, sample_domain=None, y=None, min_samples: int = 2):
    """The source and target samples of a two-domain ``fit``, validated: ``(Xs, Xt, ys)``.

    The domains come as ``X`` and ``X_target`` (columns matched by name when
    both are DataFrames), or stacked in ``X`` with skada's ``sample_domain``
    (positive: source, negative: target). The feature names of ``X`` are
    kept (``feature_names_in_``) either way. Every error names the argument
    at fault (``X``, ``X_target``, ``y``): too few samples (``min_samples``
    per domain), NaN or infinite values, another number of features, values
    whose squared distances overflow or underflow
    (:func:`otfs._checks.check_square_scale`). Without a target, ``X`` is
    compared with itself, with a warning.
    """
    from sklearn.utils.validation import _num_features, validate_data

    from otfs._checks import as_float_matrix, split_domains

    name = type(estimator).__name__
    if sample_domain is not None:
        if X_target is not None:
            raise ValueError("give the target either as X_target or through sample_domain, not both")
        X_all = validate_data(estimator, X, dtype=np.float64, ensure_all_finite=False)
        X_all = as_float_matrix(X_all, "X", getattr(estimator, "feature_names_in_", None))
        Xs, Xt, ys, _, _ = split_domains(X_all, sample_domain, y)
        for rows, n in (("source rows of X (sample_domain > 0)", Xs.shape[0]),
                        ("target rows of X (sample_domain < 0)", Xt.shape[0])):
            if n < min_samples:
                raise ValueError(f"{name}: the {rows} are {n}; it needs at least {min_samples} per domain")
        _warn_constant(name, Xs, Xt, getattr(estimator, "feature_names_in_", None))
        return Xs, Xt, ys
    Xs = validate_data(estimator, X, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=0)
    names = getattr(estimator, "feature_names_in_", None)
    Xs = _enough(as_float_matrix(Xs, "X", names), "X", name, min_samples)
    if X_target is None:
        warnings.warn(f"{name}.fit got no X_target; scoring X against itself", UserWarning, stacklevel=3)
        Xt = Xs
    else:
        X_target = _match_columns(estimator, X_target)
        width = _num_features(X_target)  # named here: validate_data's own message would say "X"
        if width != Xs.shape[1]:
            raise ValueError(f"X_target has {width} features, X {Xs.shape[1]}: the domains must have the "
                             "same features")
        Xt = validate_data(estimator, X_target, dtype=np.float64, ensure_all_finite=False, reset=False,
                           ensure_min_samples=0)
        Xt = _enough(as_float_matrix(Xt, "X_target", names), "X_target", name, min_samples)
    ys = None if y is None else np.asarray(y)
    if ys is not None and ys.shape != (Xs.shape[0],):
        raise ValueError(f"y has shape {ys.shape}, expected ({Xs.shape[0]},): one label per source sample")
    _warn_constant(name, Xs, Xt, names)
    return Xs, Xt, ys


def _warn_constant(name, Xs, Xt, names) -> None:
    """A warning naming the features that are constant (up to round-off) in both domains: they carry
    nothing, and their scores, driven by round-off, say nothing."""
    from otfs._checks import DegenerateResultWarning, constant_columns

    both = np.intersect1d(constant_columns(Xs), constant_columns(Xt))
    if both.size:
        which = [str(names[i]) if names is not None else int(i) for i in both]
        what = f"every one of the {Xs.shape[1]} features is" if both.size == Xs.shape[1] else \
            f"{both.size} of {Xs.shape[1]} features are"
        warnings.warn(f"{name}: {what} constant in both domains {which[:20]}{' ...' if len(which) > 20 else ''}: "
                      "they carry no information, and their scores say nothing", DegenerateResultWarning,
                      stacklevel=4)


class BaseFeatureRanker(SelectorMixin, BaseEstimator):
    """Base class of the feature rankers: ``scores_``, ``order_``, ``ranking_``, ``support_`` (module docstring)."""

    #: Whether ``fit``'s ``y`` must be class labels (a ranker that reads them as classes: a regression
    #: family, whose ``y`` is a continuous response, leaves it out). See :meth:`needs_class_labels`.
    _needs_class_labels = False

    def needs_class_labels(self) -> bool:
        """Whether this ranker, with its parameters, reads ``y`` as class labels."""
        return type(self)._needs_class_labels

    def _set_scores(self, scores, order=None, *, warn_equal=True):
        """Set the fitted attributes from one score per feature.

        ``order`` defaults to the scores' descending order (ties to the lower
        index). Non-finite scores are an error; all-equal scores a warning
        (``warn_equal=False`` where the caller has already warned).
        """
        from otfs._checks import DegenerateResultWarning, scores_all_equal

        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 1 or not np.isfinite(scores).all():
            raise FloatingPointError(f"{type(self).__name__}: the feature scores are not finite "
                                     f"({int(np.sum(~np.isfinite(scores)))} of {scores.size})")
        d = scores.size
        if warn_equal and scores_all_equal(scores):
            warnings.warn(f"{type(self).__name__}: all {d} feature scores are equal (up to round-off: "
                          f"{scores.min():.6g} to {scores.max():.6g}); the order is the index order and says "
                          "nothing", DegenerateResultWarning, stacklevel=3)
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
    ``X`` against itself, with a warning, as :class:`otfs.rankers.OTFeatureRanker`), checks them (finite,
    2-D, the same features, at least ``_min_samples`` samples each) and calls
    :meth:`_score(Xs, ys, Xt)`, which returns one score per feature (higher:
    more similar across the domains). Inputs are never modified.
    """

    #: The fewest samples a domain may have.
    _min_samples = 2

    # With scikit-learn's metadata routing on (skada turns it on), ``fit`` asks for skada's
    # ``sample_domain`` (in ``skada.make_da_pipeline`` the ranker then sees which rows are the target) and
    # for ``X_target`` (a scikit-learn Pipeline then takes ``pipe.fit(Xs, ys, X_target=Xt)``).
    __metadata_request__fit = {"sample_domain": True, "X_target": True}

    def fit(self, X, y=None, X_target=None, sample_domain=None):
        """Score the features of ``X`` (source) against ``X_target`` (target); returns ``self``."""
        self._validate_params()
        Xs, Xt, ys = check_two_domains(self, X, X_target, sample_domain, y, min_samples=self._min_samples)
        return self._set_scores(self._score(Xs, ys, Xt))

    def _score(self, Xs, ys, Xt):
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags
