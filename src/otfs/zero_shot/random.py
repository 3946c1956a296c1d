"""``Random``: a random feature order.

One file of the zero-shot selectors' folder (:data:`otfs.zero_shot.ZERO_SHOT_SELECTORS`).
"""

import numpy as np

from otfs.zero_shot._semfs import register_zero_shot_selector


@register_zero_shot_selector("Random")
def _random(X, y, attributes, X_other, *, seed, **_):
    return np.random.default_rng(seed).permutation(X.shape[1])
