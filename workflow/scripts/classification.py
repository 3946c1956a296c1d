"""Snakemake wrapper of otfs_workflow.stages.classification (rule classify)."""

from otfs_workflow.stages import classification, domain_caches, job

with job(snakemake.log[0], snakemake.threads, "classification", code=snakemake.input.code):  # noqa: F821
    classification.run(
        caches=domain_caches(snakemake.input.caches),  # noqa: F821
        ranking_path=snakemake.input.ranking,  # noqa: F821
        adapter=snakemake.wildcards.adapter,  # noqa: F821
        adapter_params=snakemake.params.adapter_params,  # noqa: F821
        grid=snakemake.wildcards.grid,  # noqa: F821
        orders=snakemake.params.orders,  # noqa: F821
        counts=snakemake.params.feature_counts,  # noqa: F821
        iterations=snakemake.params.iterations,  # noqa: F821
        output=snakemake.output.tsv,  # noqa: F821
        as_frame=False,
    )
