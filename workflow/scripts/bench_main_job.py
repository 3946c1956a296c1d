"""Snakemake wrapper of otfs_benchmarks.main_job (rule main_job_timing)."""

from pathlib import Path

import pandas as pd

from otfs_benchmarks.main_job import plot_stages, run, target_name
from otfs_workflow.io import write_csv
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code) as logger:
    targets = [list(t) if isinstance(t, (list, tuple)) else t for t in sm.params.targets]
    runs, stages = run(Path(sm.scriptdir).resolve().parents[1], Path(sm.params.workdir).resolve(), targets,
                       cores=sm.threads, log=logger.info)
    write_csv(runs, sm.output.csv, float_format="%.4g")
    write_csv(stages, sm.output.stages, float_format="%.4g")
    plot_stages(stages, pd.read_csv(sm.input.before), sm.output.pdf,
                target=target_name(targets[0]) if targets else "available")
