# Stage classification: adapt, then 1-NN accuracy along every feature order.


rule classify:
    output:
        tsv="results/runs/{feature_set}/classification/{selection}/{adapter}/{pair}.tsv",
    input:
        caches=pair_caches,
        selection="results/runs/{feature_set}/selection/{selection}/{pair}.json",
        ranking="results/runs/{feature_set}/ranking/{selection}/{pair}.json",
        code=lib(
            "stages/classification.py", "classification.py", "adaptation.py",
            "protocol.py", "data/cache.py",
        ),
    params:
        orders=config["classification"]["orders"],
        feature_counts=config["protocol"]["feature_counts"],
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/classification/{feature_set}/{selection}/{adapter}/{pair}.log",
    benchmark:
        "logs/benchmarks/classification/{feature_set}/{selection}/{adapter}/{pair}.tsv",
    threads: 1
    resources:
        mem_mb=2048,
        runtime=20,
    script:
        "../scripts/classification.py"
