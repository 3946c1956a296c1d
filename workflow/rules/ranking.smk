# Stage ranking: Algorithm 2's coupling diagonal and the three feature orders.


rule rank_features:
    output:
        json="results/runs/{feature_set}/ranking/{selection}/{pair}.json",
    input:
        caches=pair_caches,
        selection="results/runs/{feature_set}/selection/{selection}/{pair}.json",
        code=lib("stages/ranking.py", "ranking.py", "preprocessing.py", "protocol.py", "data/cache.py"),
    params:
        ranking=config["ranking"],
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/ranking/{feature_set}/{selection}/{pair}.log",
    benchmark:
        "logs/benchmarks/ranking/{feature_set}/{selection}/{pair}.tsv",
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    script:
        "../scripts/ranking.py"
