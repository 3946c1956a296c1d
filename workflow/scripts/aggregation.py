"""Snakemake wrapper of otfs.stages.aggregation (rule aggregate)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.stages import aggregation, job

with job(snakemake.log[0], snakemake.threads, "aggregation", code=snakemake.input.code):  # noqa: F821
    aggregation.run(
        run_tables=list(snakemake.input.runs),  # noqa: F821
        caches=list(snakemake.input.caches),  # noqa: F821
        outputs=dict(snakemake.output.items()),  # noqa: F821
        params=dict(snakemake.params.run),  # noqa: F821
        config=snakemake.config,  # noqa: F821
    )
