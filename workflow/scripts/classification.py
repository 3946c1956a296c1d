"""Snakemake wrapper of otfs.stages.classification (rule classify)."""

from otfs.stages import classification, job

with job(snakemake.log[0], snakemake.threads, "classification"):  # noqa: F821
    classification.run(
        cache_path=snakemake.input.cache,  # noqa: F821
        selection_path=snakemake.input.selection,  # noqa: F821
        ranking_path=snakemake.input.ranking,  # noqa: F821
        adapter=snakemake.wildcards.adapter,  # noqa: F821
        orders=snakemake.params.orders,  # noqa: F821
        counts_scheme=snakemake.params.feature_counts,  # noqa: F821
        output=snakemake.output.tsv,  # noqa: F821
    )
