"""Snakemake wrapper of otfs.benchmark.table3 (rule table3_4096)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.benchmark.table3 import main
from otfs.stages import job

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code):
    main(["--workdir", sm.params.workdir, "--jobs", str(sm.threads), "--iterations", str(sm.params.iterations),
          "--d", str(sm.params.d), "--out", str(Path(sm.output.csv).parent)])
