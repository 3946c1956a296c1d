# The boosting experiment's configuration handle and input functions (its rules: boosting.smk).

BOOSTING_CONFIG = config["boosting"]
BOOSTING_KEYS = (
    "methods",
    "repetitions",
    "counts",
    "max_source",
    "model",
    "ot_features",
    "ot_adapters",
)


def boosting_task(w):
    """The task named by the wildcard `task` (config boosting.tasks)."""
    return next(t for t in BOOSTING_CONFIG["tasks"] if t["name"] == w.task)


def boosting_runs(w=None):
    fs = BOOSTING_CONFIG["feature_set"]
    return [
        f"results/boosting/runs/{fs}/{p}/{t['name']}/{r}.tsv"
        for p in BOOSTING_CONFIG["pairs"]
        for t in BOOSTING_CONFIG["tasks"]
        for r in range(BOOSTING_CONFIG["repetitions"])
    ]
