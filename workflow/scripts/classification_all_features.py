"""Snakemake wrapper of otfs_workflow.stages.classification.run_all_features (rules classify_leaderboard_all_features
and classify_family_all_features*)."""

from otfs_workflow.stages import classification, domain_caches, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "classification", code=sm.input.code):
    classification.run_all_features(
        caches=domain_caches(sm.input.caches),
        feature_set=sm.wildcards.feature_set,
        pair=sm.wildcards.pair,
        adapters=dict(zip(sm.params.adapters, sm.params.adapter_params, strict=True)),
        grid=sm.wildcards.grid,
        iterations=sm.params.iterations,
        per_class=sm.params.per_class,
        metrics=sm.params.metrics,
        output=sm.output.json,
    )
