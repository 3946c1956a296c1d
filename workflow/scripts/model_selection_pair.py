"""Snakemake wrapper of otfs_workflow.stages.model_selection.run_pair (rule score_model_selection)."""

from otfs_workflow.stages import domain_caches, job, model_selection, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "model_selection", code=sm.input.code):
    model_selection.run_pair(
        caches=domain_caches(sm.input.caches),
        ranking_path=sm.input.ranking,
        adapters=dict(zip(sm.params.adapters, sm.params.adapter_params, strict=True)),
        rules=sm.params.rules,
        counts=sm.params.feature_counts,
        classifier=sm.params.classifier,
        n_splits=sm.params.cv["n_splits"],
        test_size=sm.params.cv["test_size"],
        iterations=sm.params.iterations,
        output=sm.output.tsv,
        ends=sm.input.ends,
    )
