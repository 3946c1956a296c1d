# The paper's tables and figures, and what each needs. Two target sets:
#   results/paper/...      every configured domain (`all`, and the named rules)
#   results/available/...  the domains whose files are present (`available`)

TARGETS_CONFIG = config["targets"]
# What each target reads and builds (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
shift_family_feature_sets = P.shift_family_feature_sets
ranking_iterations, batched_pairs = P.ranking_iterations, P.batched_pairs
batched_feature_sets, pair_batched_rankings = (
    P.batched_feature_sets,
    P.pair_batched_rankings,
)
model_selection_rankers = P.model_selection_rankers
per_fs_sets, multi_fs_sets, target_files = (
    P.per_fs_sets,
    P.multi_fs_sets,
    P.target_files,
)
all_target_files, target_aggregates = P.all_target_files, P.target_aggregates

feature_tables, comparison_files = P.feature_tables, P.comparison_files


# The table and figure rules' outputs, the report's ones flagged (Plan.table_outputs, curve_outputs).
table_outputs, curve_outputs = P.table_outputs, P.curve_outputs
# What the report's captions say of a feature set and of the run: computed by the plan from the
# configuration (a user's dataset is described as what it is), and given to the rules as params, so a
# caption never reads a key that does not exist; the run's protocol with the packages' versions.
fs_title, fs_about = P.fs_title, P.fs_about
run_caption = functools.partial(P.run_caption, versions=VERSIONS)
staged_files = P.staged_files
# What `all` (target set paper) or `available` builds, but its data notes (Plan.main_target_files): the
# paper's set with the related experiments' target rules' files.
main_target_files = functools.partial(
    P.main_target_files,
    related=lambda: [
        f for name in RELATED_EXPERIMENTS for f in getattr(rules, name).input
    ],
)
