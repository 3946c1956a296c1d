"""Snakemake wrapper of otfs.stages.boosting (rule boosting_run)."""

from otfs.stages import boosting, domain_caches, job

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, "boosting", code=sm.input.code):
    w = sm.wildcards
    boosting.run(domain_caches(sm.input.caches), sm.input.ranking, w.feature_set, w.pair, sm.params.task,
                 int(w.rep), sm.params.boosting, sm.output.run)
