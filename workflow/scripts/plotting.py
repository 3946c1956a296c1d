"""Snakemake wrapper of otfs_workflow.stages.plotting (rules plot_figure*)."""

from otfs_workflow.stages import job, plotting

with job(snakemake.log[0], snakemake.threads, "plotting", code=snakemake.input.code):  # noqa: F821
    p = snakemake.params  # noqa: F821
    outputs = dict(snakemake.output.items())  # noqa: F821
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
