# Stage selection: each iteration's source subset and Algorithm 1's sample pairs.
# One job per pair runs every iteration; each iteration is seeded on its own.


rule select_samples:
    input:
        caches=pair_caches,
        code=script_code("selection.py"),
    output:
        json="results/runs/{feature_set}/selection/{selection}/{pair}.json",
    log:
        "logs/selection/{feature_set}/{selection}/{pair}.log",
    benchmark:
        "logs/benchmarks/select_samples/{feature_set}/{selection}/{pair}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        per_class=lambda w: pair_source_per_class(w.pair),
        iterations=ITERATIONS,
        tie_break=config["selection"]["tie_break"],
        emd_max_iter=config["selection"]["emd_max_iter"],
    script:
        "../scripts/selection.py"
