"""Snakemake wrapper of otfs.stages.invariance (rule invariance_run)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.stages import domain_caches, invariance, job

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, "invariance", code=sm.input.code):
    invariance.run(domain_caches(sm.input.caches), sm.input.selection, sm.input.ranking, sm.params.invariance,
                   sm.output.run)
