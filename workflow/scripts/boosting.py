"""Snakemake wrapper of otfs_workflow.stages.boosting (rule boosting_run)."""

from otfs_workflow.stages import boosting, domain_caches, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "boosting", code=sm.input.code):
    w = sm.wildcards
    boosting.run(
        caches=domain_caches(sm.input.caches),
        ranking_path=sm.input.ranking,
        feature_set=w.feature_set,
        pair=w.pair,
        task=sm.params.task,
        repetition=int(w.rep),
        cfg=sm.params.boosting,
        output=sm.output.run,
    )
