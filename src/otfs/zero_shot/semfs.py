"""``SemFS``: semantic feature selection (Wang et al., Algorithm 1).

One file of the zero-shot selectors' folder (:data:`otfs.zero_shot.ZERO_SHOT_SELECTORS`).
"""


from otfs.zero_shot._semfs import SemanticFeatureSelector, register_zero_shot_selector


@register_zero_shot_selector("SemFS")
def _semfs(X, y, attributes, X_other, *, seed, alpha, gamma, max_iter, s_steps, **_):
    return SemanticFeatureSelector(alpha=alpha, gamma=gamma, max_iter=max_iter, s_steps=s_steps).fit(
        X, y, attributes).order_
