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
class PCASubspaceAlignment(BaseAdapter):
    """Subspace alignment (Fernando et al., ICCV 2013), as in the paper's code.

    The ``d`` leading principal directions ``P_S`` and ``P_T`` of each domain
    (those of scikit-learn's exact PCA, see :func:`principal_directions`) give ``Xs P_S P_S^T P_T`` for the source
    and ``Xt P_T`` for the target.

    Parameters
    ----------
    n_components : int, default=80
        Subspace dimension ``d``; fewer when fewer features or samples.

    Attributes
    ----------
    source_components_, target_components_ : ndarray of shape (n_features, d)
        ``P_S`` and ``P_T``.
    alignment_ : ndarray of shape (d, d)
        ``P_S^T P_T``; new source samples map to ``X P_S P_S^T P_T``, new target samples to ``X P_T``.

    References
    ----------
    .. [1] B. Fernando, A. Habrard, M. Sebban, T. Tuytelaars. Unsupervised
       Visual Domain Adaptation Using Subspace Alignment. ICCV 2013.
    .. [2] Gautheron, Redko, Lartizien. ECML PKDD 2018, Table 3.
    """

    _parameter_constraints: dict = {"n_components": [_AT_LEAST_ONE]}

    def __init__(self, n_components=80):
        self.n_components = n_components

    def _fit_adapt(self, Xs, ys, Xt):
        d = _n_components(self.n_components, Xs, Xt)
        self.source_components_ = principal_directions(Xs, d)
        self.target_components_ = principal_directions(Xt, d)
        self.alignment_ = self.source_components_.T @ self.target_components_
        return self._transform_source(Xs), self._transform_target(Xt)

    def _transform_source(self, X):
        return X @ self.source_components_ @ self.alignment_

    def _transform_target(self, X):
        return X @ self.target_components_
