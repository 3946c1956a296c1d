# The label-free choice of k: its configuration handle and input functions (its rules: model_selection.smk).

MODEL_SELECTION_CONFIG = config["model_selection"]
MODEL_SELECTION_OUT = "results/model_selection"


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


def model_selection_report(name, ext, caption):
    return report(
        f"{MODEL_SELECTION_OUT}/{name}.{ext}",
        caption=f"../report/model_selection_{caption}.rst",
        category="Number of features without target labels",
    )
