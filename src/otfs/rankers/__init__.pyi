from ._base import (
    FEATURE_RANKERS as FEATURE_RANKERS,
)
from ._base import (
    ORDERS as ORDERS,
)
from ._base import (
    FeatureRanking as FeatureRanking,
)
from ._base import (
    OTFeatureRanker as OTFeatureRanker,
)
from ._base import (
    feature_coupling_diagonal as feature_coupling_diagonal,
)
from ._base import (
    feature_orders as feature_orders,
)
from ._base import (
    rank_features as rank_features,
)
from ._relevant_invariant import (
    RelevantInvariantSelector as RelevantInvariantSelector,
)
