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
