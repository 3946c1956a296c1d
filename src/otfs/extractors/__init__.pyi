from ._base import (
    EXTRACTORS as EXTRACTORS,
)
from ._base import (
    ExtractionError as ExtractionError,
)
from ._base import (
    Extractor as Extractor,
)
from ._base import (
    ImageError as ImageError,
)
from ._base import (
    ImageTransform as ImageTransform,
)
from ._base import (
    WeightsSource as WeightsSource,
)
from ._base import (
    extract_features as extract_features,
)
from ._base import (
    get_extractor as get_extractor,
)
from ._base import (
    load_image as load_image,
)
from ._base import (
    register_extractor as register_extractor,
)
