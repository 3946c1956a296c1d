"""Snakemake wrapper of otfs_workflow.stages.aggregation.collect (rule collect_results)."""

from otfs_workflow.stages import aggregation, job, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "collect", code=smk.input.code):
    aggregation.collect(
        tables=list(smk.input.tables),
        output=smk.output.tsv,
    )
