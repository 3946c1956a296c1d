"""WDA as an adapter: the projection learned on the labelled source samples (Flamary et al.).

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from otfs.adapters._base import (
    _AT_LEAST_ONE,
    _POSITIVE,
    BaseAdapter,
    register_adapter,
)


@register_adapter("WDA")
class WDAAdapter(BaseAdapter):
    """Wasserstein Discriminant Analysis as an adapter: fit on the labelled source, project both domains.

    Uses :class:`otfs.reducers.WassersteinDiscriminantAnalysis` (needs POT's
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

    def _fit_adapt(self, Xs, ys, Xt):
        from otfs.reducers._wda import WassersteinDiscriminantAnalysis

        wda = WassersteinDiscriminantAnalysis(
            n_components=min(self.n_components, Xs.shape[1]), reg_lambda=self.reg_lambda,
            sinkhorn_iter=self.sinkhorn_iter, max_iter=self.max_iter, random_state=self.random_state,
            normalize=self.normalize, init=self.init,
        ).fit(Xs, ys)
        self.wda_ = wda
        return wda.transform(Xs), wda.transform(Xt)

    def _transform_source(self, X):
        return self.wda_.transform(X)

    _transform_target = _transform_source
