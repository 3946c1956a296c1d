# Stage aggregation: the tidy long table of one configuration (feature set,
# domain scope, ranker, adapter, grid), its summaries and provenance; and
# the single long table of a target set.


rule aggregate:
    input:
        runs=lambda w: expand(
            "results/runs/{{feature_set}}/classification/{{ranker}}/{{adapter}}/{{grid}}/{pair}.tsv",
            pair=scope_pairs(w.feature_set, w.scope),
        ),
        caches=aggregate_caches,
        code=script_code("aggregation.py"),
    output:
        long="results/aggregate/{feature_set}/{scope}/{ranker}/{adapter}/{grid}/long.tsv",
        per_pair="results/aggregate/{feature_set}/{scope}/{ranker}/{adapter}/{grid}/per_pair.tsv",
        summary="results/aggregate/{feature_set}/{scope}/{ranker}/{adapter}/{grid}/summary.tsv",
        provenance="results/aggregate/{feature_set}/{scope}/{ranker}/{adapter}/{grid}/provenance.json",
    log:
        "logs/aggregation/{feature_set}/{scope}/{ranker}/{adapter}/{grid}.log",
    benchmark:
        "logs/benchmarks/aggregate/{feature_set}/{scope}/{ranker}/{adapter}/{grid}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        run=lambda w: aggregate_run(w, w.ranker, w.adapter),
    script:
        "../scripts/aggregation.py"


rule collect_results:
    input:
        tables=lambda w: [f"{p}/long.tsv" for p in target_aggregates(w.target_set)],
        code=script_code("collect.py"),
    output:
        tsv="results/{target_set}/results_long.tsv",
    log:
        "logs/aggregation/collect_results_{target_set}.log",
    benchmark:
        "logs/benchmarks/collect_results/{target_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    script:
        "../scripts/collect.py"


# The features of one ranker's rankings, by name (a user's columns), from the
# most to the least similar on average over the scope's pairs and iterations.
rule feature_table:
    input:
        rankings=lambda w: expand(
            "results/runs/{{feature_set}}/ranking/{{ranker}}/{pair}.json",
            pair=scope_pairs(w.feature_set, w.scope),
        ),
        code=script_code("features.py"),
    output:
        tsv="results/aggregate/{feature_set}/{scope}/{ranker}/features.tsv",
    log:
        "logs/aggregation/{feature_set}/{scope}/{ranker}/features.log",
    benchmark:
        "logs/benchmarks/feature_table/{feature_set}/{scope}/{ranker}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    script:
        "../scripts/features.py"
