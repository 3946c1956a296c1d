"""Snakemake wrapper of otfs_workflow.stages.aggregation.feature_table (rule feature_table)."""

from otfs_workflow.stages import aggregation, job

with job(snakemake.log[0], snakemake.threads, "features", code=snakemake.input.code):  # noqa: F821
    aggregation.feature_table(list(snakemake.input.rankings), snakemake.output.tsv)  # noqa: F821
