"""Domain-adaptation methods behind one interface, and their registry.

An adapter takes labelled source samples and unlabelled target samples and
returns both sets in the space where the 1-NN classifier is trained and
evaluated: ``Xs_a, Xt_a = adapter.fit_transform(Xs, ys, Xt)``. The pipeline
crosses any registered adapter with any feature ranking by its name.

To add a method, subclass :class:`BaseAdapter`, implement
:meth:`~BaseAdapter.fit_transform`, and decorate the class with
``@register_adapter("NAME")``.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Section 5.1 and Table 3.
"""

from __future__ import annotations

import warnings

import numpy as np
import ot
import scipy.linalg
from sklearn.base import BaseEstimator
from sklearn.decomposition import PCA

from ._checks import as_float_matrix, as_label_vector, check_same_features
from ._ot import exact_coupling, normalise_cost

__all__ = [
    "ADAPTERS",
    "BaseAdapter",
    "CORAL",
    "EMDAdapter",
    "NoAdaptation",
    "SinkhornAdapter",
    "SinkhornLpl1Adapter",
    "SubspaceAlignment",
    "TransferComponentAnalysis",
    "get_adapter",
    "register_adapter",
]

#: Registered adapters by name.
ADAPTERS: dict[str, type[BaseAdapter]] = {}


def register_adapter(name: str):
    """Class decorator adding an adapter to :data:`ADAPTERS` under ``name``."""

    def decorator(cls):
        if name in ADAPTERS and ADAPTERS[name] is not cls:
            raise ValueError(f"an adapter named {name!r} is already registered")
        ADAPTERS[name] = cls
        cls.name = name
        return cls

    return decorator


def get_adapter(name: str, **params) -> BaseAdapter:
    """Instantiate the registered adapter ``name`` with ``params``."""
    try:
        cls = ADAPTERS[name]
    except KeyError:
        raise ValueError(f"unknown adapter {name!r}; registered: {sorted(ADAPTERS)}") from None
    return cls(**params)


class BaseAdapter(BaseEstimator):
    """Interface of a domain-adaptation method.

    Subclasses store their hyper-parameters in ``__init__`` and implement
    :meth:`fit_transform`; they must not modify their inputs.
    """

    name = "base"

    def fit_transform(self, Xs, ys, Xt):  # pragma: no cover - interface
        """Return ``(Xs_adapted, Xt_adapted)``."""
        raise NotImplementedError

    @staticmethod
    def _check(Xs, ys, Xt):
        Xs = as_float_matrix(Xs, "Xs")
        Xt = as_float_matrix(Xt, "Xt")
        check_same_features(Xs, Xt)
        ys = as_label_vector(ys, Xs.shape[0], "ys")
        return Xs, ys, Xt


@register_adapter("NA")
class NoAdaptation(BaseAdapter):
    """No adaptation: both domains are returned unchanged (as copies)."""

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        return Xs.copy(), Xt.copy()


def _n_components(requested: int, Xs: np.ndarray, Xt: np.ndarray) -> int:
    """Subspace dimension: the requested one, or fewer when fewer features or samples."""
    return int(min(requested, Xs.shape[1], Xs.shape[0], Xt.shape[0]))


@register_adapter("SA")
class SubspaceAlignment(BaseAdapter):
    """Subspace alignment (Fernando et al., ICCV 2013), as in the paper's code.

    The ``d`` leading principal directions ``P_S`` and ``P_T`` of each domain
    (scikit-learn PCA, exact solver) give ``Xs P_S P_S^T P_T`` for the source
    and ``Xt P_T`` for the target.

    Parameters
    ----------
    n_components : int, default=80
        Subspace dimension ``d``; fewer when fewer features or samples.

    References
    ----------
    .. [1] B. Fernando, A. Habrard, M. Sebban, T. Tuytelaars. Unsupervised
       Visual Domain Adaptation Using Subspace Alignment. ICCV 2013.
    .. [2] Gautheron, Redko, Lartizien. ECML PKDD 2018, Table 3.
    """

    def __init__(self, n_components=80):
        self.n_components = n_components

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        d = _n_components(self.n_components, Xs, Xt)
        Ps = PCA(d, svd_solver="full").fit(Xs).components_.T
        Pt = PCA(d, svd_solver="full").fit(Xt).components_.T
        return Xs @ Ps @ (Ps.T @ Pt), Xt @ Pt


@register_adapter("TCA")
class TransferComponentAnalysis(BaseAdapter):
    """Transfer component analysis with a linear kernel (Pan et al., 2011).

    With ``K = X X^T`` over the stacked domains, the MMD matrix
    ``L = e e^T`` (``e_i = 1/n_s`` on source rows, ``-1/n_t`` on target rows)
    and the centring matrix ``H``, the transfer components are the leading
    eigenvectors ``W`` of ``(I + mu K L K)^{-1} K H K``; both domains are
    embedded as ``K W``.

    Parameters
    ----------
    n_components : int, default=80
        Embedding dimension; fewer when fewer features.
    mu : float, default=1.0
        Trade-off parameter (the paper's code uses 1).
    solver : {"paper", "generalized"}, default="paper"
        ``"paper"`` reproduces the released code: ``numpy.linalg.eigh`` of the
        (non-symmetric) matrix ``pinv(I + mu K L K) K H K``, which reads its
        lower triangle only; scikit-learn-compatible skada does the same.
        ``"generalized"`` solves the symmetric-definite generalized problem
        ``K H K w = lambda (I + mu K L K) w`` exactly, with ``W^T A W = I``.

    References
    ----------
    .. [1] S. J. Pan, I. W. Tsang, J. T. Kwok, Q. Yang. Domain Adaptation via
       Transfer Component Analysis. IEEE TNN 22(2), 2011.
    .. [2] Gautheron, Redko, Lartizien. ECML PKDD 2018, Table 3.
    """

    def __init__(self, n_components=80, mu=1.0, solver="paper"):
        self.n_components = n_components
        self.mu = mu
        self.solver = solver

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        if self.solver not in ("paper", "generalized"):
            raise ValueError(f"solver must be 'paper' or 'generalized', got {self.solver!r}")
        ns, nt = Xs.shape[0], Xt.shape[0]
        n = ns + nt
        d = int(min(self.n_components, Xs.shape[1]))
        X = np.vstack([Xs, Xt])
        K = X @ X.T
        e = np.concatenate([np.full(ns, 1.0 / ns), np.full(nt, -1.0 / nt)])
        Ke = K @ e
        A = np.eye(n) + self.mu * np.outer(Ke, Ke)  # I + mu K L K, as L = e e^T
        Kc = K - K.mean(axis=0, keepdims=True)
        B = Kc.T @ Kc  # K H K, as H is idempotent
        if self.solver == "paper":
            vals, vecs = np.linalg.eigh(np.linalg.pinv(A) @ B)
        else:
            vals, vecs = scipy.linalg.eigh(B, A)
        W = vecs[:, np.argsort(-vals, kind="stable")[:d]]
        Z = K @ W
        return Z[:ns], Z[ns:]


@register_adapter("CORAL")
class CORAL(BaseAdapter):
    """Correlation alignment (Sun, Feng & Saenko, AAAI 2016), as in the paper's code.

    ``C_S = cov(Xs) + reg I`` and ``C_T = cov(Xt) + reg I``; the source is
    whitened and re-coloured, ``Xs C_S^{-1/2} C_T^{1/2}``, without centring,
    and the target is unchanged. Matrix powers come from symmetric
    eigendecompositions, exact for these positive definite matrices.

    Parameters
    ----------
    reg : float, default=1.0
        Added to the covariance diagonals (the paper's code uses 1).

    References
    ----------
    .. [1] B. Sun, J. Feng, K. Saenko. Return of Frustratingly Easy Domain
       Adaptation. AAAI 2016.
    .. [2] Gautheron, Redko, Lartizien. ECML PKDD 2018, Table 3.
    """

    def __init__(self, reg=1.0):
        self.reg = reg

    @staticmethod
    def _spd_power(C: np.ndarray, power: float) -> np.ndarray:
        vals, vecs = np.linalg.eigh(C)
        return (vecs * vals**power) @ vecs.T

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        if Xs.shape[0] < 2 or Xt.shape[0] < 2:
            raise ValueError("CORAL needs at least two samples per domain")
        eye = self.reg * np.eye(Xs.shape[1])
        Cs = np.cov(Xs, rowvar=False) + eye
        Ct = np.cov(Xt, rowvar=False) + eye
        return Xs @ self._spd_power(Cs, -0.5) @ self._spd_power(Ct, 0.5), Xt.copy()


def _barycentric_map(G: np.ndarray, Xt: np.ndarray) -> np.ndarray:
    """Eq. (6): ``diag(G 1)^{-1} G Xt``; a source sample with no mass maps to 0."""
    mass = G.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        P = np.nan_to_num(G / mass, nan=0.0, posinf=0.0, neginf=0.0)
    return P @ Xt


class _OTAdapter(BaseAdapter):
    """Shared part of the OT adapters: uniform weights, cost, barycentric map."""

    norm = None

    def _cost(self, Xs, Xt):
        return normalise_cost(ot.dist(Xs, Xt, metric="sqeuclidean"), self.norm)

    def _coupling(self, a, b, M, ys):  # pragma: no cover - interface
        raise NotImplementedError

    def fit_transform(self, Xs, ys, Xt):
        Xs, ys, Xt = self._check(Xs, ys, Xt)
        a, b = ot.unif(Xs.shape[0]), ot.unif(Xt.shape[0])
        G = self._coupling(a, b, self._cost(Xs, Xt), ys)
        self.coupling_ = G
        return _barycentric_map(G, Xt), Xt.copy()


@register_adapter("OT")
class EMDAdapter(_OTAdapter):
    """Exact OT (network simplex) and barycentric mapping, Eqs. (1) and (7).

    Parameters
    ----------
    max_iter : int, default=100000
        Iteration limit of the network simplex; reaching it is an error.

    References
    ----------
    .. [1] N. Courty, R. Flamary, D. Tuia. Domain Adaptation with Regularized
       Optimal Transport. ECML PKDD 2014.
    """

    def __init__(self, max_iter=100_000):
        self.max_iter = max_iter

    def _coupling(self, a, b, M, ys):
        return exact_coupling(a, b, M, self.max_iter)


@register_adapter("OT2")
class SinkhornAdapter(_OTAdapter):
    """Entropic OT (Sinkhorn) and barycentric mapping, Eq. (3): the paper's OT2.

    Parameters
    ----------
    reg : float, default=2.0
        Entropic regularisation (POT's ``reg_e``).
    norm : {"median", "max", "log", None}, default="median"
        Cost normalisation.
    method : str, default="sinkhorn"
        POT Sinkhorn solver, passed explicitly.
    max_iter : int, default=1000
    tol : float, default=1e-8

    References
    ----------
    .. [1] M. Cuturi. Sinkhorn Distances. NIPS 2013.
    """

    def __init__(self, reg=2.0, norm="median", method="sinkhorn", max_iter=1000, tol=1e-8):
        self.reg = reg
        self.norm = norm
        self.method = method
        self.max_iter = max_iter
        self.tol = tol

    def _coupling(self, a, b, M, ys):
        return ot.sinkhorn(
            a, b, M, self.reg, method=self.method, numItermax=self.max_iter,
            stopThr=self.tol, warn=False,
        )


@register_adapter("OT3")
class SinkhornLpl1Adapter(_OTAdapter):
    """Entropic OT with the class-based l_{1/2,1} regulariser, Eq. (4): the paper's OT3.

    Solved by POT's majoration-minimisation ``ot.da.sinkhorn_lpl1_mm`` (its
    inner Sinkhorn solver is POT's ``"sinkhorn"``), then barycentric mapping.

    Parameters
    ----------
    reg : float, default=2.0
        Entropic regularisation (POT's ``reg_e``).
    eta : float, default=1.0
        Weight of the class regulariser (POT's ``reg_cl``).
    norm : {"median", "max", "log", None}, default="median"
    max_iter : int, default=10
        Outer majoration-minimisation iterations.
    max_inner_iter : int, default=200
    tol : float, default=1e-8
        Inner Sinkhorn stopping threshold.

    References
    ----------
    .. [1] N. Courty, R. Flamary, D. Tuia. Domain Adaptation with Regularized
       Optimal Transport. ECML PKDD 2014.
    """

    def __init__(self, reg=2.0, eta=1.0, norm="median", max_iter=10, max_inner_iter=200, tol=1e-8):
        self.reg = reg
        self.eta = eta
        self.norm = norm
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter
        self.tol = tol

    def _coupling(self, a, b, M, ys):
        with warnings.catch_warnings():
            # POT warns when an inner Sinkhorn stops at its iteration limit,
            # which the paper's protocol accepts.
            warnings.filterwarnings("ignore", message="Sinkhorn did not converge")
            return ot.da.sinkhorn_lpl1_mm(
                a, ys, b, M, self.reg, eta=self.eta, numItermax=self.max_iter,
                numInnerItermax=self.max_inner_iter, stopInnerThr=self.tol,
            )
