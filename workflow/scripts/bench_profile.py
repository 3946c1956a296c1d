"""Snakemake wrapper of otfs_workflow.time_profile (rule pipeline_profile)."""

from pathlib import Path

from otfs_workflow.stages import job, snakemake_object
from otfs_workflow.time_profile import main

sm = snakemake_object()
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code):
    main(["--root", sm.params.root, "--out", str(Path(sm.output.csv).parent)])
