"""Snakemake wrapper of otfs.stages.acquisition (rule acquire)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.stages import acquisition, job

with job(snakemake.log[0], snakemake.threads, "acquisition"):  # noqa: F821
    acquisition.run(
        manifest_path=snakemake.input.manifest,  # noqa: F821
        relpath=snakemake.params.relpath,  # noqa: F821
        output=snakemake.output.raw,  # noqa: F821
        dataset=getattr(snakemake.params, "config_name", None) or snakemake.wildcards.dataset,  # noqa: F821
        dataset_cfg=snakemake.params.dataset,  # noqa: F821
    )
