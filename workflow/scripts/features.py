"""Snakemake wrapper of otfs_workflow.stages.aggregation.feature_table (rule feature_table)."""

from otfs_workflow.stages import aggregation, job, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "features", code=smk.input.code):
    aggregation.feature_table(list(smk.input.rankings), smk.output.tsv)
