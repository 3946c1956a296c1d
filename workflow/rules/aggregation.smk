# Stage aggregation: the tidy long table of one configuration, its summaries and
# provenance; and the single table of every configuration that was built.


rule aggregate:
    output:
        long="results/tables/{feature_set}/{selection}/{adapter}/long.tsv",
        per_pair="results/tables/{feature_set}/{selection}/{adapter}/per_pair.tsv",
        summary="results/tables/{feature_set}/{selection}/{adapter}/summary.tsv",
        provenance="results/tables/{feature_set}/{selection}/{adapter}/provenance.json",
    input:
        runs=lambda w: expand(
            "results/runs/{{feature_set}}/classification/{{selection}}/{{adapter}}/{pair}.tsv",
            pair=fs_pairs(w.feature_set),
        ),
        caches=lambda w: [f"data/cache/{w.feature_set}/{d}.h5" for d in pairs_domains(fs_pairs(w.feature_set))],
        code=lib("stages/aggregation.py", "aggregation.py", "provenance.py", "data/cache.py"),
    params:
        run=lambda w: {
            "feature_set": w.feature_set,
            "selection": w.selection,
            "adapter": w.adapter,
            "pairs": len(fs_pairs(w.feature_set)),
            "iterations": len(ITERATIONS),
        },
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/aggregation/{feature_set}/{selection}/{adapter}.log",
    benchmark:
        "logs/benchmarks/aggregation/{feature_set}/{selection}/{adapter}.tsv",
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    script:
        "../scripts/aggregation.py"


rule collect_results:
    output:
        tsv="results/results_long.tsv",
    input:
        tables=figure7_tables(),
        code=lib("stages/aggregation.py"),
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/aggregation/collect_results.log",
    benchmark:
        "logs/benchmarks/aggregation/collect_results.tsv",
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    script:
        "../scripts/collect.py"
