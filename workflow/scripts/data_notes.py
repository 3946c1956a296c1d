"""Snakemake wrapper of otfs_workflow.run_log.write_data_notes (rule data_notes): the conditions of the target's
jobs (otfs_workflow.run_log.scoped_conditions)."""

from otfs_workflow.run_log import read_conditions, scoped_conditions, write_data_notes
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "data_notes", code=sm.input.code):
    records = scoped_conditions(read_conditions(folder=sm.params.folder), sm.params.scope)
    write_data_notes(records, sm.output.csv, sm.output.md)
