"""Snakemake wrapper of otfs_workflow.run_log.write_data_notes (rule data_notes)."""

from otfs_workflow.run_log import read_conditions, write_data_notes
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "data_notes", code=sm.input.code):
    write_data_notes(read_conditions(folder=sm.params.folder), sm.output.csv, sm.output.md)
