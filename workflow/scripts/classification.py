"""Snakemake wrapper of otfs_workflow.stages.classification (rule classify)."""

from otfs_workflow.stages import classification, domain_caches, job, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "classification", code=smk.input.code):
    classification.run(
        caches=domain_caches(smk.input.caches),
        ranking_path=smk.input.ranking,
        adapter=smk.wildcards.adapter,
        adapter_params=smk.params.adapter_params,
        grid=smk.wildcards.grid,
        orders=smk.params.orders,
        counts=smk.params.feature_counts,
        iterations=smk.params.iterations,
        metrics=smk.params.metrics,
        output=smk.output.tsv,
        as_frame=False,
    )
