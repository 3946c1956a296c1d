"""Snakemake wrapper of otfs_workflow.benchmark.profile (rule pipeline_profile)."""

from pathlib import Path

from otfs_workflow.benchmark.profile import main
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code):
    main(["--root", sm.params.root, "--out", str(Path(sm.output.csv).parent)])
