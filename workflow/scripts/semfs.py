"""Snakemake wrapper of otfs.stages.semfs (rule semfs_run)."""

from otfs.protocol import parse_pair
from otfs.stages import domain_caches, job, semfs

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, "semfs", code=sm.input.code):
    w = sm.wildcards
    source, target = parse_pair(w.pair)
    semfs.run(domain_caches(sm.input.caches), sm.input.attributes, w.feature_set, target, source, int(w.split),
              sm.params.semfs, sm.output.run)
