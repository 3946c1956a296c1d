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
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    # Measured (logs/benchmarks, otfs_benchmarks.scaling): about 250 MB per job
    # for d <= 1024, and the d x d kernel beyond (d = 4096: +150 MB; 16384: +2.1 GB).
    resources:
        mem_mb=lambda w: 512 + 2 * fs_n_features(w.feature_set) ** 2 * 8 // 2**20,
        runtime=10,
    params:
        **ranking_job_params(),
    script:
        "../scripts/ranking.py"


# One ranker's rankings of every pair of a feature set in one job, for the rankers of
# pair_batched_rankings (the leaderboard's and model selection's, which no paper target
# reads), on the pairs that have data (the `available` scope, as their readers): the
# same file per pair as rank_features, by the same code with the same parameters. Why:
# such a ranking took 2.5 s of code a pair on 5 iterations, and its job 5.6 s (one job
# a pair, 2026-11-27, dfe29ae, 2-core machine: the 364 ranking jobs of `leaderboard`
# and `model_selection` spent 927 s in their code of 2,041 s; 802 s were the import of
# scikit-learn; CHANGELOG). Traded: a pair that gains its data later reruns its feature
# set's rankings of these rankers, and a pair asked for outside that scope is
# rank_features'.
for _fs, _rankers in pair_batched_rankings().items():
    _pairs = batched_pairs(_fs)
    _rule = f"rank_pairs_{rule_name_part(_fs)}"

    rule:
        name:
            _rule
        input:
            caches=[f"data/cache/{_fs}/{d}.h5" for d in pairs_domains(_pairs)],
            code=script_code("ranking.py", rankers="ranker"),
        output:
            json=expand(
                "results/runs/{{feature_set}}/ranking/{{ranker}}/{pair}.json",
                pair=_pairs,
            ),
        log:
            "logs/ranking/{feature_set}/{ranker}/pairs.log",
        benchmark:
            f"logs/benchmarks/{_rule}/{{feature_set}}/{{ranker}}.tsv"
        wildcard_constraints:
            feature_set=re.escape(_fs),
            ranker="|".join(re.escape(r) for r in _rankers),
        conda:
            "../../envs/otfs.yaml"
        threads: 1
        # Measured (13 rankers, 5 iterations, 2026-11-27): at most 188 s (mmd, EfficientNet-Lite0's
        # 12 pairs), 467 MB (hsic-lasso); rank_features' growth with d beyond.
        resources:
            mem_mb=lambda w: 1024 + 2 * fs_n_features(w.feature_set) ** 2 * 8 // 2**20,
            runtime=30,
        params:
            pairs=_pairs,
            ranker_params=lambda w: ranker_params(w.ranker),
            per_class=lambda w: {
                p: pair_source_per_class(p, w.feature_set)
                for p in batched_pairs(w.feature_set)
            },
            iterations=lambda w: ranking_iterations(w.feature_set, w.ranker),
        script:
            "../scripts/ranking.py"

    # `ruleorder:` takes literal names; these rules' names come from the configuration
    workflow.ruleorder(_rule, "rank_features")
