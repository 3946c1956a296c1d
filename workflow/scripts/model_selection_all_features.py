"""Snakemake wrapper of otfs_workflow.stages.model_selection.run_pair_all_features
(rule score_model_selection_all_features)."""

from otfs_workflow.stages import domain_caches, job, model_selection, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "model_selection", code=sm.input.code):
    model_selection.run_pair_all_features(
        caches=domain_caches(sm.input.caches),
        feature_set=sm.wildcards.feature_set,
        pair=sm.wildcards.pair,
        adapters=dict(zip(sm.params.adapters, sm.params.adapter_params, strict=True)),
        rules=sm.params.rules,
        counts=sm.params.feature_counts,
        classifier=sm.params.classifier,
        second_classifier=sm.params.second_classifier,
        n_splits=sm.params.cv["n_splits"],
        test_size=sm.params.cv["test_size"],
        iterations=sm.params.ranked,
        per_class=sm.params.per_class,
        output=sm.output.tsv,
    )
