"""Snakemake wrapper of otfs_workflow.stages.ranking: rule rank_features (one pair) and the rules
rank_pairs_<feature set> (every pair of ``params.pairs``, one output each, in their order)."""

from otfs_workflow.stages import domain_caches, job, ranking, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "ranking", code=smk.input.code):
    w = smk.wildcards
    batch = hasattr(smk.params, "pairs")
    pairs = smk.params.pairs if batch else [w.pair]
    outputs = list(smk.output.json) if batch else [smk.output.json]
    caches = domain_caches(smk.input.caches)
    for pair, output in zip(pairs, outputs, strict=True):
        ranking.run(
            caches=caches,
            feature_set=w.feature_set,
            pair=pair,
            ranker=w.ranker,
            ranker_params=smk.params.ranker_params,
            iterations=smk.params.iterations,
            per_class=smk.params.per_class[pair] if batch else smk.params.per_class,
            output=output,
        )
