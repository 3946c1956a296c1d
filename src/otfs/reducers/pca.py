"""``PCA``: principal component analysis (scikit-learn).

One file of the reducers' folder (:data:`otfs.reducers.REDUCERS`).
"""

from otfs.reducers._base import register_reducer


@register_reducer("PCA")
def _pca(p, n_classes, seed, **params):
    from sklearn.decomposition import PCA

    return PCA(n_components=p, svd_solver="full", **params)
