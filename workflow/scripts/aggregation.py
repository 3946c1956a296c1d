"""Snakemake wrapper of otfs_workflow.stages.aggregation (rule aggregate)."""

from otfs_workflow.stages import aggregation, job, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "aggregation", code=smk.input.code):
    aggregation.run(
        run_tables=list(smk.input.runs),
        caches=list(smk.input.caches),
        outputs=dict(smk.output.items()),
        params=dict(smk.params.run),
        config=smk.config,
    )
