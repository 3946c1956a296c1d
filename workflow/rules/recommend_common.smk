# The label-free recommendation: its configuration handle and input functions (its rules: recommend.smk).

RECOMMEND_CONFIG = config["recommend"]
# The candidate rankers: those whose choice-of-k rows the evaluation reads.
RECOMMEND_RANKERS = P.recommend_rankers
# The label-free k rules that read the data, not a scorer's candidates (the menu's fixed k rules beside the scorers').
RECOMMEND_DATA_RULES = P.k_rules_of_kind("data")
# The shipped policy the per-pair recommendations apply (policy "learned"): data the jobs read.
RECOMMEND_POLICY_FILE = "src/otfs/k_selection/label_free_policy.json"
# Its inputs, targets and parameters (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
recommend_pair_outputs = P.recommend_pair_outputs
recommend_evaluation_families = P.recommend_evaluation_families
recommend_evaluation_ready = P.recommend_evaluation_ready
recommend_selector_params = P.recommend_selector_params
