"""Snakemake wrapper of otfs_benchmarks.end_to_end (rule end_to_end)."""

from pathlib import Path

from otfs_benchmarks.end_to_end import TOLERANCE, compare
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code) as logger:
    row = compare(Path(sm.scriptdir).resolve().parents[1], Path(sm.params.workdir).resolve(), sm.params.mirror,
                  Path(sm.output.csv).parent, cores=sm.threads, iterations=sm.params.iterations, log=logger.info,
                  authors=sm.params.authors, dry_run_rounds=sm.params.dry_run_rounds)
    if row["max_accuracy_difference"] > TOLERANCE:
        raise RuntimeError(f"the pipeline's and the plain script's accuracies differ; see {sm.output.csv}")
