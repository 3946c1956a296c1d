# The invariance experiment's configuration handle and input functions (its rules: invariance.smk).

INVARIANCE_CONFIG = config["invariance"]
INVARIANCE_KEYS = (
    "iterations",
    "n_features",
    "target_per_class",
    "reg",
    "output_kernel",
    "pop_size",
    "n_gen",
)


def invariance_runs(w=None):
    fs = INVARIANCE_CONFIG["feature_set"]
    return [f"results/invariance/runs/{fs}/{p}.json" for p in fs_pairs(fs)]
