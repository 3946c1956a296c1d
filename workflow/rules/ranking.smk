# Stage ranking: Algorithm 2's coupling diagonal and the three feature orders.


rule rank_features:
    input:
        caches=pair_caches,
        selection="results/runs/{feature_set}/selection/{selection}/{pair}.json",
        code=script_code("ranking.py"),
    output:
        json="results/runs/{feature_set}/ranking/{selection}/{pair}.json",
    log:
        "logs/ranking/{feature_set}/{selection}/{pair}.log",
    benchmark:
        "logs/benchmarks/rank_features/{feature_set}/{selection}/{pair}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured (logs/benchmarks, otfs.benchmark.scaling): about 250 MB per job
    # for d <= 1024, and the d x d kernel beyond (d = 4096: +150 MB; 16384: +2.1 GB).
    resources:
        mem_mb=lambda w: 512 + 2 * fs_n_features(w.feature_set) ** 2 * 8 // 2**20,
        runtime=10,
    params:
        ranking=config["ranking"],
    script:
        "../scripts/ranking.py"
