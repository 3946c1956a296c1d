"""Snakemake wrapper of otfs_workflow.stages.semfs (rule semfs_run)."""

from otfs_workflow.protocol import parse_pair
from otfs_workflow.stages import domain_caches, job, semfs, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "semfs", code=sm.input.code):
    w = sm.wildcards
    source, target = parse_pair(w.pair)
    semfs.run(
        caches=domain_caches(sm.input.caches),
        attributes_path=sm.input.attributes,
        feature_set=w.feature_set,
        domain=target,
        other=source,
        split=int(w.split),
        cfg=sm.params.semfs,
        output=sm.output.run,
    )
