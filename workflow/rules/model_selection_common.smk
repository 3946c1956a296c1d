# The label-free choice of k: its configuration handle and input functions (its rules: model_selection.smk).

MODEL_SELECTION_CONFIG = config["model_selection"]
MODEL_SELECTION_OUT = "results/model_selection"
# The rankers whose choice-of-k rows a target reads (targets.smk).
MODEL_SELECTION_RANKERS = model_selection_rankers()


# Its inputs and job parameters (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
model_selection_feature_sets = P.model_selection_feature_sets
model_selection_job_params = P.model_selection_job_params


def model_selection_report(name, ext, caption):
    return report(
        f"{MODEL_SELECTION_OUT}/{name}.{ext}",
        caption=f"../report/model_selection_{caption}.rst",
        category="Number of features without target labels",
    )
