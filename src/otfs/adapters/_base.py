"""Domain-adaptation methods behind one interface, and their registry.

An adapter speaks skada's language: ``fit(X, y, sample_domain=...)`` on the
stacked domains (positive ``sample_domain``: labelled source, negative:
unlabelled target), then ``transform`` of either domain, so that it runs
inside ``skada.make_da_pipeline`` beside skada's own adapters. The grid uses
the two-set form ``Xs_a, Xt_a = adapter.adapt(Xs, ys, Xt)``, which fits and
returns both training sets in the space where the classifier is trained and
evaluated. The pipeline crosses any registered adapter with any feature
ranking by its name.

The adapters themselves are one file each in :mod:`otfs.adapters`, registered
in :data:`ADAPTERS` by being there (or from another package, by the entry
point group ``otfs.adapters``). To add one, subclass :class:`BaseAdapter`,
implement :meth:`~BaseAdapter._fit_adapt` (and, for new samples,
:meth:`~BaseAdapter._transform_source` and
:meth:`~BaseAdapter._transform_target`), decorate the class with
``@register_adapter("NAME")`` and drop the file in that folder.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Section 5.1 and Table 3.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from otfs._checks import as_float_matrix, as_label_vector, check_same_features, source_mask, split_domains
from otfs._skada import MASKED_LABEL, SOURCE_DOMAIN, TARGET_DOMAIN
from otfs.registry import Registry

__all__ = [
    "ADAPTERS",
    "BaseAdapter",
    "get_adapter",
    "leading_eigenpairs",
    "principal_directions",
    "register_adapter",
]

#: Registered adapters by name (entry-point group ``otfs.adapters``).
ADAPTERS = Registry("adapter", "adapters", package="otfs.adapters")


def register_adapter(name: str):
    """Class decorator adding an adapter to :data:`ADAPTERS` under ``name`` (and setting its ``name``)."""
    return ADAPTERS.register_class(name)


def get_adapter(name: str, **params) -> BaseAdapter:
    """Instantiate the registered adapter ``name`` with ``params``."""
    return ADAPTERS[name](**params)


#: Constraints shared by the adapters (scikit-learn's parameter validation).
_POSITIVE = Interval(Real, 0, None, closed="neither")
_NON_NEGATIVE = Interval(Real, 0, None, closed="left")
_AT_LEAST_ONE = Interval(Integral, 1, None, closed="left")
_NORMS = [StrOptions({"median", "max", "log", "none"}), None]


class BaseAdapter(BaseEstimator):
    """Interface of a domain-adaptation method, in skada's language.

    Subclasses store their hyper-parameters in ``__init__``, declare their
    ranges in ``_parameter_constraints`` (scikit-learn's convention) and
    implement :meth:`_fit_adapt`, which receives validated float arrays (a
    parameter out of its range is a ``ValueError`` naming it and the range,
    before any work), stores what :meth:`_transform_source` and
    :meth:`_transform_target` need in attributes ending in ``_``, and
    returns the adapted training samples. They must not modify their inputs.

    The public methods follow skada's ``BaseAdapter``: :meth:`fit`,
    :meth:`fit_transform` and :meth:`transform` take skada's
    ``sample_domain`` (positive: source, negative: target; without it,
    :meth:`fit` reads target rows from ``y == -1``, skada's masked label, and
    :meth:`transform` takes every row for a target sample) and request it
    through scikit-learn's metadata routing, so that an adapter is a step
    of ``skada.make_da_pipeline``. skada itself is not imported: importing it
    turns metadata routing on for the whole process.
    """

    name = "base"
    #: True where the adapter returns both domains unchanged: the evaluation then runs the nested 1-NN
    #: of every feature count at once (:func:`otfs.classification.accuracy_curve`).
    identity = False
    _parameter_constraints: dict = {}
    # skada's requests: sample_domain reaches fit and transform inside a DA pipeline
    __metadata_request__fit = {"sample_domain": True}
    __metadata_request__transform = {"sample_domain": True, "allow_source": True}

    # -- the two-set form the grid uses --------------------------------------------------------------
    def adapt(self, Xs, ys, Xt):
        """Fit on the labelled source ``(Xs, ys)`` and the unlabelled target ``Xt``; return
        ``(Xs_adapted, Xt_adapted)``, both in the space where the classifier is trained and evaluated."""
        Xs, ys, Xt = self._check(Xs, ys, Xt)
        Xs_new, Xt_new = self._fit_adapt(Xs, ys, Xt)
        self.n_features_in_ = Xs.shape[1]
        return Xs_new, Xt_new

    # -- skada's form --------------------------------------------------------------------------------
    def fit(self, X, y=None, *, sample_domain=None):
        """Fit on stacked samples (skada's ``sample_domain``); target labels are never read. Returns ``self``."""
        Xs, Xt, ys, _ = self._split_fit(X, y, sample_domain)
        self.adapt(Xs, ys, Xt)
        return self

    def fit_transform(self, X, y=None, *, sample_domain=None):
        """:meth:`fit`, then the adapted training samples in the rows of ``X`` (the in-sample map)."""
        Xs, Xt, ys, source = self._split_fit(X, y, sample_domain)
        Xs_new, Xt_new = self.adapt(Xs, ys, Xt)
        return _merge(source, Xs_new, Xt_new)

    def transform(self, X, y=None, *, sample_domain=None, allow_source=False):
        """Adapt new samples: target rows (negative ``sample_domain``, or every row without it) by the target
        map, source rows, where ``allow_source``, by the source map. ``y`` is not read."""
        check_is_fitted(self, "n_features_in_")
        X = as_float_matrix(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was fitted with "
                             f"{self.n_features_in_}")
        if sample_domain is None:
            source = np.zeros(X.shape[0], dtype=bool)
        else:
            source = source_mask(sample_domain, X.shape[0])
        if source.any() and not allow_source:
            raise ValueError(f"{type(self).__name__}.transform got {int(source.sum())} source sample(s) "
                             "(sample_domain > 0) with allow_source=False")
        parts = [self._transform_source(X[source]) if source.any() else None,
                 self._transform_target(X[~source]) if (~source).any() else None]
        width = next(p.shape[1] for p in parts if p is not None) if X.shape[0] else 0
        empty = np.empty((0, width))
        return _merge(source, parts[0] if parts[0] is not None else empty,
                      parts[1] if parts[1] is not None else empty)

    # -- what a subclass implements ----------------------------------------------------------------
    def _fit_adapt(self, Xs, ys, Xt):  # pragma: no cover - interface
        """Fit on validated arrays, store the fitted maps, return ``(Xs_adapted, Xt_adapted)``."""
        raise NotImplementedError

    def _transform_source(self, X):
        """The fitted source map applied to new source samples."""
        raise NotImplementedError(f"{type(self).__name__} has no map for new source samples")

    def _transform_target(self, X):
        """The fitted target map applied to new target samples."""
        raise NotImplementedError(f"{type(self).__name__} has no map for new target samples")

    # -- helpers -----------------------------------------------------------------------------------
    def _check(self, Xs, ys, Xt):
        """Validate the parameters, then the inputs; return the inputs as float arrays."""
        self._validate_params()
        Xs = as_float_matrix(Xs, "Xs")
        Xt = as_float_matrix(Xt, "Xt")
        check_same_features(Xs, Xt)
        ys = as_label_vector(ys, Xs.shape[0], "ys")
        return Xs, ys, Xt

    @staticmethod
    def _split_fit(X, y, sample_domain):
        """``(Xs, Xt, ys, source_mask)`` from stacked samples, by skada's conventions."""
        if sample_domain is None:
            if y is None:
                raise ValueError("fit needs sample_domain, or y with the target samples' labels masked as -1 "
                                 "(skada's convention)")
            sample_domain = np.where(np.asarray(y) == MASKED_LABEL, TARGET_DOMAIN, SOURCE_DOMAIN)
        if y is None:
            raise ValueError("fit needs the source labels y")
        Xs, Xt, ys, _, source = split_domains(X, sample_domain, y)
        return Xs, Xt, ys, source


def _merge(source: np.ndarray, Xs_new: np.ndarray, Xt_new: np.ndarray) -> np.ndarray:
    """Adapted source and target rows back in the rows of the stacked input."""
    out = np.empty((source.size, Xs_new.shape[1]), dtype=np.result_type(Xs_new, Xt_new))
    out[source], out[~source] = Xs_new, Xt_new
    return out


def _n_components(requested: int, Xs: np.ndarray, Xt: np.ndarray) -> int:
    """Subspace dimension: the requested one, or fewer when fewer features or samples."""
    return int(min(requested, Xs.shape[1], Xs.shape[0], Xt.shape[0]))


def principal_directions(X: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` leading principal directions of ``X`` as the columns of a ``d x k`` matrix.

    The directions of scikit-learn's ``PCA(k, svd_solver="full")``, with its
    sign convention (the largest entry of each direction in absolute value
    is positive), from the leading ``k`` eigenpairs of the smaller of the
    ``d x d`` scatter matrix and the ``n x n`` Gram matrix of the centred
    samples, instead of a full SVD; for mostly-zero samples with ``d > n``
    (word counts), by Lanczos on the Gram matrix without forming it
    (:data:`SPARSE_GRAM_SHARE`).
    """
    n, d = X.shape
    V = _sparse_gram_directions(X, k) if d > n and 8 * k <= n else None
    if V is None:
        V = _dense_directions(X, k)
    signs = np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


def _dense_directions(X: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` leading principal directions by LAPACK's ``syevr`` on the smaller of the ``d x d`` scatter
    and ``n x n`` Gram matrices of the centred samples, unsigned."""
    n, d = X.shape
    Xc = X - X.mean(axis=0)
    if d <= n:
        _, V = scipy.linalg.eigh(Xc.T @ Xc, subset_by_index=[d - k, d - 1], driver="evr")
        return V[:, ::-1]  # decreasing variance
    s2, U = scipy.linalg.eigh(Xc @ Xc.T, subset_by_index=[n - k, n - 1], driver="evr")
    if s2[0] > 1e3 * np.finfo(float).eps * n * s2[-1]:
        return ((Xc.T @ U) / np.sqrt(s2))[:, ::-1]
    # k reaches the null space of the centred samples (e.g. k = n): the
    # directions there are arbitrary, so take scikit-learn's, from its SVD.
    return scipy.linalg.svd(Xc, full_matrices=False)[2][:k].T


#: ARPACK's restarts before TCA (or SA) falls back to LAPACK's dense solver. Where it converges, ARPACK restarts 1 to 3
#: times (at most 287 mat-vecs for 81 eigenpairs; Amazon 5,000's pairs at 156 and 312 features). Where the
#: chosen features have a lower rank than the number of components asked for (a ranking that puts words
#: absent from the samples first: rank 71 at 312 features), SciPy's default of ``10 n`` restarts ran 452,186
#: mat-vecs, 565 s, before it converged; the dense solver takes under a second. Either way the embedding is
#: the dense solver's within 1e-10, so the cap decides the time, not the numbers.
ARPACK_MAX_RESTARTS = 20


def leading_eigenpairs(matvec, n: int, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``k`` leading eigenpairs ``(values, vectors)``, by decreasing value, of the symmetric ``n x n``
    operator ``matvec`` by ARPACK's Lanczos method (tolerance 0, a fixed start, :data:`ARPACK_MAX_RESTARTS`
    restarts). None where ``k + 1 >= n``, where ARPACK fails or does not converge, and where the ``k``-th
    eigenvalue is not separated from the next: the basis of a repeated eigenvalue's space is arbitrary, and
    ARPACK's would not be LAPACK's, which the callers then take."""
    if k + 1 >= n:
        return None
    op = scipy.sparse.linalg.LinearOperator((n, n), matvec=matvec, dtype=float)
    v0 = np.random.RandomState(0).uniform(-1.0, 1.0, n)  # fixed: the same start in every run
    try:  # one eigenpair more than asked for, to see whether the k-th is separated from the next
        vals, vecs = scipy.sparse.linalg.eigsh(op, k=k + 1, which="LA", tol=0.0, v0=v0,
                                               maxiter=ARPACK_MAX_RESTARTS)
    except (scipy.sparse.linalg.ArpackNoConvergence, scipy.sparse.linalg.ArpackError):
        return None  # also ARPACK's "starting vector is zero": a Krylov space exhausted by a low rank
    by_size = np.argsort(-vals, kind="stable")
    vals, vecs = vals[by_size], vecs[:, by_size]
    if vals[k - 1] - vals[k] <= 1e-8 * max(abs(vals[0]), np.finfo(float).tiny):
        return None
    return vals[:k], vecs[:, :k]


#: The Gram matrix's leading eigenpairs are found by Lanczos through the samples as a sparse matrix where its
#: mat-vec (two passes over the nonzeros) costs at most this share of ``n^2`` operations. On Amazon 5,000's
#: targets (1,000 documents, 1,250 to 5,000 words, 80 directions) it is 2.1x to 2.6x faster than LAPACK's
#: ``syevr`` on the Gram matrix, with directions within 1e-12 (CHANGELOG.md, 2026-11-29).
SPARSE_GRAM_SHARE = 0.4


def _sparse_gram_directions(X: np.ndarray, k: int) -> np.ndarray | None:
    """The ``k`` leading principal directions of mostly-zero samples (``d > n``) by ARPACK on the centred Gram
    matrix ``Xc Xc^T = X X^T - X mu 1^T - 1 (X mu)^T + (mu . mu) 1 1^T``, never formed, each product two passes
    over the nonzeros of ``X``; None where the samples are not sparse enough, ARPACK does not converge, the
    ``k``-th eigenvalue is not separated from the next (its eigenvectors would be an arbitrary basis) or ``k``
    reaches the centred samples' null space: LAPACK's solution is taken there."""
    n = X.shape[0]
    if 2 * np.count_nonzero(X) > SPARSE_GRAM_SHARE * n * n:
        return None
    S = scipy.sparse.csr_array(X)
    St = S.T.tocsr()
    mean = np.asarray(S.mean(axis=0)).ravel()
    Xm, mm = S @ mean, float(mean @ mean)

    def gram(v):
        v = np.ravel(v)
        total = v.sum()
        return S @ (St @ v) - Xm * total - (Xm @ v) + mm * total

    found = leading_eigenpairs(gram, n, k)
    if found is None:
        return None
    s2, U = found
    if not s2[k - 1] > 1e3 * np.finfo(float).eps * n * s2[0]:
        return None  # the null space of the centred samples: scikit-learn's SVD directions are taken
    return (St @ U - np.outer(mean, U.sum(axis=0))) / np.sqrt(s2)
