"""OT3: entropic transport with the class-based l_{1/2,1} group regularisation (Courty et al., 2014).

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

import warnings

import numpy as np

from otfs._ot.solvers import sinkhorn_lpl1_mm
from otfs.adapters._base import (
    _AT_LEAST_ONE,
    _NON_NEGATIVE,
    _NORMS,
    _POSITIVE,
    register_adapter,
)
from otfs.adapters._transport import _OTAdapter


@register_adapter("OT3")
class SinkhornLpl1Adapter(_OTAdapter):
    """Entropic OT with the class-based l_{1/2,1} regulariser, Eq. (4): the paper's OT3.

    Solved by POT's majoration-minimisation ``ot.da.sinkhorn_lpl1_mm`` (its
    inner Sinkhorn solver is POT's ``"sinkhorn"``), then barycentric mapping.
    The solver is :func:`otfs._ot.solvers.sinkhorn_lpl1_mm`: POT's iterations and
    POT's Sinkhorn, with the class update between them computed per class,
    which gives POT's coupling bit for bit in about half the time.

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
        # _fit_adapt reports as an error naming reg (otfs._ot.solvers.check_coupling).
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
            # POT warns when an inner Sinkhorn stops at its iteration limit,
            # which the paper's protocol accepts; its numerical errors are
            # caught by the coupling check.
            warnings.filterwarnings("ignore", message="Sinkhorn did not converge")
            warnings.filterwarnings("ignore", message="Warning: numerical errors at iteration")
            # POT's ot.da.sinkhorn_lpl1_mm, the same coupling bit for bit with a cheaper class update
            return sinkhorn_lpl1_mm(a, ys, b, M, self.reg, self.eta, self.max_iter, self.max_inner_iter, self.tol)
