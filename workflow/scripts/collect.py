"""Snakemake wrapper of otfs.stages.aggregation.collect (rule collect_results)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.stages import aggregation, job

with job(snakemake.log[0], snakemake.threads, "collect", code=snakemake.input.code):  # noqa: F821
    aggregation.collect(list(snakemake.input.tables), snakemake.output.tsv)  # noqa: F821
