from ._base import (
    SELECTION_RULES as SELECTION_RULES,
)
from ._base import (
    DataRule as DataRule,
)
from ._base import (
    OracleRule as OracleRule,
)
from ._base import (
    ScorerRule as ScorerRule,
)
from ._base import (
    SelectionRule as SelectionRule,
)
from ._base import (
    choose_k as choose_k,
)
from ._base import (
    get_rule as get_rule,
)
