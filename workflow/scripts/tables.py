"""Snakemake wrapper of otfs_workflow.stages.tables (rules make_table*, make_comparison)."""

from otfs_workflow.stages import job, tables

with job(snakemake.log[0], snakemake.threads, "tables", code=snakemake.input.code):  # noqa: F821
    p = snakemake.params  # noqa: F821
    outputs = dict(snakemake.output.items())  # noqa: F821
    published = getattr(snakemake.input, "published", None)  # noqa: F821
    if p.kind == "table1":
        tables.table1(
            aggregates=p.aggregates,
            n_features=p.n_features,
            published=published,
            outputs=outputs,
            caption=p.caption,
        )
    elif p.kind == "table2":
        tables.table2(
            aggregates=p.aggregates,
            counts=p.counts,
            published=published,
            outputs=outputs,
            caption=p.caption,
        )
    elif p.kind == "table3":
        tables.table3(
            aggregates=p.aggregates,
            counts=p.counts,
            published=published,
            outputs=outputs,
            caption=p.caption,
        )
    elif p.kind == "table5":
        tables.table5(
            aggregates=p.aggregates,
            counts=p.counts,
            published=published,
            outputs=outputs,
            caption=p.caption,
        )
    elif p.kind == "table6":
        tables.table6(
            aggregates=p.aggregates,
            n_features=p.n_features,
            published=published,
            outputs=outputs,
            caption=p.caption,
        )
    elif p.kind == "figure2":
        tables.figure2(
            aggregates=p.aggregates,
            published=published,
            output=outputs["comparison"],
        )
    elif p.kind == "summary":
        tables.summary(
            comparisons=list(snakemake.input.comparisons),  # noqa: F821
            outputs=outputs,
        )
    else:
        raise ValueError(f"unknown table kind {p.kind!r}")
