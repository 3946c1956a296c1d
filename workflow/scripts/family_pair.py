"""Snakemake wrapper of one data family's (feature set, pair) unit (rule run_family_pair): for every ranker, the
stages otfs_workflow.stages.ranking.run, classification.run_adapters and model_selection.run_pair, in one process.
Their params are those of rank_features, classify_leaderboard_adapters and score_model_selection, named with
the prefixes rank_, curves_ and ms_; the outputs are listed ranker by ranker, in the order of params.rankers. A pair
split in several jobs reads the points of all features of its curves and its choice of k (inputs curve_ends and
ms_ends); a pair in one job computes them once itself."""

from otfs_workflow.stages import classification, domain_caches, job, model_selection, ranking, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "family_pair", code=sm.input.code):
    w, p = sm.wildcards, sm.params
    caches = domain_caches(sm.input.caches)
    curve_ends, ms_ends = (getattr(sm.input, name, None) for name in ("curve_ends", "ms_ends"))
    n_adapters = len(p.curves_adapters)
    # what every ranker computes alike, once: the point of all the features (in the data's order) of the curves
    # and of the choice of k, and the data rules' choices, per source subset
    shared = {}
    # the adapters of both the curves and the choice of k (OT3 where it applies): adapted once for both
    reuse = set(p.curves_adapters) & set(p.ms_adapters)
    for i, ranker in enumerate(p.rankers):
        ranking.run(caches=caches, feature_set=w.feature_set, pair=w.pair, ranker=ranker,
                    ranker_params=p.rank_ranker_params[ranker], iterations=p.rank_iterations,
                    per_class=p.rank_per_class, output=sm.output.json[i])
        classification.run_adapters(
            caches=caches, ranking_path=sm.output.json[i],
            adapters=dict(zip(p.curves_adapters, p.curves_adapter_params, strict=True)), grid=p.grid,
            orders=p.curves_orders, counts=p.curves_feature_counts, iterations=p.curves_iterations,
            metrics=p.curves_metrics, as_frame=False, shared=shared, reuse=reuse, ends=curve_ends,
            outputs=dict(zip(p.curves_adapters, sm.output.tsv[i * n_adapters:(i + 1) * n_adapters], strict=True)),
        )
        model_selection.run_pair(
            caches=caches, ranking_path=sm.output.json[i],
            adapters=dict(zip(p.ms_adapters, p.ms_adapter_params, strict=True)), rules=p.ms_rules,
            counts=p.ms_feature_counts, classifier=p.ms_classifier, second_classifier=p.ms_second_classifier,
            n_splits=p.ms_cv["n_splits"],
            test_size=p.ms_cv["test_size"], iterations=p.ms_iterations, output=sm.output.scores[i],
            shared=shared, ends=ms_ends,
        )
        classification.KeptAdaptations(shared).clear()
