"""Snakemake wrapper of otfs.benchmark.profile (rule pipeline_profile)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.benchmark.profile import main
from otfs.stages import job

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code):
    main(["--root", sm.params.root, "--out", str(Path(sm.output.csv).parent)])
