from ._semfs import (
    ZERO_SHOT_SELECTORS as ZERO_SHOT_SELECTORS,
)
from ._semfs import (
    LassoSelector as LassoSelector,
)
from ._semfs import (
    SemanticFeatureSelector as SemanticFeatureSelector,
)
from ._semfs import (
    SpectralSelector as SpectralSelector,
)
from ._semfs import (
    class_attribute_matrix as class_attribute_matrix,
)
from ._semfs import (
    register_zero_shot_selector as register_zero_shot_selector,
)
