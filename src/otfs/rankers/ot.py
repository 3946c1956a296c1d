"""``ot``: the paper's ranking, Algorithms 1 and 2 (:class:`otfs.ranking.OTFeatureRanker`).

One file of the feature rankers' folder (:data:`otfs.ranking.FEATURE_RANKERS`).
"""

from ..ranking import FEATURE_RANKERS, OTFeatureRanker

FEATURE_RANKERS.register("ot", OTFeatureRanker)
