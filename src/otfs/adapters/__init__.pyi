from ._base import (
    ADAPTERS as ADAPTERS,
)
from ._base import (
    BaseAdapter as BaseAdapter,
)
from ._base import (
    get_adapter as get_adapter,
)
from ._base import (
    register_adapter as register_adapter,
)
from .coral import (
    CorrelationAlignment as CorrelationAlignment,
)
from .na import (
    NoAdaptation as NoAdaptation,
)
from .ot import (
    EMDAdapter as EMDAdapter,
)
from .ot2 import (
    SinkhornAdapter as SinkhornAdapter,
)
from .ot3 import (
    SinkhornLpl1Adapter as SinkhornLpl1Adapter,
)
from .sa import (
    PCASubspaceAlignment as PCASubspaceAlignment,
)
from .tca import (
    LinearTransferComponentAnalysis as LinearTransferComponentAnalysis,
)
from .wda import (
    WDAAdapter as WDAAdapter,
)
