"""Snakemake wrapper of otfs_workflow.stages.plotting (rules plot_figure*)."""

from otfs_workflow.stages import job, plotting, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "plotting", code=smk.input.code):
    p = smk.params
    outputs = dict(smk.output.items())
    if p.kind == "curves":
        plotting.curves(panels=p.panels, outputs=outputs, title=p.title)
    elif p.kind == "figure5":
        plotting.figure5(
            n_per_class=p.spec["samples_per_class"], reg=p.spec["reg"], eta=p.spec["eta"],
            seed=p.spec["seed"], outputs=outputs,
        )
    elif p.kind == "figure6":
        plotting.figure6(seed=p.spec["seed"], outputs=outputs)
    else:
        raise ValueError(f"unknown figure kind {p.kind!r}")
