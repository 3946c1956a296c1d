"""Snakemake wrapper of otfs_workflow.stages.aggregation.collect (rule collect_results)."""

from otfs_workflow.stages import aggregation, job

with job(snakemake.log[0], snakemake.threads, "collect", code=snakemake.input.code):  # noqa: F821
    aggregation.collect(
        tables=list(snakemake.input.tables),  # noqa: F821
        output=snakemake.output.tsv,  # noqa: F821
    )
