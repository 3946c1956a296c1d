"""``1nn``: the nearest neighbour in squared Euclidean distance (the paper's Table 5).

One file of the strategies' folder (:data:`otfs.sample_selection.STRATEGIES`).
"""

from otfs.sample_selection._base import STRATEGIES


@STRATEGIES.register("1nn")
def _nn_strategy(small, large, *, tie_break, emd_max_iter, rng):
    """The nearest neighbour in squared Euclidean distance (ties: the lowest index)."""
    from sklearn.metrics import pairwise_distances_argmin  # on use: the registry imports every strategy's file

    return pairwise_distances_argmin(small, large, metric="sqeuclidean")
