# Stage classification: adapt, then 1-NN accuracy along the orders and numbers
# of features of a grid (config `grids`), for every iteration of one pair.


rule classify:
    input:
        caches=pair_caches,
        ranking="results/runs/{feature_set}/ranking/{ranker}/{pair}.json",
        code=script_code("classification.py", adapters="adapter"),
    output:
        tsv="results/runs/{feature_set}/classification/{ranker}/{adapter}/{grid}/{pair}.tsv",
    log:
        "logs/classification/{feature_set}/{ranker}/{adapter}/{grid}/{pair}.log",
    benchmark:
        "logs/benchmarks/classify/{feature_set}/{ranker}/{adapter}/{grid}/{pair}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured: at most about 300 MB per job at the paper's sizes (19 iterations
    # of one pair); 28 s for the slowest Table 3 job at d = 4096 (TCA), minutes
    # for OT3 curves of 17 counts x 3 orders.
    resources:
        mem_mb=1024,
        runtime=lambda w: 20 if w.adapter in ("NA", "SA", "CORAL") else 90,
    params:
        orders=lambda w: grid_config(w.grid)["orders"],
        feature_counts=lambda w: grid_config(w.grid)["feature_counts"],
        iterations=lambda w: grid_config(w.grid).get("iterations"),
        metrics=lambda w: grid_config(w.grid).get("metrics", {}),
        adapter_params=lambda w: adapter_params(w.adapter),
    script:
        "../scripts/classification.py"
