"""Snakemake wrapper of otfs_benchmarks.goals (rule benchmark_goals)."""

from otfs_benchmarks.goals import goals_markdown, goals_table
from otfs_workflow.io import write_csv, write_text
from otfs_workflow.stages import job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, sm.rule, code=sm.input.code) as logger:
    df = goals_table(sm.input.bench, sm.input.end_to_end, sm.input.table3, sm.input.scaling, sm.input.main_job,
                     sm.input.main_job_stages)
    write_csv(df, sm.output.csv)
    write_text(sm.output.md, goals_markdown(df))
    logger.info("\n%s", goals_markdown(df))
