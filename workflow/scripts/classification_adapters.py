"""Snakemake wrapper of otfs_workflow.stages.classification.run_adapters (rule classify_leaderboard_adapters)."""

from otfs_workflow.stages import classification, domain_caches, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "classification", code=sm.input.code):
    classification.run_adapters(
        caches=domain_caches(sm.input.caches),
        ranking_path=sm.input.ranking,
        adapters=dict(zip(sm.params.adapters, sm.params.adapter_params, strict=True)),
        grid=sm.wildcards.grid,
        orders=sm.params.orders,
        counts=sm.params.feature_counts,
        iterations=sm.params.iterations,
        metrics=sm.params.metrics,
        outputs=dict(zip(sm.params.adapters, sm.output.tsv, strict=True)),
        as_frame=False,
        ends=sm.input.ends[0] if sm.input.ends else None,
    )
