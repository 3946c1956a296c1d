"""SA: subspace alignment (Fernando et al., ICCV 2013).

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

from otfs.adapters._base import (
    _AT_LEAST_ONE,
    BaseAdapter,
    _n_components,
    principal_directions,
    register_adapter,
)


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
