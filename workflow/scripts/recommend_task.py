"""Snakemake wrapper of otfs_workflow.stages.recommend.task_summary (rule recommend_task)."""

from otfs_workflow.io import read_tsv, write_parquet
from otfs_workflow.stages import domain_caches, job, recommend, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "recommend", code=sm.input.code):
    import pandas as pd

    summary = recommend.task_summary(
        pd.concat([read_tsv(p) for p in sm.input.tables], ignore_index=True),
        families={sm.wildcards.feature_set: sm.params.family},
        rankers=sm.params.rankers,
        scorers=sm.params.scorers,
        data_rules=sm.params.data_rules,
        pair=(sm.params.reference, sm.params.relevance),
        metrics=sm.params.metrics,
        domains=recommend.task_domains(domain_caches(sm.input.caches), sm.wildcards.pair),
        permutations=sm.params.permutations,
    )
    write_parquet(summary, sm.output.summary)
