"""``SemFS/c``: SemFS without the center-characteristic loss (alpha = 0).

One file of the zero-shot selectors' folder (:data:`otfs.zero_shot.ZERO_SHOT_SELECTORS`).
"""


from otfs.zero_shot._semfs import SemanticFeatureSelector, register_zero_shot_selector


@register_zero_shot_selector("SemFS/c")
def _semfs_c(X, y, attributes, X_other, *, seed, gamma, max_iter, s_steps, **_):
    return SemanticFeatureSelector(alpha=0.0, gamma=gamma, max_iter=max_iter, s_steps=s_steps).fit(
        X, y, attributes).order_
