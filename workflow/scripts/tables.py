"""Snakemake wrapper of otfs_workflow.stages.tables (rules make_table*, make_comparison)."""

from otfs_workflow.stages import job, snakemake_object, tables

smk = snakemake_object()

with job(smk.log[0], smk.threads, "tables", code=smk.input.code):
    p = smk.params
    outputs = dict(smk.output.items())
    published = getattr(smk.input, "published", None)
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
            comparisons=list(smk.input.comparisons),
            outputs=outputs,
        )
    else:
        raise ValueError(f"unknown table kind {p.kind!r}")
