"""Domain-adaptation methods behind one interface, and their registry.

An adapter takes labelled source samples and unlabelled target samples and
returns both sets in the space where the 1-NN classifier is trained and
evaluated: ``Xs_a, Xt_a = adapter.fit_transform(Xs, ys, Xt)``. The pipeline
crosses any registered adapter with any feature ranking by its name.

The adapters themselves are one file each in :mod:`otfs.adapters`, registered
in :data:`ADAPTERS` by being there (or from another package, by the entry
point group ``otfs.adapters``). To add one, subclass :class:`BaseAdapter`,
implement :meth:`~BaseAdapter.fit_transform`, decorate the class with
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
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from otfs._checks import as_float_matrix, as_label_vector, check_same_features
from otfs.registry import Registry

__all__ = [
    "ADAPTERS",
    "BaseAdapter",
    "get_adapter",
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
    """Interface of a domain-adaptation method.

    Subclasses store their hyper-parameters in ``__init__``, declare their
    ranges in ``_parameter_constraints`` (scikit-learn's convention) and
    implement :meth:`fit_transform`, which starts with :meth:`_check`: a
    parameter out of its range is a ``ValueError`` naming it and the range,
    before any work. They must not modify their inputs.
    """

    name = "base"
    #: True where ``fit_transform`` returns both domains unchanged: the evaluation then runs the nested 1-NN
    #: of every feature count at once (:func:`otfs.classification.accuracy_curve`).
    identity = False
    _parameter_constraints: dict = {}

    def fit_transform(self, Xs, ys, Xt):  # pragma: no cover - interface
        """Return ``(Xs_adapted, Xt_adapted)``."""
        raise NotImplementedError

    def fit_transform_domains(self, X, y, sample_domain):
        """:meth:`fit_transform` on stacked samples with skada's ``sample_domain`` (positive: source,
        negative: target); returns the adapted samples in the rows of ``X``. Target labels are not read."""
        from otfs._checks import split_domains

        Xs, Xt, ys, _, source = split_domains(X, sample_domain, y)
        Xs_new, Xt_new = self.fit_transform(Xs, ys, Xt)
        out = np.empty((source.size, Xs_new.shape[1]), dtype=np.result_type(Xs_new, Xt_new))
        out[source], out[~source] = Xs_new, Xt_new
        return out

    def _check(self, Xs, ys, Xt):
        """Validate the parameters, then the inputs; return the inputs as float arrays."""
        self._validate_params()
        Xs = as_float_matrix(Xs, "Xs")
        Xt = as_float_matrix(Xt, "Xt")
        check_same_features(Xs, Xt)
        ys = as_label_vector(ys, Xs.shape[0], "ys")
        return Xs, ys, Xt


def _n_components(requested: int, Xs: np.ndarray, Xt: np.ndarray) -> int:
    """Subspace dimension: the requested one, or fewer when fewer features or samples."""
    return int(min(requested, Xs.shape[1], Xs.shape[0], Xt.shape[0]))


def principal_directions(X: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` leading principal directions of ``X`` as the columns of a ``d x k`` matrix.

    The directions of scikit-learn's ``PCA(k, svd_solver="full")``, with its
    sign convention (the largest entry of each direction in absolute value
    is positive), from the leading ``k`` eigenpairs of the smaller of the
    ``d x d`` scatter matrix and the ``n x n`` Gram matrix of the centred
    samples, instead of a full SVD.
    """
    n, d = X.shape
    Xc = X - X.mean(axis=0)
    if d <= n:
        _, V = scipy.linalg.eigh(Xc.T @ Xc, subset_by_index=[d - k, d - 1], driver="evr")
        V = V[:, ::-1]  # decreasing variance
    else:
        s2, U = scipy.linalg.eigh(Xc @ Xc.T, subset_by_index=[n - k, n - 1], driver="evr")
        if s2[0] > 1e3 * np.finfo(float).eps * n * s2[-1]:
            V = ((Xc.T @ U) / np.sqrt(s2))[:, ::-1]
        else:
            # k reaches the null space of the centred samples (e.g. k = n): the
            # directions there are arbitrary, so take scikit-learn's, from its SVD.
            V = scipy.linalg.svd(Xc, full_matrices=False)[2][:k].T
    signs = np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs
