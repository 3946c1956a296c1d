"""``OT ranking``: the paper's Algorithm 2 between the seen classes of two domains.

One file of the zero-shot selectors' folder (:data:`otfs.zero_shot.ZERO_SHOT_SELECTORS`).
"""


from otfs.zero_shot._semfs import register_zero_shot_selector


@register_zero_shot_selector("OT ranking")
def _ot_ranking(X, y, attributes, X_other, *, seed, ot_ranking, **_):
    from otfs.rankers._base import OTFeatureRanker

    return OTFeatureRanker(**ot_ranking, random_state=seed % (2**31)).fit(X_other, X_target=X).order_
