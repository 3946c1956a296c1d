from ._base import (
    STRATEGIES as STRATEGIES,
)
from ._base import (
    TIE_BREAKS as TIE_BREAKS,
)
from ._base import (
    SampleMatching as SampleMatching,
)
from ._base import (
    select_samples as select_samples,
)
