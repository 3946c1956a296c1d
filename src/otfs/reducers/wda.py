"""``WDA``: Wasserstein Discriminant Analysis (:class:`otfs.reducers.WassersteinDiscriminantAnalysis`).

One file of the reducers' folder (:data:`otfs.reducers.REDUCERS`).
"""

from otfs.reducers._base import register_reducer


@register_reducer("WDA")
def _wda(p, n_classes, seed, **params):
    from otfs.reducers._wda import WassersteinDiscriminantAnalysis

    return WassersteinDiscriminantAnalysis(n_components=p, random_state=seed, **params)
