# The label-free choice of k: its configuration handle and input functions (its rules: model_selection.smk).

MODEL_SELECTION_CONFIG = config["model_selection"]
MODEL_SELECTION_OUT = "results/model_selection"
# The rankers whose choice-of-k rows a target reads (targets.smk).
MODEL_SELECTION_RANKERS = model_selection_rankers()


def model_selection_feature_sets():
    """The feature sets of `model_selection` that have data for a pair (the `available` scope)."""
    return target_feature_sets("available", MODEL_SELECTION_CONFIG["feature_sets"])


def model_selection_pair_tables(w=None):
    return [
        f"results/runs/{fs}/model_selection/{r}/{MODEL_SELECTION_CONFIG['grid']}/{p}.tsv"
        for fs in model_selection_feature_sets()
        for r in MODEL_SELECTION_CONFIG["rankers"]
        for p in scope_pairs(fs, scope_for("available", fs))
    ]


def model_selection_job_params(grid=None, prefix=""):
    """The params of a job that scores the choice of k of one (feature set, ranker, pair) on one grid:
    the job's {grid} wildcard (rule score_model_selection), or ``grid`` (run_family_pair's, named with
    ``prefix``).
    """

    def adapters(w):
        return applicable_adapters(w.feature_set, MODEL_SELECTION_CONFIG["adapters"])

    def of(w):
        return grid_config(w.grid if grid is None else grid)

    return {
        f"{prefix}adapters": adapters,
        f"{prefix}adapter_params": lambda w: [adapter_params(a) for a in adapters(w)],
        f"{prefix}rules": MODEL_SELECTION_CONFIG["rules"],
        f"{prefix}classifier": MODEL_SELECTION_CONFIG["classifier"],
        f"{prefix}second_classifier": MODEL_SELECTION_CONFIG.get("second_classifier"),
        f"{prefix}cv": MODEL_SELECTION_CONFIG["cv"],
        f"{prefix}feature_counts": lambda w: of(w)["feature_counts"],
        f"{prefix}iterations": lambda w: of(w).get("iterations"),
    }


def model_selection_report(name, ext, caption):
    return report(
        f"{MODEL_SELECTION_OUT}/{name}.{ext}",
        caption=f"../report/model_selection_{caption}.rst",
        category="Number of features without target labels",
    )
