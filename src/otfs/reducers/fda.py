"""``FDA``: Fisher's discriminant analysis with a shrunk within-class covariance (scikit-learn).

One file of the reducers' folder (:data:`otfs.reducers.REDUCERS`).
"""

from otfs.reducers._base import register_reducer


@register_reducer("FDA")
def _fda(p, n_classes, seed, **params):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    # shrinkage: the within-class covariance is singular with 100 noise features
    params = {"solver": "eigen", "shrinkage": "auto", **params}
    return LinearDiscriminantAnalysis(n_components=min(p, n_classes - 1), **params)
