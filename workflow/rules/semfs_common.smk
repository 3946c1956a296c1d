# The semfs experiment's configuration handle (its rules: semfs.smk).

SEMFS_CONFIG = config["semfs"]
# Its runs and the keys its jobs depend on: otfs_workflow.plan.Plan.related_runs and related_params.
