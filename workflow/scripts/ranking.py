"""Snakemake wrapper of otfs.stages.ranking (rule rank_features)."""

from otfs.stages import domain_caches, job, ranking

with job(snakemake.log[0], snakemake.threads, "ranking", code=snakemake.input.code):  # noqa: F821
    ranking.run(
        caches=domain_caches(snakemake.input.caches),  # noqa: F821
        selection_path=snakemake.input.selection,  # noqa: F821
        ranking_cfg=snakemake.params.ranking,  # noqa: F821
        output=snakemake.output.json,  # noqa: F821
    )
