"""``ot``: the paper's ranking, Algorithms 1 and 2 (:class:`otfs.rankers.OTFeatureRanker`), and the two
variants of its Table 5: ``ot-1nn`` and ``ot-random`` pair the samples of Algorithm 1 by 1-NN and at random.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`).
"""

from functools import partial

from otfs.rankers._base import FEATURE_RANKERS, OTFeatureRanker

FEATURE_RANKERS.register("ot", OTFeatureRanker)
FEATURE_RANKERS.register("ot-1nn", partial(OTFeatureRanker, selection="1nn"))
FEATURE_RANKERS.register("ot-random", partial(OTFeatureRanker, selection="random"))
