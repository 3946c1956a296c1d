# Stage ranking: one ranker's feature scores and its three feature orders, for
# every iteration of one pair. Every ranker (a file of src/otfs/rankers/, or an
# entry point) is the library's estimator, fitted on the iteration's source
# subset and the whole target; the OT rankers (ot, ot-1nn, ot-random) run
# Algorithm 1 (sample selection) and Algorithm 2 inside their fit.


rule rank_features:
    input:
        caches=pair_caches,
        code=script_code("ranking.py", rankers="ranker"),
    output:
        json="results/runs/{feature_set}/ranking/{ranker}/{pair}.json",
    log:
        "logs/ranking/{feature_set}/{ranker}/{pair}.log",
    benchmark:
        "logs/benchmarks/rank_features/{feature_set}/{ranker}/{pair}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured (logs/benchmarks, otfs_workflow.benchmark.scaling): about 250 MB per job
    # for d <= 1024, and the d x d kernel beyond (d = 4096: +150 MB; 16384: +2.1 GB).
    resources:
        mem_mb=lambda w: 512 + 2 * fs_n_features(w.feature_set) ** 2 * 8 // 2**20,
        runtime=10,
    params:
        **ranking_job_params(),
    script:
        "../scripts/ranking.py"
