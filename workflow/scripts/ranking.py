"""Snakemake wrapper of otfs_workflow.stages.ranking (rule rank_features)."""

from otfs_workflow.stages import domain_caches, job, ranking

with job(snakemake.log[0], snakemake.threads, "ranking", code=snakemake.input.code):  # noqa: F821
    w = snakemake.wildcards  # noqa: F821
    ranking.run(
        caches=domain_caches(snakemake.input.caches),  # noqa: F821
        feature_set=w.feature_set,
        pair=w.pair,
        ranker=w.ranker,
        ranker_params=snakemake.params.ranker_params,  # noqa: F821
        iterations=snakemake.params.iterations,  # noqa: F821
        per_class=snakemake.params.per_class,  # noqa: F821
        output=snakemake.output.json,  # noqa: F821
    )
