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
    decode_proba as decode_proba,
)
from ._base import (
    encode_proba as encode_proba,
)
from ._base import (
    get_rule as get_rule,
)
from ._base import (
    score_adapted as score_adapted,
)
from ._base import (
    with_ensemble_scores as with_ensemble_scores,
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
    data_profile as data_profile,
)
from ._label_free import (
    fixed_policy as fixed_policy,
)
from ._label_free import (
    learned_policy as learned_policy,
)
from ._label_free import (
    most_similar_family as most_similar_family,
)
from ._label_free import (
    read_policy_file as read_policy_file,
)
from ._label_free import (
    resolve_grid as resolve_grid,
)
from ._policy_learning import (
    PolicyRuns as PolicyRuns,
)
from ._policy_learning import (
    candidate_runs as candidate_runs,
)
from ._policy_learning import (
    evaluate_policies as evaluate_policies,
)
from ._policy_learning import (
    fixed_policy_names as fixed_policy_names,
)
from ._policy_learning import (
    learn_policy as learn_policy,
)
from ._policy_learning import (
    learn_switch as learn_switch,
)
from ._policy_learning import (
    leave_one_family_out as leave_one_family_out,
)
from ._policy_learning import (
    nested_family_out as nested_family_out,
)
from ._policy_learning import (
    policy_menu as policy_menu,
)
from ._policy_learning import (
    policy_procedures as policy_procedures,
)
from ._policy_learning import (
    switch_policy as switch_policy,
)
