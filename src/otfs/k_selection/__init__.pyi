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
from ._base import (
    score_adapted as score_adapted,
)
from ._label_free import (
    ALL_FEATURES as ALL_FEATURES,
)
from ._label_free import (
    LabelFreeFeatureSelector as LabelFreeFeatureSelector,
)
from ._label_free import (
    check_policy as check_policy,
)
from ._label_free import (
    choose_candidate as choose_candidate,
)
from ._label_free import (
    fixed_policy as fixed_policy,
)
from ._label_free import (
    learned_policy as learned_policy,
)
from ._label_free import (
    read_policy_file as read_policy_file,
)
from ._label_free import (
    resolve_grid as resolve_grid,
)
