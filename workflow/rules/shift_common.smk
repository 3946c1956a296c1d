# The shift data families' configuration handle and input functions (its rules: shift.smk).

SHIFT_CONFIG = config["shift"]

# A family's feature sets are configured ones: otfs_workflow.config.validate_config checks it
# when the workflow is parsed, before any rule is made.


# The families' feature sets, the leaderboard's rankers, and its adapters that apply to
# every one of them: rule run_family_pair runs these in its jobs of each (feature set, pair).
FAMILY_FEATURE_SETS = sorted(shift_family_feature_sets())
FAMILY_RANKERS = list(LEADERBOARD_CONFIG["rankers"])
FAMILY_ADAPTERS = P.common_adapters(FAMILY_FEATURE_SETS, LEADERBOARD_CONFIG["adapters"])


# The families' pair rules by name, each with its adapters, its share of the rankers and its feature sets
# (otfs_workflow.plan.Plan.family_pair_rules; config `shift.rankers_per_job`).
FAMILY_PAIR_RULES = P.family_pair_rules(
    FAMILY_FEATURE_SETS, FAMILY_RANKERS, LEADERBOARD_CONFIG["adapters"]
)


# A regression family's dataset is configured, and its name is not a classification family's:
# otfs_workflow.config.validate_config checks it.
SHIFT_REGRESSION = SHIFT_CONFIG.get("regression", {})


# The families' inputs and targets (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
shift_feature_sets, shift_families = P.shift_feature_sets, P.shift_families
regression_file, regression_families = P.regression_file, P.regression_families
regression_outputs, shift_verdict_inputs = P.regression_outputs, P.shift_verdict_inputs
shift_targets, shift_available_targets = P.shift_targets, P.shift_available_targets


def shift_report(name, ext):
    return report(
        f"{SHIFT_OUT}/{{family}}/{name}.{ext}",
        caption=f"../report/leaderboard_{name}.rst",
        category="Data families",
        subcategory="{family}",
    )


def shift_family_targets(family):
    """The input function of target shift_<family>: an error naming what is missing where no pair has data."""

    def targets(w):
        if not shift_feature_sets(family):
            names = SHIFT_CONFIG["families"][family]
            raise WorkflowError(
                f"shift_{family}: none of the feature sets {names} has data for a configured pair "
                f"(protocol.pairs: {config['protocol']['pairs']}); put the files of "
                f"data/manifests/shift.tsv in a mirror (OTFS_SHIFT_MIRROR) or data/local/shift/"
            )
        return shift_targets([family])

    return targets
