"""Snakemake wrapper of otfs_workflow.stages.boosting_report (rules make_boosting_table, plot_boosting_figure)."""

from otfs_workflow.provenance import provenance_record
from otfs_workflow.stages import boosting_report, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "boosting", code=sm.input.code):
    out = dict(sm.output.items())
    cfg = sm.params.boosting
    if sm.rule == "make_boosting_table":
        record = provenance_record(inputs=list(sm.input.runs), params={"boosting": cfg}, config=sm.config)
        boosting_report.table(
            inputs=list(sm.input.runs),
            cfg=cfg,
            feature_set=cfg["feature_set"],
            outputs=out,
            provenance=record,
        )
    elif sm.rule == "plot_boosting_figure":
        boosting_report.figure(
            inputs=list(sm.input.runs),
            cfg=cfg,
            feature_set=cfg["feature_set"],
            outputs=out,
        )
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
