# The label-free recommendation (config `recommend`, docs/recommend.md): which ranker and how
# many features on a pair's unlabelled target (one job per feature set and pair, the library's
# otfs.k_selection.LabelFreeFeatureSelector), and its meta-evaluation on every task of the
# benchmark, family by family left out: one job per task summarizes the rows the choice of k
# computed (recommend_task), one job evaluates the summaries (recommend_evaluation).


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


rule recommend_pair:
    input:
        caches=pair_caches,
        policy=RECOMMEND_POLICY_FILE,
        code=script_code(
            "recommend_pair.py",
            rankers=RECOMMEND_RANKERS,
            adapters=[RECOMMEND_CONFIG["adapter"]],
        ),
    output:
        json=f"{RECOMMEND_OUT}/{{feature_set}}/{{pair}}/recommendation.json",
        md=f"{RECOMMEND_OUT}/{{feature_set}}/{{pair}}/recommendation.md",
        pdf=f"{RECOMMEND_OUT}/{{feature_set}}/{{pair}}/scores.pdf",
        png=report(
            f"{RECOMMEND_OUT}/{{feature_set}}/{{pair}}/scores.png",
            caption="../report/recommend_pair.rst",
            category="Label-free recommendation",
            subcategory="{feature_set}",
            labels={"feature set": "{feature_set}", "pair": "{pair}"},
        ),
    log:
        "logs/recommend/{feature_set}/{pair}.log",
    benchmark:
        "logs/benchmarks/recommend_pair/{feature_set}/{pair}.tsv"
    wildcard_constraints:
        feature_set="|".join(re.escape(fs) for fs in config["feature_sets"]),
        pair=r"[^/]+-[^/]+",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # One draw, measured 2026-11-28 (7 rankers, NA, 6 numbers of features, 2 splits, 6 scorers):
    # 3.9 s (heart), 4.8 s (SURF amazon-dslr), 12.6 s (Amazon 5,000 books-dvd), at most 760 MB;
    # the job runs one per draw (5), with 9 scorers: 32 s for wine red-white on 2026-12-03.
    resources:
        mem_mb=2048,
        runtime=20,
    params:
        selector=recommend_selector_params(),
        per_class=lambda w: pair_source_per_class(w.pair, w.feature_set),
        draws=grid_config(MODEL_SELECTION_CONFIG["grid"]).get("iterations")
        or len(ITERATIONS),
        evaluated=lambda w: recommend_evaluation_ready(),
    script:
        "../scripts/recommend_pair.py"


rule recommend_task:
    input:
        tables=lambda w: P.recommend_task_tables(w.feature_set, w.pair),
        caches=pair_caches,
        code=script_code("recommend_task.py"),
    output:
        summary="results/runs/{feature_set}/recommend/{pair}.parquet",
    log:
        "logs/recommend/tasks/{feature_set}/{pair}.log",
    benchmark:
        "logs/benchmarks/recommend_task/{feature_set}/{pair}.tsv"
    wildcard_constraints:
        feature_set="|".join(re.escape(fs) for fs in config["feature_sets"]),
        pair=r"[^/]+-[^/]+",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Every menu policy's pick on each of the task's runs, its data profile and its row-order check:
    # 4.2 s for Amazon 5,000 books-dvd (d = 5,000) beside another job on 2 cores (2026-12-06).
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        family=lambda w: recommend_evaluation_families()[w.feature_set],
        rankers=RECOMMEND_RANKERS,
        scorers=lambda w: recommend_selector_params()["scorers"],
        data_rules=RECOMMEND_DATA_RULES,
        # only the settings a task's summary reads: the evaluation's others rerun the gather alone
        reference=RECOMMEND_CONFIG["evaluation"]["reference"],
        relevance=RECOMMEND_CONFIG["evaluation"]["relevance"],
        permutations=RECOMMEND_CONFIG["evaluation"]["permutations"],
        # each family by the verdict's metric of it (balanced accuracy for the imbalanced ones)
        metrics=config["shift"]["primary_metrics"],
    script:
        "../scripts/recommend_task.py"


rule recommend_evaluation:
    input:
        summaries=lambda w: P.recommend_task_summaries(),
        code=script_code("recommend_evaluation.py"),
    output:
        csv=report(
            f"{RECOMMEND_OUT}/evaluation.csv",
            caption="../report/recommend_evaluation.rst",
            category="Label-free recommendation",
            subcategory="evaluation",
        ),
        md=f"{RECOMMEND_OUT}/evaluation.md",
        tasks=f"{RECOMMEND_OUT}/tasks.csv",
        pdf=f"{RECOMMEND_OUT}/evaluation.pdf",
        png=report(
            f"{RECOMMEND_OUT}/evaluation.png",
            caption="../report/recommend_evaluation.rst",
            category="Label-free recommendation",
            subcategory="evaluation",
        ),
        signals=f"{RECOMMEND_OUT}/signals.csv",
        signals_pdf=f"{RECOMMEND_OUT}/signals.pdf",
        signals_png=report(
            f"{RECOMMEND_OUT}/signals.png",
            caption="../report/recommend_signals.rst",
            category="Label-free recommendation",
            subcategory="evaluation",
        ),
        policy=f"{RECOMMEND_OUT}/policy.json",
        provenance=f"{RECOMMEND_OUT}/provenance.json",
        # the evaluation at a glance, for the report's landing page (workflow/report/workflow.rst)
        glance=report(
            f"{RECOMMEND_OUT}/evaluation_glance.rst",
            caption="../report/glance.rst",
            category="At a glance",
        ),
    log:
        "logs/recommend/evaluation.log",
    benchmark:
        "logs/benchmarks/recommend_evaluation/evaluation.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # On 84 task summaries of the shipped plan's tasks, cloned from a real one with both adapters on
    # every task, in one process on one core (2026-12-06): 14.2 s, 294 MB at most (the whole
    # evaluation in one job, the policies' picks included, took 107 s for 82 tasks on 2026-12-03).
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        families=lambda w: recommend_evaluation_families(),
        rankers=RECOMMEND_RANKERS,
        scorers=lambda w: recommend_selector_params()["scorers"],
        data_rules=RECOMMEND_DATA_RULES,
        evaluation=RECOMMEND_CONFIG["evaluation"],
    script:
        "../scripts/recommend_evaluation.py"


# --- targets -------------------------------------------------------------------
# Summaries of finished rows, seconds each (a task 2-9 s and at most 604 MB, 2026-12-06): run by
# Snakemake itself on a cluster, like the aggregations, not submitted one by one.
localrules:
    recommend_task,
    recommend_evaluation,


rule recommend:
    input:
        lambda w: recommend_pair_outputs("md"),
        lambda w: (
            rules.recommend_evaluation.output if recommend_evaluation_ready() else []
        ),
