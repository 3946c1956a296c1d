"""Snakemake wrapper of otfs.stages.tables (rules make_table*, make_comparison)."""

from otfs.stages import job, tables

with job(snakemake.log[0], snakemake.threads, "tables", code=snakemake.input.code):  # noqa: F821
    p = snakemake.params  # noqa: F821
    outputs = dict(snakemake.output.items())  # noqa: F821
    published = getattr(snakemake.input, "published", None)  # noqa: F821
    if p.kind == "table1":
        tables.table1(p.aggregates, p.n_features, published, outputs, p.caption)
    elif p.kind == "table2":
        tables.table2(p.aggregates, p.counts, published, outputs, p.caption)
    elif p.kind == "table3":
        tables.table3(p.aggregates, p.counts, published, outputs, p.caption)
    elif p.kind == "table5":
        tables.table5(p.aggregates, p.counts, published, outputs, p.caption)
    elif p.kind == "table6":
        tables.table6(p.aggregates, p.n_features, published, outputs, p.caption)
    elif p.kind == "figure2":
        tables.figure2(p.aggregates, published, outputs["comparison"])
    elif p.kind == "summary":
        tables.summary(list(snakemake.input.comparisons), outputs)  # noqa: F821
    else:
        raise ValueError(f"unknown table kind {p.kind!r}")
