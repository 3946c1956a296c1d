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


# --- output helpers of the table and figure rules -----------------------------
def fs_section(stem, section):
    """The report's category of an output: the paper's ``section``, but for a per-feature-set output of a
    feature set that is not of the paper's dataset (a user's), a category of that feature set's own.
    """
    if "{feature_set}" not in stem:
        return section

    def category(wildcards):
        fs = wildcards.feature_set
        paper = {
            fs_config(f)["dataset"]
            for f in PAPER_FEATURE_SETS
            if f in config["feature_sets"]
        }
        dataset = fs_config(fs)["dataset"]
        return section if dataset in paper else f"Feature set {fs} (dataset {dataset})"

    return category


def table_outputs(stem, caption, section, subcategory):
    section = fs_section(stem, section)
    return {
        "csv": report(
            f"{stem}.csv", caption=caption, category=section, subcategory=subcategory
        ),
        "tex": f"{stem}.tex",
        "md": f"{stem}.md",
        "comparison": report(
            f"{stem}.comparison.csv",
            caption="../report/comparison.rst",
            category=section,
            subcategory=subcategory,
        ),
    }


# What the report's captions say of a feature set and of the run: computed by the plan from the
# configuration (a user's dataset is described as what it is), and given to the rules as params, so a
# caption never reads a key that does not exist.
fs_title, fs_about = P.fs_title, P.fs_about


def run_caption(feature_sets=None):
    """The run's protocol for the captions (Plan.run_caption), with the packages' versions."""
    return P.run_caption(feature_sets, VERSIONS)


def curve_outputs(stem, caption, section, subcategory):
    section = fs_section(stem, section)
    return {
        "pdf": f"{stem}.pdf",
        "png": report(
            f"{stem}.png", caption=caption, category=section, subcategory=subcategory
        ),
        "csv": f"{stem}.csv",
    }


staged_files = P.staged_files


def main_target_files(target_set):
    """What `all` (target set paper) or `available` builds, but its data notes."""
    files = [
        *all_target_files(target_set),
        *feature_tables(target_set),
        f"results/{target_set}/comparison/summary.csv",
        f"results/{target_set}/results_long.tsv",
        *[f for files in CLINICAL_TARGETS.values() for f in files],
    ]
    if target_set == "paper":
        files += [f for name in RELATED_EXPERIMENTS for f in getattr(rules, name).input]
    else:  # the data families whose files are present (none without them), and their verdict
        files += shift_available_targets()
    return files
