# Stage classification: adapt, then 1-NN accuracy along the orders and numbers
# of features of a grid (config `grids`), for every iteration of one pair.


rule classify:
    output:
        tsv="results/runs/{feature_set}/classification/{selection}/{adapter}/{grid}/{pair}.tsv",
    input:
        caches=pair_caches,
        selection="results/runs/{feature_set}/selection/{selection}/{pair}.json",
        ranking="results/runs/{feature_set}/ranking/{selection}/{pair}.json",
        code=lib(
            "stages/classification.py", "classification.py", "adaptation.py",
            "protocol.py", "data/cache.py",
        ),
    params:
        orders=lambda w: config["grids"][w.grid]["orders"],
        feature_counts=lambda w: config["grids"][w.grid]["feature_counts"],
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/classification/{feature_set}/{selection}/{adapter}/{grid}/{pair}.log",
    benchmark:
        "logs/benchmarks/classification/{feature_set}/{selection}/{adapter}/{grid}/{pair}.tsv",
    threads: 1
    resources:
        mem_mb=2048,
        runtime=lambda w: 20 if w.adapter in ("NA", "SA", "CORAL") else 90,
    script:
        "../scripts/classification.py"
