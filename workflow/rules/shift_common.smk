# The shift data families' configuration handle and input functions (its rules: shift.smk).

SHIFT_CONFIG = config["shift"]
SHIFT_OUT = "results/shift"

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


def regression_file(family):
    """Where the pipeline acquires a regression family's file."""
    cfg = SHIFT_REGRESSION[family]
    return f"data/raw/{cfg['dataset']}/{cfg['file']}"


def regression_present(family):
    """Whether a regression family's file is acquired or in a searched folder (local folder, mirrors)."""
    cfg = SHIFT_REGRESSION[family]
    folders = [
        f
        for _, f in sources_for(
            cfg["dataset"], config["datasets"][cfg["dataset"]], None
        ).folders()
    ]
    return Path(regression_file(family)).is_file() or any(
        (f / cfg["file"]).is_file() for f in folders
    )


def regression_families():
    return [f for f in SHIFT_REGRESSION if regression_present(f)]


def regression_outputs(family):
    return [
        f"{SHIFT_OUT}/{family}/{r}/results_long.parquet"
        for r in SHIFT_REGRESSION[family]["responses"]
    ]


def shift_feature_sets(family):
    """The feature sets of ``family`` that have data for a pair (the `available` scope)."""
    return target_feature_sets("available", SHIFT_CONFIG["families"][family])


def shift_families():
    """The families with data for at least one pair: what `shift` and `available` build."""
    return [f for f in SHIFT_CONFIG["families"] if shift_feature_sets(f)]


def shift_aggregates(w):
    return [
        f"{agg('available', fs, ranker=r, adapter=a, grid=SHIFT_CONFIG['grid'])}/long.tsv"
        for fs in shift_feature_sets(w.family)
        for r in LEADERBOARD_CONFIG["rankers"]
        for a in applicable_adapters(fs, LEADERBOARD_CONFIG["adapters"])
    ]


def shift_rankings(w):
    return [
        f"results/runs/{fs}/ranking/{r}/{p}.json"
        for fs in shift_feature_sets(w.family)
        for r in LEADERBOARD_CONFIG["rankers"]
        for p in scope_pairs(fs, scope_for("available", fs))
    ]


def shift_k_selection_tables(w):
    """The label-free choice of k's per-pair tables of a family (config `model_selection`'s rules)."""
    return [
        f"results/runs/{fs}/model_selection/{r}/{MODEL_SELECTION_CONFIG['grid']}/{p}.tsv"
        for fs in shift_feature_sets(w.family)
        for r in MODEL_SELECTION_CONFIG["rankers"]
        for p in scope_pairs(fs, scope_for("available", fs))
    ]


def shift_verdict_inputs(kind):
    """Every family's leaderboard Parquet (kind "leaderboard") or k-selection choices ("k_selection")."""

    def inputs(w):
        if kind == "leaderboard":
            return [
                f"{SHIFT_OUT}/{f}/results_long.parquet" for f in shift_families()
            ] + [p for f in regression_families() for p in regression_outputs(f)]
        return [
            f"{SHIFT_OUT}/{f}/k_selection/choices.parquet" for f in shift_families()
        ]

    return inputs


def shift_report(name, ext):
    return report(
        f"{SHIFT_OUT}/{{family}}/{name}.{ext}",
        caption=f"../report/leaderboard_{name}.rst",
        category="Data families",
        subcategory="{family}",
    )


def shift_targets(families):
    return [
        f"{SHIFT_OUT}/{f}/{name}"
        for f in families
        for name in ("table.csv", "ranks.csv", "versus.csv", "k_selection/table.csv")
    ]


def shift_available_targets():
    """What `available` and `shift` build: every family with data, and the verdict over them (none without)."""
    families = shift_families()
    regression = [p for f in regression_families() for p in regression_outputs(f)]
    verdict = ["results/leaderboard/verdict.md"] if families or regression else []
    return shift_targets(families) + regression + verdict


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
