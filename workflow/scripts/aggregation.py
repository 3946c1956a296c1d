"""Snakemake wrapper of otfs_workflow.stages.aggregation (rule aggregate)."""

from otfs_workflow.stages import aggregation, job

with job(snakemake.log[0], snakemake.threads, "aggregation", code=snakemake.input.code):  # noqa: F821
    aggregation.run(
        run_tables=list(snakemake.input.runs),  # noqa: F821
        caches=list(snakemake.input.caches),  # noqa: F821
        outputs=dict(snakemake.output.items()),  # noqa: F821
        params=dict(snakemake.params.run),  # noqa: F821
        config=snakemake.config,  # noqa: F821
    )
