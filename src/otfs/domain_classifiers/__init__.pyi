from ._boosting import (
    DOMAIN_CLASSIFIERS as DOMAIN_CLASSIFIERS,
)
from ._boosting import (
    BoostedTree as BoostedTree,
)
from ._boosting import (
    DomainAdaptationBoosting as DomainAdaptationBoosting,
)
from ._boosting import (
    register_domain_classifier as register_domain_classifier,
)
