"""Snakemake wrapper of otfs.stages.plotting (rule plot_figure7)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.stages import job, plotting

with job(snakemake.log[0], snakemake.threads, "plotting"):  # noqa: F821
    plotting.run(
        summary_path=snakemake.input.summary,  # noqa: F821
        provenance_path=snakemake.input.provenance,  # noqa: F821
        outputs=dict(snakemake.output.items()),  # noqa: F821
        title=snakemake.params.title,  # noqa: F821
    )
