# The semfs experiment's configuration handle and input functions (its rules: semfs.smk).

SEMFS_CONFIG = config["semfs"]
SEMFS_KEYS = (
    "methods",
    "n_unseen",
    "counts",
    "restarts",
    "alpha",
    "gamma",
    "max_iter",
    "s_steps",
    "lasso_alpha",
    "spectral",
    "ot_ranking",
)


def semfs_runs(w=None):
    return [
        f"results/semfs/runs/{SEMFS_CONFIG['feature_set']}/{p}/{s}.tsv"
        for p in SEMFS_CONFIG["pairs"]
        for s in range(SEMFS_CONFIG["splits"])
    ]
