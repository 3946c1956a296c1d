"""``LASSO``: a multi-output LASSO on the seen labels.

One file of the zero-shot selectors' folder (:data:`otfs.zero_shot.ZERO_SHOT_SELECTORS`).
"""


from otfs.zero_shot._semfs import LassoSelector, register_zero_shot_selector


@register_zero_shot_selector("LASSO")
def _lasso(X, y, attributes, X_other, *, seed, lasso_alpha, **_):
    return LassoSelector(alpha=lasso_alpha).fit(X, y).order_
