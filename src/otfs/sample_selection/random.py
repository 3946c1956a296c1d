"""``random``: samples drawn at random (the paper's Table 5).

One file of the strategies' folder (:data:`otfs.sample_selection.STRATEGIES`).
"""

from otfs.sample_selection._base import STRATEGIES


@STRATEGIES.register("random")
def _random_strategy(small, large, *, tie_break, emd_max_iter, rng):
    """``len(small)`` rows of ``large`` drawn without replacement.

    Not sorted: the domains are stored class by class, and sorted picks would
    pair samples of the same class, leaking label information.
    """
    return rng.choice(large.shape[0], size=small.shape[0], replace=False)
