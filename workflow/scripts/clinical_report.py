"""Snakemake wrapper of otfs_workflow.stages.clinical_report (rules make_table4, plot_figure3, plot_figure4)."""

from otfs_workflow.stages import clinical_report, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "clinical", code=sm.input.code):
    cfg = sm.params.clinical
    out = dict(sm.output.items())
    if sm.rule == "make_table4":
        clinical_report.table4(
            voxels=sm.input.voxels,
            cfg=cfg,
            outputs=out,
            caption=sm.params.caption,
        )
    elif sm.rule == "plot_figure3":
        clinical_report.figure3(
            voxels=sm.input.voxels,
            cfg=cfg,
            outputs=out,
        )
    elif sm.rule == "plot_figure4":
        clinical_report.figure4(
            aggregates=sm.params.aggregates,
            rankings=list(sm.input.rankings),
            outputs=out,
        )
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
