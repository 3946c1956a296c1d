# Label-free choice of the number of features (config `model_selection`): for
# every (ranker, adapter, pair, iteration) each selection rule picks k* from the
# grid's numbers of features without the target labels (skada's scorers, a
# shift test with a false-discovery guard), against the oracle's k and all
# features. One job per (feature set, ranker, pair) scores every adapter,
# iteration and k; one job compares the rules.


MODEL_SELECTION_CONFIG = config["model_selection"]
MODEL_SELECTION_OUT = "results/model_selection"
model_selection_report = reporter(
    MODEL_SELECTION_OUT, "Number of features without target labels", "model_selection_"
)
# The rankers whose choice-of-k rows a target reads (targets.smk).
MODEL_SELECTION_RANKERS = model_selection_rankers()


# Its inputs and job parameters (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
model_selection_feature_sets = P.model_selection_feature_sets
model_selection_job_params = P.model_selection_job_params


# The rows of all d features of one (feature set, pair), every adapter and iteration:
# with all the features a ranker's order only permutes the columns, so the point
# (adaptation, 1-NN accuracy, scores, the data rules' choices) is computed once, on
# the data's order, for every ranker.
rule score_model_selection_all_features:
    input:
        caches=pair_caches,
        code=script_code(
            "model_selection_all_features.py",
            adapters=MODEL_SELECTION_CONFIG["adapters"],
        ),
    output:
        tsv="results/runs/{feature_set}/all_features/{grid}/{pair}.model_selection.tsv",
    log:
        "logs/model_selection/{feature_set}/all_features/{grid}/{pair}.log",
    benchmark:
        "logs/benchmarks/score_model_selection_all_features/{feature_set}/{grid}/{pair}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=6,
    params:
        **model_selection_job_params(),
        ranked=lambda w: ITERATIONS[: grid_config(w.grid).get("iterations")],
        per_class=lambda w: pair_source_per_class(w.pair, w.feature_set),
    script:
        "../scripts/model_selection_all_features.py"


rule score_model_selection:
    input:
        caches=pair_caches,
        ranking="results/runs/{feature_set}/ranking/{ranker}/{pair}.json",
        ends="results/runs/{feature_set}/all_features/{grid}/{pair}.model_selection.tsv",
        code=script_code(
            "model_selection_pair.py", adapters=MODEL_SELECTION_CONFIG["adapters"]
        ),
    output:
        tsv="results/runs/{feature_set}/model_selection/{ranker}/{grid}/{pair}.tsv",
    log:
        "logs/model_selection/{feature_set}/{ranker}/{grid}/{pair}.log",
    benchmark:
        "logs/benchmarks/score_model_selection/{feature_set}/{ranker}/{grid}/{pair}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured (NA and OT3, 5 iterations, 6 numbers of features, 2 splits, two jobs
    # at a time on 2 cores): median 36 s on SURF, 40 s on USPS <-> MNIST, at most
    # 105 s and 384 MB.
    resources:
        mem_mb=1024,
        runtime=6,
    params:
        **model_selection_job_params(),
    script:
        "../scripts/model_selection_pair.py"


# The label-free scores of one ranker on every pair of a feature set with data
# (batched_pairs), one job per (feature set, ranker), or per (feature set, ranker, share of
# the pairs) where config `model_selection.pairs_per_job` names the feature set
# (otfs_workflow.plan.Plan.pair_shares): what score_model_selection writes for each pair, by
# the same code with the same parameters. Why: such a job took 12.3 s for one pair (median,
# 2026-11-27), 2.3 s of it the imports, and the default choice of k had 182. Traded: a pair
# that gains its data later reruns its feature set's scores of every ranker; a pair asked for
# outside those is score_model_selection's.
for _fs, _part, _pairs in P.score_pair_rules():
    _rule = f"score_pairs_{rule_name_part(_fs)}{_part}"

    rule:
        name:
            _rule
        input:
            caches=[f"data/cache/{_fs}/{d}.h5" for d in pairs_domains(_pairs)],
            ranking=expand(
                "results/runs/{{feature_set}}/ranking/{{ranker}}/{pair}.json",
                pair=_pairs,
            ),
            ends=expand(
                "results/runs/{{feature_set}}/all_features/{{grid}}/{pair}.model_selection.tsv",
                pair=_pairs,
            ),
            code=script_code(
                "model_selection_pair.py", adapters=MODEL_SELECTION_CONFIG["adapters"]
            ),
        output:
            tsv=expand(
                "results/runs/{{feature_set}}/model_selection/{{ranker}}/{{grid}}/{pair}.tsv",
                pair=_pairs,
            ),
        log:
            f"logs/model_selection/{{feature_set}}/{{ranker}}/{{grid}}/pairs{_part}.log",
        benchmark:
            f"logs/benchmarks/{_rule}/{{feature_set}}/{{ranker}}/{{grid}}.tsv"
        wildcard_constraints:
            feature_set=re.escape(_fs),
            ranker="|".join(re.escape(r) for r in MODEL_SELECTION_RANKERS),
            grid=re.escape(MODEL_SELECTION_CONFIG["grid"]),
        conda:
            "../../envs/otfs.yaml"
        threads: 1
        # Measured for one pair (score_model_selection): at most 105 s and 384 MB; the jobs'
        # medians by feature set: workflow/resources/job_costs.tsv.
        resources:
            mem_mb=1024,
            runtime=30,
        params:
            **model_selection_job_params(),
            pairs=_pairs,
        script:
            "../scripts/model_selection_pair.py"

    # `ruleorder:` takes literal names; these rules' names come from the configuration
    workflow.ruleorder(_rule, "score_model_selection")


rule make_model_selection:
    input:
        tables=lambda w: P.model_selection_pair_tables(),
        code=script_code("model_selection.py"),
    output:
        choices=f"{MODEL_SELECTION_OUT}/choices.parquet",
        summary_csv=model_selection_report("summary", "csv", "summary"),
        summary_md=f"{MODEL_SELECTION_OUT}/summary.md",
        table_csv=model_selection_report("table", "csv", "table"),
        table_md=f"{MODEL_SELECTION_OUT}/table.md",
        regret_pdf=f"{MODEL_SELECTION_OUT}/regret.pdf",
        regret_png=model_selection_report("regret", "png", "regret"),
        provenance=f"{MODEL_SELECTION_OUT}/provenance.json",
    log:
        "logs/model_selection/report.log",
    benchmark:
        "logs/benchmarks/make_model_selection/report.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        model_selection=MODEL_SELECTION_CONFIG,
        grid=lambda w: grid_config(MODEL_SELECTION_CONFIG["grid"]),
    script:
        "../scripts/model_selection.py"


# --- targets -------------------------------------------------------------------
localrules:
    make_model_selection,


rule model_selection:
    input:
        rules.make_model_selection.output,
