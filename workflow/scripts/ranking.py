"""Snakemake wrapper of otfs_workflow.stages.ranking: rule rank_features (one pair) and the rules
rank_pairs_<feature set> (every pair of ``params.pairs``, one output each, in their order)."""

from otfs_workflow.stages import JobPairs, domain_caches, job, ranking, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "ranking", code=smk.input.code):
    w = smk.wildcards
    pairs = JobPairs(smk)
    caches = domain_caches(smk.input.caches)
    for pair, output in zip(pairs.pairs, pairs.each(smk.output.json), strict=True):
        ranking.run(
            caches=caches,
            feature_set=w.feature_set,
            pair=pair,
            ranker=w.ranker,
            ranker_params=smk.params.ranker_params,
            iterations=smk.params.iterations,
            per_class=pairs.of(smk.params.per_class, pair),
            output=output,
        )
