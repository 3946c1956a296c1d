"""Snakemake wrapper of otfs_workflow.stages.classification.run_adapters: rule classify_leaderboard_adapters
(one pair) and the rules classify_pairs_<feature set> (every pair of ``params.pairs``, in their order)."""

from otfs_workflow.stages import JobPairs, classification, domain_caches, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "classification", code=sm.input.code):
    pairs = JobPairs(sm)
    ends = list(sm.input.ends)  # the points of all features, where the grid has d: none, or one per pair
    tsv = list(sm.output.tsv)
    grid = sm.wildcards.grid
    caches = domain_caches(sm.input.caches)
    for i, (pair, ranking) in enumerate(zip(pairs.pairs, pairs.each(sm.input.ranking), strict=True)):
        outputs = {a: next(f for f in tsv if f.endswith(f"/{a}/{grid}/{pair}.tsv")) for a in sm.params.adapters}
        classification.run_adapters(
            caches=caches,
            ranking_path=ranking,
            adapters=dict(zip(sm.params.adapters, sm.params.adapter_params, strict=True)),
            grid=grid,
            orders=sm.params.orders,
            counts=sm.params.feature_counts,
            iterations=sm.params.iterations,
            metrics=sm.params.metrics,
            outputs=outputs,
            as_frame=False,
            ends=ends[i] if ends else None,
        )
