"""Snakemake wrapper of otfs_workflow.stages.ranking (rule rank_features)."""

from otfs_workflow.stages import domain_caches, job, ranking, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "ranking", code=smk.input.code):
    w = smk.wildcards
    ranking.run(
        caches=domain_caches(smk.input.caches),
        feature_set=w.feature_set,
        pair=w.pair,
        ranker=w.ranker,
        ranker_params=smk.params.ranker_params,
        iterations=smk.params.iterations,
        per_class=smk.params.per_class,
        output=smk.output.json,
    )
