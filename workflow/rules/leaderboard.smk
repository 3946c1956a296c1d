# The feature-shift benchmark, part 2: every ranker x adapter on every feature
# set with data (config `leaderboard`), on the grid `grids.leaderboard`. The
# classification, aggregation and ranking rules are the grid's own; one job
# compares them: tables, average ranks with Friedman's and Nemenyi's tests, a
# critical-difference diagram, a heatmap, the planted-shift recovery figure and
# the tidy Parquet results.


LEADERBOARD_CONFIG = config["leaderboard"]
LEADERBOARD_OUT = "results/leaderboard"
leaderboard_report = reporter(
    LEADERBOARD_OUT, "Feature-shift benchmark", "leaderboard_"
)


# Its inputs (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
leaderboard_feature_sets = P.leaderboard_feature_sets


# The point of all d features of one (feature set, pair) under every adapter of
# `leaderboard.adapters`, on each iteration's source subset: with all the features a
# ranker's order only permutes the columns, so the point is computed once, on the
# data's order, for every ranker (it was a third of the curves' adaptation time).
rule classify_leaderboard_all_features:
    input:
        caches=pair_caches,
        code=script_code(
            "classification_all_features.py", adapters=LEADERBOARD_CONFIG["adapters"]
        ),
    output:
        json="results/runs/{feature_set}/all_features/{grid}/{pair}.json",
    log:
        "logs/classification/{feature_set}/all_features/{grid}/{pair}.log",
    benchmark:
        "logs/benchmarks/classify_leaderboard_all_features/{feature_set}/{grid}/{pair}.tsv"
    wildcard_constraints:
        grid=re.escape(LEADERBOARD_CONFIG["grid"]),
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        **P.all_features_job_params(LEADERBOARD_CONFIG["adapters"]),
    script:
        "../scripts/classification_all_features.py"


# The leaderboard's curves of one (feature set, ranker, pair): one job runs every
# adapter of `leaderboard.adapters`, reading the caches and the ranking once, and
# writes the same files as one `classify` job per adapter would; the point of all
# features is the pair's (rule classify_leaderboard_all_features). Traded: a
# request for one of these files runs all the adapters of its pair.
rule classify_leaderboard_adapters:
    input:
        caches=pair_caches,
        ranking="results/runs/{feature_set}/ranking/{ranker}/{pair}.json",
        ends=lambda w: P.all_features_ends(w.feature_set, w.grid, [w.pair]),
        code=script_code(
            "classification_adapters.py", adapters=LEADERBOARD_CONFIG["adapters"]
        ),
    output:
        tsv=expand(
            "results/runs/{{feature_set}}/classification/{{ranker}}/{adapter}/{{grid}}/{{pair}}.tsv",
            adapter=LEADERBOARD_CONFIG["adapters"],
        ),
    log:
        "logs/classification/{feature_set}/{ranker}/leaderboard-adapters/{grid}/{pair}.log",
    benchmark:
        "logs/benchmarks/classify_leaderboard_adapters/{feature_set}/{ranker}/{grid}/{pair}.tsv"
    wildcard_constraints:
        grid=re.escape(LEADERBOARD_CONFIG["grid"]),
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured: 3.5-41 s for the 5 default adapters at 5 iterations (TCA and OT3
    # on USPS <-> MNIST the longest), at most 419 MB.
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        **curves_job_params(LEADERBOARD_CONFIG["adapters"]),
    script:
        "../scripts/classification_adapters.py"


ruleorder: classify_leaderboard_adapters > classify


# The leaderboard's curves of one ranker on every pair of a feature set with data
# (batched_pairs), one job per (feature set, ranker): what classify_leaderboard_adapters
# writes for each pair, by the same code with the same parameters, from each pair's
# ranking. Why: such a job took 10 s for one pair (median, 2026-11-27), 2.6 s of it the
# imports, and the default leaderboard had 364. Traded: a pair that gains its data later
# reruns its feature set's curves of every ranker; a pair asked for outside those is
# classify_leaderboard_adapters'.
for _fs in batched_feature_sets("leaderboard"):
    _pairs = batched_pairs(_fs)
    _rule = f"classify_pairs_{rule_name_part(_fs)}"

    rule:
        name:
            _rule
        input:
            caches=[f"data/cache/{_fs}/{d}.h5" for d in pairs_domains(_pairs)],
            ranking=expand(
                "results/runs/{{feature_set}}/ranking/{{ranker}}/{pair}.json",
                pair=_pairs,
            ),
            ends=lambda w: P.all_features_ends(
                w.feature_set, w.grid, batched_pairs(w.feature_set)
            ),
            code=script_code(
                "classification_adapters.py", adapters=LEADERBOARD_CONFIG["adapters"]
            ),
        output:
            tsv=expand(
                "results/runs/{{feature_set}}/classification/{{ranker}}/{adapter}/{{grid}}/{pair}.tsv",
                pair=_pairs,
                adapter=LEADERBOARD_CONFIG["adapters"],
            ),
        log:
            "logs/classification/{feature_set}/{ranker}/leaderboard-adapters/{grid}/pairs.log",
        benchmark:
            f"logs/benchmarks/{_rule}/{{feature_set}}/{{ranker}}/{{grid}}.tsv"
        wildcard_constraints:
            feature_set=re.escape(_fs),
            ranker="|".join(re.escape(r) for r in LEADERBOARD_CONFIG["rankers"]),
            grid=re.escape(LEADERBOARD_CONFIG["grid"]),
        conda:
            "../../envs/otfs.yaml"
        threads: 1
        # Measured for one pair (classify_leaderboard_adapters): 3.5-46 s.
        resources:
            mem_mb=1024,
            runtime=30,
        params:
            **curves_job_params(LEADERBOARD_CONFIG["adapters"]),
            pairs=_pairs,
        script:
            "../scripts/classification_adapters.py"

    # `ruleorder:` takes literal names; these rules' names come from the configuration
    workflow.ruleorder(_rule, "classify_leaderboard_adapters", "classify")


# A feature set's leaderboard aggregates, every (ranker, adapter) of `leaderboard` in one
# local job: each the files rule aggregate writes. Why: an aggregate took 3.6 s (median of
# 110, 2026-11-27), nearly all of it the interpreter, imports and provenance, and the default
# leaderboard has 70 per feature set. Traded: a new ranker re-aggregates its feature set's.
rule aggregate_leaderboard:
    input:
        runs=batch_aggregate_tables(
            LEADERBOARD_CONFIG["rankers"], LEADERBOARD_CONFIG["adapters"]
        ),
        caches=aggregate_caches,
        code=script_code("aggregation_batch.py"),
    output:
        long=batch_aggregate_outputs(
            "long.tsv", LEADERBOARD_CONFIG["rankers"], LEADERBOARD_CONFIG["adapters"]
        ),
        per_pair=batch_aggregate_outputs(
            "per_pair.tsv",
            LEADERBOARD_CONFIG["rankers"],
            LEADERBOARD_CONFIG["adapters"],
        ),
        summary=batch_aggregate_outputs(
            "summary.tsv",
            LEADERBOARD_CONFIG["rankers"],
            LEADERBOARD_CONFIG["adapters"],
        ),
        provenance=batch_aggregate_outputs(
            "provenance.json",
            LEADERBOARD_CONFIG["rankers"],
            LEADERBOARD_CONFIG["adapters"],
        ),
    log:
        "logs/aggregation/{feature_set}/{scope}/leaderboard_{grid}.log",
    benchmark:
        "logs/benchmarks/aggregate_leaderboard/{feature_set}/{scope}/{grid}.tsv"
    wildcard_constraints:
        feature_set="|".join(re.escape(fs) for fs in LEADERBOARD_CONFIG["feature_sets"]),
        grid=re.escape(LEADERBOARD_CONFIG["grid"]),
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        runs=batch_aggregate_params(
            LEADERBOARD_CONFIG["rankers"], LEADERBOARD_CONFIG["adapters"]
        ),
    script:
        "../scripts/aggregation_batch.py"


ruleorder: aggregate_leaderboard > aggregate


localrules:
    aggregate_leaderboard,


rule make_leaderboard:
    input:
        aggregates=lambda w: P.leaderboard_inputs("aggregates"),
        rankings=lambda w: P.leaderboard_inputs("rankings"),
        recovery="results/shift_recovery/runs.csv",
        code=script_code("leaderboard.py"),
    output:
        parquet=f"{LEADERBOARD_OUT}/results_long.parquet",
        table_csv=leaderboard_report("table", "csv", "table"),
        table_md=f"{LEADERBOARD_OUT}/table.md",
        table_tex=f"{LEADERBOARD_OUT}/table.tex",
        ranks_csv=leaderboard_report("ranks", "csv", "ranks"),
        ranks_md=f"{LEADERBOARD_OUT}/ranks.md",
        ranks_tex=f"{LEADERBOARD_OUT}/ranks.tex",
        posthoc=f"{LEADERBOARD_OUT}/posthoc.csv",
        versus_csv=leaderboard_report("versus", "csv", "versus"),
        versus_md=f"{LEADERBOARD_OUT}/versus.md",
        versus_tex=f"{LEADERBOARD_OUT}/versus.tex",
        cd_pdf=f"{LEADERBOARD_OUT}/cd.pdf",
        cd_png=leaderboard_report("cd", "png", "cd"),
        heatmap_pdf=f"{LEADERBOARD_OUT}/heatmap.pdf",
        heatmap_png=leaderboard_report("heatmap", "png", "heatmap"),
        recovery_pdf=f"{LEADERBOARD_OUT}/recovery.pdf",
        recovery_png=leaderboard_report("recovery", "png", "recovery"),
        provenance=f"{LEADERBOARD_OUT}/provenance.json",
    log:
        "logs/leaderboard/leaderboard.log",
    benchmark:
        "logs/benchmarks/make_leaderboard/leaderboard.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        n_features=lambda w: {
            fs: fs_n_features(fs) for fs in leaderboard_feature_sets()
        },
        fraction=lambda w: {
            fs: counts(fs, [LEADERBOARD_CONFIG["fraction"]])[0]
            for fs in leaderboard_feature_sets()
        },
        alpha=LEADERBOARD_CONFIG["alpha"],
        reference=LEADERBOARD_CONFIG["reference"],
        leaderboard=LEADERBOARD_CONFIG,
        grid=lambda w: grid_config(LEADERBOARD_CONFIG["grid"]),
        iterations=ITERATIONS,
    script:
        "../scripts/leaderboard.py"


# --- targets -------------------------------------------------------------------
localrules:
    make_leaderboard,


rule leaderboard:
    input:
        rules.make_leaderboard.output,
