"""Snakemake wrapper of otfs_workflow.stages.semfs_report (rules make_semfs_table, plot_semfs_figure)."""

from otfs_workflow.provenance import provenance_record
from otfs_workflow.stages import job, semfs_report, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "semfs", code=sm.input.code):
    out = dict(sm.output.items())
    cfg = sm.params.semfs
    if sm.rule == "make_semfs_table":
        record = provenance_record(inputs=list(sm.input.runs), params={"semfs": cfg}, config=sm.config)
        semfs_report.table(
            inputs=list(sm.input.runs),
            cfg=cfg,
            outputs=out,
            provenance=record,
        )
    elif sm.rule == "plot_semfs_figure":
        semfs_report.figure(
            inputs=list(sm.input.runs),
            cfg=cfg,
            outputs=out,
        )
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
