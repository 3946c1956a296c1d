"""Snakemake wrapper of otfs_workflow.stages.recommend.run_pair (rule recommend_pair)."""

from otfs_workflow.stages import domain_caches, job, recommend, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "recommend", code=sm.input.code):
    recommend.run_pair(
        caches=domain_caches(sm.input.caches),
        feature_set=sm.wildcards.feature_set,
        pair=sm.wildcards.pair,
        per_class=sm.params.per_class,
        params=sm.params.selector,
        outputs=dict(sm.output.items()),
        draws=sm.params.draws,
        evaluated=sm.params.evaluated,
    )
