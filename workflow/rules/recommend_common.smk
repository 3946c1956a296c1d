# The label-free recommendation: its configuration handle and input functions (its rules: recommend.smk).

RECOMMEND_CONFIG = config["recommend"]
RECOMMEND_OUT = "results/recommend"
# The candidate rankers: those whose choice-of-k rows the evaluation reads.
RECOMMEND_RANKERS = list(
    RECOMMEND_CONFIG["rankers"] or MODEL_SELECTION_CONFIG["rankers"]
)
# The label-free k rules that read the data, not a scorer's candidates (the menu's fixed k rules beside the scorers').
RECOMMEND_DATA_RULES = [
    n for n in MODEL_SELECTION_CONFIG["rules"] if k_selection_kind(n) == "data"
]
# The shipped policy the per-pair recommendations apply (policy "learned"): data the jobs read.
RECOMMEND_POLICY_FILE = "src/otfs/k_selection/label_free_policy.json"


def recommend_feature_sets():
    """The feature sets of target `recommend` that have data for a pair (the `available` scope)."""
    names = RECOMMEND_CONFIG["feature_sets"] or MODEL_SELECTION_CONFIG["feature_sets"]
    return target_feature_sets("available", names)


def recommend_pair_outputs(ext):
    """Every pair's recommendation file of target `recommend`."""
    return [
        f"{RECOMMEND_OUT}/{fs}/{p}/recommendation.{ext}"
        for fs in recommend_feature_sets()
        for p in scope_pairs(fs, scope_for("available", fs))
    ]


def recommend_evaluation_families():
    """{feature set: family} of every task the evaluation reads: each feature set of `model_selection` is a
    family of its own (the images), and the data families' feature sets are theirs."""
    out = {fs: fs for fs in model_selection_feature_sets()}
    for family in shift_families():
        out.update({fs: family for fs in shift_feature_sets(family)})
    return out


def recommend_task_summaries(w=None):
    """The summary of every task of the evaluation (rule recommend_task)."""
    return [
        f"results/runs/{fs}/recommend/{p}.parquet"
        for fs in recommend_evaluation_families()
        for p in scope_pairs(fs, scope_for("available", fs))
    ]


def recommend_task_tables(w):
    """The choice of k's tables of every candidate ranker on the task (w.feature_set, w.pair)."""
    return [
        f"results/runs/{w.feature_set}/model_selection/{r}/{MODEL_SELECTION_CONFIG['grid']}/{w.pair}.tsv"
        for r in RECOMMEND_RANKERS
    ]


def recommend_evaluation_ready():
    """Whether the evaluation has what it needs: the choice of k's rows of three families or more (a nested
    leave one family out). A configuration of a user's own data alone has none of the benchmark's.
    """
    families = recommend_evaluation_families()
    present = {
        families[fs] for fs in families if scope_pairs(fs, scope_for("available", fs))
    }
    return len(present) >= 3


def recommend_selector_params(w=None):
    """The library selector's parameters of a per-pair recommendation (otfs.k_selection._label_free)."""
    return {
        "rankers": RECOMMEND_RANKERS,
        "adapter": RECOMMEND_CONFIG["adapter"],
        "n_features_grid": list(
            grid_config(MODEL_SELECTION_CONFIG["grid"])["feature_counts"]
        ),
        "policy": RECOMMEND_CONFIG["policy"],
        "classifier": MODEL_SELECTION_CONFIG["classifier"],
        "n_splits": MODEL_SELECTION_CONFIG["cv"]["n_splits"],
        "test_size": MODEL_SELECTION_CONFIG["cv"]["test_size"],
        "scorers": [
            n
            for n in MODEL_SELECTION_CONFIG["rules"]
            if k_selection_kind(n) == "scorer"
        ],
    }
