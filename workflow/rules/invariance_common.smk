# The invariance experiment's configuration handle (its rules: invariance.smk).

INVARIANCE_CONFIG = config["invariance"]
# Its runs and the keys its jobs depend on: otfs_workflow.plan.Plan.related_runs and related_params.
