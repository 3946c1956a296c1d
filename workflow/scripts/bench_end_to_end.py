"""Snakemake wrapper of otfs.benchmark.end_to_end (rule end_to_end)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.benchmark.end_to_end import TOLERANCE, compare
from otfs.stages import job

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code) as logger:
    row = compare(Path(sm.scriptdir).resolve().parents[1], Path(sm.params.workdir).resolve(), sm.params.mirror,
                  Path(sm.output.csv).parent, cores=sm.threads, iterations=sm.params.iterations, log=logger.info)
    if row["max_accuracy_difference"] > TOLERANCE:
        raise RuntimeError(f"the pipeline's and the plain script's accuracies differ; see {sm.output.csv}")
