"""Snakemake wrapper of otfs.benchmark.scaling (rule scaling_study)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.benchmark.scaling import main
from otfs.stages import job

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code):
    main(["--out", str(Path(sm.output.csv).parent), "--d", *map(str, sm.params.d), "--nt", *map(str, sm.params.n_t)])
