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
from numbers import Integral, Real

import numpy as np
import ot
import scipy.linalg
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from ._checks import as_float_matrix, as_label_vector, check_same_features
from ._ot import NumericalFallbackWarning, check_coupling, exact_coupling, gibbs_kernel, normalise_cost, sinkhorn_scalings
from .registry import Registry

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
    "WDAAdapter",
    "get_adapter",
    "principal_directions",
    "register_adapter",
]

#: Registered adapters by name (entry-point group ``otfs.adapters``).
ADAPTERS = Registry("adapter", "adapters")


def register_adapter(name: str):
    """Class decorator adding an adapter to :data:`ADAPTERS` under ``name`` (and setting its ``name``)."""

    def decorator(cls):
        ADAPTERS.register(name, cls)
        cls.name = name
        return cls

    return decorator


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
    _parameter_constraints: dict = {}

    def fit_transform(self, Xs, ys, Xt):  # pragma: no cover - interface
        """Return ``(Xs_adapted, Xt_adapted)``."""
        raise NotImplementedError

    def fit_transform_domains(self, X, y, sample_domain):
        """:meth:`fit_transform` on stacked samples with skada's ``sample_domain`` (positive: source,
        negative: target); returns the adapted samples in the rows of ``X``. Target labels are not read."""
        from ._checks import split_domains

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
    (those of scikit-learn's exact PCA, see :func:`principal_directions`) give ``Xs P_S P_S^T P_T`` for the source
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

    _parameter_constraints: dict = {"n_components": [_AT_LEAST_ONE]}

    def __init__(self, n_components=80):
        self.n_components = n_components

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        d = _n_components(self.n_components, Xs, Xt)
        Ps = principal_directions(Xs, d)
        Pt = principal_directions(Xt, d)
        return Xs @ Ps @ (Ps.T @ Pt), Xt @ Pt


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

    Notes
    -----
    ``L`` has rank one, so ``K L K = k k^T`` with ``k = K e`` and
    ``(I + mu k k^T)^{-1}`` has a closed form (Sherman-Morrison): the
    ``(n_s + n_t)^2`` matrices ``L``, ``H`` and the pseudo-inverse of the
    released code are never formed, and only the ``n_components`` leading
    eigenpairs are computed. :func:`otfs.benchmark.reference.tca` is the
    dense version this is measured against.

    References
    ----------
    .. [1] S. J. Pan, I. W. Tsang, J. T. Kwok, Q. Yang. Domain Adaptation via
       Transfer Component Analysis. IEEE TNN 22(2), 2011.
    .. [2] Gautheron, Redko, Lartizien. ECML PKDD 2018, Table 3.
    """

    _parameter_constraints: dict = {
        "n_components": [_AT_LEAST_ONE],
        "mu": [_NON_NEGATIVE],
        "solver": [StrOptions({"paper", "generalized"})],
    }

    def __init__(self, n_components=80, mu=1.0, solver="paper"):
        self.n_components = n_components
        self.mu = mu
        self.solver = solver

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        ns, nt = Xs.shape[0], Xt.shape[0]
        n, n_feat = ns + nt, Xs.shape[1]
        m = int(min(self.n_components, n_feat, n))
        X = np.vstack([Xs, Xt])
        K = X @ X.T
        e = np.concatenate([np.full(ns, 1.0 / ns), np.full(nt, -1.0 / nt)])
        k = K @ e  # K L K = k k^T, as L = e e^T has rank one
        # K H K, as H is idempotent: through the features when that is cheaper
        if 2 * n_feat * n_feat + n * n_feat < n * n:
            Xc = X - X.mean(axis=0)
            B = X @ (Xc.T @ Xc) @ X.T
        else:
            Kc = K - K.mean(axis=0, keepdims=True)
            B = Kc.T @ Kc
        top = [n - m, n - 1]
        if self.solver == "paper":
            # A = I + mu k k^T, so A^{-1} = I - c k k^T (Sherman-Morrison) and
            # A^{-1} B = B - c k (B k)^T: no pseudo-inverse, no n^3 product.
            # Like numpy.linalg.eigh on the released code's non-symmetric
            # matrix, scipy's eigh reads its lower triangle only.
            c = self.mu / (1.0 + self.mu * float(k @ k))
            M = B - c * np.outer(k, B @ k)
            vals, vecs = scipy.linalg.eigh(M, lower=True, subset_by_index=top, driver="evr")
        else:
            A = np.eye(n) + self.mu * np.outer(k, k)
            vals, vecs = scipy.linalg.eigh(B, A, subset_by_index=top)
        W = vecs[:, np.argsort(-vals, kind="stable")]
        Z = K @ W
        return Z[:ns], Z[ns:]


@register_adapter("CORAL")
class CORAL(BaseAdapter):
    """Correlation alignment (Sun, Feng & Saenko, AAAI 2016), as in the paper's code.

    ``C_S = cov(Xs) + reg I`` and ``C_T = cov(Xt) + reg I``; the source is
    whitened and re-coloured, ``Xs C_S^{-1/2} C_T^{1/2}``, without centring,
    and the target is unchanged.

    With fewer samples than features the ``d x d`` matrix powers are never
    formed: a covariance of ``n`` samples is low-rank plus ``reg I``,
    ``C = Xc^T U diag(s^2) U^T Xc / (n - 1)`` with ``Xc Xc^T = U diag(s^2) U^T``
    the ``n x n`` Gram matrix of the centred samples, so any power is
    ``f(C) = f(reg) I + Xc^T U diag(g) U^T Xc`` with
    ``g = (f(reg + s^2 / (n - 1)) - f(reg)) / s^2``. Applying it costs
    ``O(n^2 d)`` operations instead of the ``O(d^3)`` of
    ``scipy.linalg.sqrtm``. This is exact (not an
    approximation); :func:`otfs.benchmark.reference.coral` is the dense
    version it is measured against.

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

    _parameter_constraints: dict = {"reg": [_POSITIVE]}

    def __init__(self, reg=1.0):
        self.reg = reg

    @staticmethod
    def _power_map(X: np.ndarray, reg: float, power: float):
        """The map ``Y -> Y (cov(X) + reg I)^power``, without forming a ``d x d`` matrix when ``n < d``."""
        n, d = X.shape
        Xc = X - X.mean(axis=0)
        base = reg**power
        if n >= d:  # few features: the d x d covariance is the small matrix
            lam, V = np.linalg.eigh(Xc.T @ Xc / (n - 1))
            w = reg**power * np.expm1(power * np.log1p(np.clip(lam, 0.0, None) / reg))
            return lambda Y: base * Y + ((Y @ V) * w) @ V.T
        # n < d: C = Xc^T U diag(s^2) U^T Xc / (n-1) from the n x n Gram matrix Xc Xc^T = U diag(s^2) U^T,
        # so Y f(C) = f(reg) Y + (Y Xc^T) U diag(g) U^T Xc with g = (f(reg + s^2/(n-1)) - f(reg)) / s^2.
        s2, U = np.linalg.eigh(Xc @ Xc.T)
        s2 = np.clip(s2, 0.0, None)
        lam = s2 / (n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = reg**power * np.expm1(power * np.log1p(lam / reg)) / s2
        # the limit s -> 0 (a null direction of the centred samples)
        small = s2 <= np.finfo(float).eps * max(float(s2.max()), 1.0)
        g[small] = power * reg ** (power - 1.0) / (n - 1)
        return lambda Y: base * Y + ((((Y @ Xc.T) @ U) * g) @ U.T) @ Xc

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        if Xs.shape[0] < 2 or Xt.shape[0] < 2:
            raise ValueError("CORAL needs at least two samples per domain")
        whitened = self._power_map(Xs, self.reg, -0.5)(Xs)
        return self._power_map(Xt, self.reg, 0.5)(whitened), Xt.copy()


def _barycentric_map(G: np.ndarray, Xt: np.ndarray) -> np.ndarray:
    """Eq. (6): ``diag(G 1)^{-1} G Xt``; a source sample with no mass maps to 0.

    The row scaling is applied to the ``n_s x d`` product rather than to the
    ``n_s x n_t`` coupling: the same map, with round-off-level differences.
    """
    mass = G.sum(axis=1)
    out = G @ Xt
    has_mass = mass > 0
    out[has_mass] /= mass[has_mass, None]
    out[~has_mass] = 0.0
    return out


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
        self.coupling_ = check_coupling(G, f"{type(self).__name__} ({self.name})", getattr(self, "reg", None))
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

    _parameter_constraints: dict = {"max_iter": [_AT_LEAST_ONE]}

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

    _parameter_constraints: dict = {
        "reg": [_POSITIVE],
        "norm": _NORMS,
        "method": [StrOptions({"sinkhorn", "sinkhorn_log", "sinkhorn_stabilized"})],
        "max_iter": [_AT_LEAST_ONE],
        "tol": [_NON_NEGATIVE],
    }

    def __init__(self, reg=2.0, norm="median", method="sinkhorn", max_iter=1000, tol=1e-8):
        self.reg = reg
        self.norm = norm
        self.method = method
        self.max_iter = max_iter
        self.tol = tol

    def _coupling(self, a, b, M, ys, method=None):
        with np.errstate(over="ignore"):  # the log-domain solver's marginal check; the coupling is checked
            return ot.sinkhorn(
                a, b, M, self.reg, method=method or self.method, numItermax=self.max_iter,
                stopThr=self.tol, warn=False,
            )

    def fit_transform(self, Xs, ys, Xt):
        """Adapt; with ``method="sinkhorn"`` an underflowing kernel falls back to ``"sinkhorn_log"``.

        A small ``reg`` (or a large unnormalised cost) underflows the Gibbs
        kernel, and POT's ``"sinkhorn"`` stops on a zero scaling with a
        coupling that forgets samples. The coupling is then computed in the
        log domain (POT's ``"sinkhorn_log"``, the same iterations) with a
        :class:`~otfs._ot.NumericalFallbackWarning`; a coupling that still
        loses a sample is an error naming ``reg``.
        """
        if self.method != "sinkhorn":
            return super().fit_transform(Xs, ys, Xt)
        # POT's "sinkhorn" iterations on a kernel computed in place (otfs._ot):
        # equal to ot.sinkhorn to round-off, without its extra n_s x n_t arrays.
        Xs, ys, Xt = self._check(Xs, ys, Xt)
        with np.errstate(under="ignore"):
            K = gibbs_kernel(Xs, Xt, self.reg, self.norm)
        a, b = ot.unif(Xs.shape[0]), ot.unif(Xt.shape[0])
        u, v, _, failed = sinkhorn_scalings(K, a, b, self.max_iter, self.tol)
        if not failed:
            K *= u[:, None]
            K *= v[None, :]
            failed = bool((K.sum(axis=1) <= 0).any())  # a sample the underflowed kernel forgot
        if failed:
            warnings.warn(
                f"SinkhornAdapter (OT2): the Gibbs kernel exp(-cost/reg) underflows at reg={self.reg} "
                f"(norm={self.norm!r}); solved with POT's log-domain 'sinkhorn_log' instead",
                NumericalFallbackWarning,
                stacklevel=2,
            )
            K = self._coupling(a, b, self._cost(Xs, Xt), ys, method="sinkhorn_log")
        self.coupling_ = check_coupling(K, "SinkhornAdapter (OT2)", self.reg)
        return _barycentric_map(K, Xt), Xt.copy()


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

    _parameter_constraints: dict = {
        "reg": [_POSITIVE],
        "eta": [_NON_NEGATIVE],
        "norm": _NORMS,
        "max_iter": [_AT_LEAST_ONE],
        "max_inner_iter": [_AT_LEAST_ONE],
        "tol": [_NON_NEGATIVE],
    }

    def __init__(self, reg=2.0, eta=1.0, norm="median", max_iter=10, max_inner_iter=200, tol=1e-8):
        self.reg = reg
        self.eta = eta
        self.norm = norm
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter
        self.tol = tol

    def _coupling(self, a, b, M, ys):
        # POT's majoration-minimisation has no log-domain inner solver: an
        # underflowing kernel gives a coupling that loses samples, which
        # fit_transform reports as an error naming reg (otfs._ot.check_coupling).
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
            # POT warns when an inner Sinkhorn stops at its iteration limit,
            # which the paper's protocol accepts; its numerical errors are
            # caught by the coupling check.
            warnings.filterwarnings("ignore", message="Sinkhorn did not converge")
            warnings.filterwarnings("ignore", message="Warning: numerical errors at iteration")
            return ot.da.sinkhorn_lpl1_mm(
                a, ys, b, M, self.reg, eta=self.eta, numItermax=self.max_iter,
                numInnerItermax=self.max_inner_iter, stopInnerThr=self.tol,
            )


@register_adapter("WDA")
class WDAAdapter(BaseAdapter):
    """Wasserstein Discriminant Analysis as an adapter: fit on the labelled source, project both domains.

    Uses :class:`otfs.wda.WassersteinDiscriminantAnalysis` (needs POT's
    optional ``autograd`` and ``pymanopt``). The target is never used for
    fitting: WDA is a supervised projection, not an adaptation, and is
    reported beside the adapters as such.

    Parameters
    ----------
    n_components : int, default=20
        Subspace dimension; fewer when fewer features.
    reg_lambda : float, default=1.0
    sinkhorn_iter : int, default=10
    max_iter : int, default=50
    random_state : int, default=0
        Fixed, so that every job draws the same initial projection.
    normalize : bool, default=True
        Scale each class pair's cost by its mean at the start (POT's
        ``normalize``). True here, unlike the estimator's default (POT's):
        an adapter meets feature sets of any width and scale (800 z-scored
        SURF features), where the raw cost makes ``exp(-lambda M)``
        underflow.
    init : {"random", "pca", "fda"}, default="random"

    References
    ----------
    .. [1] R. Flamary, M. Cuturi, N. Courty, A. Rakotomamonjy. Wasserstein
       Discriminant Analysis. GRETSI 2017.
    """

    _parameter_constraints: dict = {
        "n_components": [_AT_LEAST_ONE],
        "reg_lambda": [_POSITIVE],
        "sinkhorn_iter": [_AT_LEAST_ONE],
        "max_iter": [_AT_LEAST_ONE],
        "random_state": ["random_state"],
        "normalize": ["boolean"],
        "init": [StrOptions({"random", "pca", "fda"})],
    }

    def __init__(self, n_components=20, reg_lambda=1.0, sinkhorn_iter=10, max_iter=50, random_state=0,
                 normalize=True, init="random"):
        self.n_components = n_components
        self.reg_lambda = reg_lambda
        self.sinkhorn_iter = sinkhorn_iter
        self.max_iter = max_iter
        self.random_state = random_state
        self.normalize = normalize
        self.init = init

    def fit_transform(self, Xs, ys, Xt):
        from .wda import WassersteinDiscriminantAnalysis

        Xs, ys, Xt = self._check(Xs, ys, Xt)
        wda = WassersteinDiscriminantAnalysis(
            n_components=min(self.n_components, Xs.shape[1]), reg_lambda=self.reg_lambda,
            sinkhorn_iter=self.sinkhorn_iter, max_iter=self.max_iter, random_state=self.random_state,
            normalize=self.normalize, init=self.init,
        ).fit(Xs, ys)
        self.wda_ = wda
        return wda.transform(Xs), wda.transform(Xt)
