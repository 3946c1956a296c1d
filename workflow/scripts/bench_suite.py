"""Snakemake wrapper of otfs_benchmarks.suite (rule benchmark_suite)."""

from pathlib import Path

from otfs_benchmarks.suite import write_suite
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code) as logger:
    rc = write_suite(
        Path(sm.output.csv).parent, size=sm.params.size, repeats=sm.params.repeats,
        order_check=sm.params.order_check, cache_root="data/cache", iterations=sm.params.iterations,
        per_class=sm.params.per_class, per_class_overrides=sm.params.per_class_overrides, log=logger.info,
    )
    if rc:
        raise RuntimeError(f"an implementation's results differ from the reference's; see {sm.output.csv}")
