"""``WDA``: Wasserstein Discriminant Analysis (:class:`otfs.wda.WassersteinDiscriminantAnalysis`).

One file of the reducers' folder (:data:`otfs.dimred.REDUCERS`).
"""

from ..dimred import register_reducer


@register_reducer("WDA")
def _wda(p, n_classes, seed, **params):
    from ..wda import WassersteinDiscriminantAnalysis

    return WassersteinDiscriminantAnalysis(n_components=p, random_state=seed, **params)
