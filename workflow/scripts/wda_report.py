"""Snakemake wrapper of otfs_workflow.stages.wda_report (rules make_wda_table1, make_wda_ablation, plot_wda_figure2,
make_wda_office)."""

from otfs_workflow.provenance import provenance_record
from otfs_workflow.stages import job, snakemake_object, wda_report

sm = snakemake_object()
with job(sm.log[0], sm.threads, "wda", code=sm.input.code):
    out = dict(sm.output.items())
    if sm.rule == "make_wda_table1":
        record = provenance_record(inputs=list(sm.input.runs), params={"wda": sm.params.wda}, config=sm.config)
        wda_report.table1(
            inputs=list(sm.input.runs),
            cfg=sm.params.wda,
            outputs=out,
            provenance=record,
        )
    elif sm.rule == "make_wda_ablation":
        runs = [*sm.input.runs, *sm.input.table1_runs]
        record = provenance_record(inputs=runs, params={"wda": sm.params.wda}, config=sm.config)
        wda_report.ablation(
            inputs=list(sm.input.runs),
            table1_runs=list(sm.input.table1_runs),
            cfg=sm.params.wda,
            outputs=out,
            provenance=record,
        )
    elif sm.rule == "plot_wda_figure2":
        wda_report.figure2(
            inputs=list(sm.input.runs),
            cfg=sm.params.wda,
            outputs=out,
        )
    elif sm.rule == "make_wda_office":
        wda_report.office(
            inputs=list(sm.input.runs),
            outputs=out,
            feature_set=sm.params.feature_set,
        )
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
