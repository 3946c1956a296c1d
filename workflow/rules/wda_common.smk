# The wda experiment's configuration handle and input functions (its rules: wda.smk).

WDA_CONFIG = config["wda"]
# Its inputs and job parameters (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
wda_eval_cfg = P.wda_eval_cfg
WDA_ABLATION_DATASETS, _WDA_ABLATION_NOTES = P.wda_ablation_datasets()
print_notes(_WDA_ABLATION_NOTES)
WDA_OFFICE_FS = WDA_CONFIG["office"]["feature_set"]
