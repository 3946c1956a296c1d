from ._base import (
    REDUCERS as REDUCERS,
)
from ._base import (
    max_components as max_components,
)
from ._base import (
    register_reducer as register_reducer,
)
from ._wda import (
    WassersteinDiscriminantAnalysis as WassersteinDiscriminantAnalysis,
)
from .lmnn import (
    LargeMarginNearestNeighbor as LargeMarginNearestNeighbor,
)
