"""OT2: entropic transport (Cuturi, 2013).

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils._param_validation import StrOptions

from otfs._ot.emd import uniform
from otfs._ot.solvers import NumericalFallbackWarning, check_coupling, gibbs_kernel, sinkhorn_scalings
from otfs.adapters._base import (
    _AT_LEAST_ONE,
    _NON_NEGATIVE,
    _NORMS,
    _POSITIVE,
    register_adapter,
)
from otfs.adapters._transport import _barycentric_map, _OTAdapter


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
        import ot  # POT on use (otfs.adapters._transport)

        with np.errstate(over="ignore"):  # the log-domain solver's marginal check; the coupling is checked
            return ot.sinkhorn(
                a, b, M, self.reg, method=method or self.method, numItermax=self.max_iter,
                stopThr=self.tol, warn=False,
            )

    def _fit_adapt(self, Xs, ys, Xt):
        """Fit; with ``method="sinkhorn"`` an underflowing kernel falls back to ``"sinkhorn_log"``.

        A small ``reg`` (or a large unnormalised cost) underflows the Gibbs
        kernel, and POT's ``"sinkhorn"`` stops on a zero scaling with a
        coupling that forgets samples. The coupling is then computed in the
        log domain (POT's ``"sinkhorn_log"``, the same iterations) with a
        :class:`~otfs._ot.solvers.NumericalFallbackWarning`; a coupling that still
        loses a sample is an error naming ``reg``.
        """
        if self.method != "sinkhorn":
            return super()._fit_adapt(Xs, ys, Xt)
        # POT's "sinkhorn" iterations on a kernel computed in place (otfs._ot.solvers):
        # equal to ot.sinkhorn to round-off, without its extra n_s x n_t arrays.
        with np.errstate(under="ignore"):
            K = gibbs_kernel(Xs, Xt, self.reg, self.norm)
        a, b = uniform(Xs.shape[0]), uniform(Xt.shape[0])
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
        return self._store_map(Xs, _barycentric_map(K, Xt)), Xt.copy()
