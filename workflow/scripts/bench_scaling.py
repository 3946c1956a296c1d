"""Snakemake wrapper of otfs_benchmarks.scaling (rule scaling_study)."""

from pathlib import Path

from otfs_benchmarks.scaling import main
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code):
    main(["--out", str(Path(sm.output.csv).parent), "--d", *map(str, sm.params.d), "--nt", *map(str, sm.params.n_t)])
