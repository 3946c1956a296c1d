"""Snakemake wrapper of otfs_workflow.stages.invariance (rule invariance_run)."""

from otfs_workflow.stages import domain_caches, invariance, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "invariance", code=sm.input.code):
    invariance.run(
        caches=domain_caches(sm.input.caches),
        ranking_path=sm.input.ranking,
        cfg=sm.params.invariance,
        output=sm.output.run,
    )
