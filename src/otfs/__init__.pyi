from . import (
    adapters as adapters,
)
from . import (
    datasets as datasets,
)
from . import (
    domain_classifiers as domain_classifiers,
)
from . import (
    extractors as extractors,
)
from . import (
    k_selection as k_selection,
)
from . import (
    rankers as rankers,
)
from . import (
    reducers as reducers,
)
from . import (
    sample_selection as sample_selection,
)
from . import (
    zero_shot as zero_shot,
)
from .adapters import (
    ADAPTERS as ADAPTERS,
)
from .adapters import (
    get_adapter as get_adapter,
)
from .adapters import (
    register_adapter as register_adapter,
)
from .base import (
    BaseFeatureRanker as BaseFeatureRanker,
)
from .base import (
    TwoDomainRanker as TwoDomainRanker,
)
from .classification import (
    accuracy_curve as accuracy_curve,
)
from .classification import (
    one_nn_accuracy as one_nn_accuracy,
)
from .k_selection import (
    LabelFreeFeatureSelector as LabelFreeFeatureSelector,
)
from .rankers import (
    OTFeatureRanker as OTFeatureRanker,
)
from .rankers import (
    feature_orders as feature_orders,
)
from .rankers import (
    rank_features as rank_features,
)
from .sample_selection import (
    select_samples as select_samples,
)
