"""Snakemake wrapper of otfs_workflow.stages.invariance_report (rules make_invariance_table, plot_invariance_figure3)."""

from otfs_workflow.provenance import provenance_record
from otfs_workflow.stages import invariance_report, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "invariance", code=sm.input.code):
    out = dict(sm.output.items())
    if sm.rule == "make_invariance_table":
        record = provenance_record(inputs=list(sm.input.runs), params={"invariance": sm.params.invariance},
                                   config=sm.config)
        invariance_report.table(
            inputs=list(sm.input.runs),
            cfg=sm.params.invariance,
            outputs=out,
            provenance=record,
        )
    elif sm.rule == "plot_invariance_figure3":
        invariance_report.figure3(
            path=sm.input.run,
            cfg=sm.params.invariance,
            outputs=out,
        )
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
