"""Snakemake wrapper of otfs_workflow.stages.model_selection.run_pair: rule score_model_selection (one pair)
and the rules score_pairs_<feature set> (every pair of ``params.pairs``, in their order)."""

from otfs_workflow.stages import JobPairs, domain_caches, job, model_selection, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "model_selection", code=sm.input.code):
    pairs = JobPairs(sm)
    caches = domain_caches(sm.input.caches)
    for ranking, ends, output in zip(pairs.each(sm.input.ranking), pairs.each(sm.input.ends),
                                     pairs.each(sm.output.tsv), strict=True):
        model_selection.run_pair(
            caches=caches,
            ranking_path=ranking,
            adapters=dict(zip(sm.params.adapters, sm.params.adapter_params, strict=True)),
            rules=sm.params.rules,
            counts=sm.params.feature_counts,
            classifier=sm.params.classifier,
            second_classifier=sm.params.second_classifier,
            n_splits=sm.params.cv["n_splits"],
            test_size=sm.params.cv["test_size"],
            iterations=sm.params.iterations,
            output=output,
            ends=ends,
        )
