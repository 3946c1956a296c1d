"""Snakemake wrapper of otfs_benchmarks.table3 (rule table3_4096)."""

from pathlib import Path

from otfs_benchmarks.table3 import main
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code):
    main(["--workdir", sm.params.workdir, "--jobs", str(sm.threads), "--iterations", str(sm.params.iterations),
          "--d", str(sm.params.d), "--out", str(Path(sm.output.csv).parent)])
