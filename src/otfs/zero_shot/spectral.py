"""``Spectral``: an MCFS-like spectral selector.

One file of the zero-shot selectors' folder (:data:`otfs.zero_shot.ZERO_SHOT_SELECTORS`).
"""

import numpy as np

from otfs.zero_shot._semfs import SpectralSelector, register_zero_shot_selector


@register_zero_shot_selector("Spectral")
def _spectral(X, y, attributes, X_other, *, seed, spectral, **_):
    return SpectralSelector(n_clusters=int(np.unique(y).size), **spectral, random_state=seed % (2**31)).fit(X).order_
