"""OT: exact transport and its barycentric map (Courty et al., 2014).

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from otfs._ot.solvers import exact_coupling
from otfs.adapters._base import (
    _AT_LEAST_ONE,
    register_adapter,
)
from otfs.adapters._transport import _OTAdapter


@register_adapter("OT")
class EMDAdapter(_OTAdapter):
    """Exact OT (network simplex) and barycentric mapping, Eqs. (1) and (7).

    Parameters
    ----------
    max_iter : int or "auto", default="auto"
        Iteration limit of the network simplex; reaching it is an error
        naming it. ``"auto"`` allows ``max(100000, n_s * n_t)`` iterations.

    References
    ----------
    .. [1] N. Courty, R. Flamary, D. Tuia. Domain Adaptation with Regularized
       Optimal Transport. ECML PKDD 2014.
    """

    _parameter_constraints: dict = {"max_iter": [_AT_LEAST_ONE, StrOptions({"auto"})]}

    def __init__(self, max_iter="auto"):
        self.max_iter = max_iter

    def _coupling(self, a, b, M, ys):
        return exact_coupling(a, b, M, self.max_iter, param="max_iter", what="EMDAdapter's exact OT")
