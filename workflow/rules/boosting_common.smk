# The boosting experiment's configuration handle (its rules: boosting.smk).

BOOSTING_CONFIG = config["boosting"]
# Its runs and the keys its jobs depend on: otfs_workflow.plan.Plan.related_runs and related_params.
