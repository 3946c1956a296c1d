"""Snakemake wrapper of otfs_workflow.stages.tables (rules make_table*, compare_figure2, make_comparison).

``params.kind`` names the stage's function; it gets the rule's params, ``published`` and ``comparisons`` inputs
and outputs under its own parameters' names."""

import inspect

from otfs_workflow.stages import job, snakemake_object, tables

KINDS = ("table1", "table2", "table3", "table5", "table6", "figure2", "summary")

smk = snakemake_object()

with job(smk.log[0], smk.threads, "tables", code=smk.input.code):
    if smk.params.kind not in KINDS:
        raise ValueError(f"params.kind: one of {KINDS}, got {smk.params.kind!r}")
    make = getattr(tables, smk.params.kind)
    given = {
        **dict(smk.params.items()),
        "published": smk.input.get("published"),
        "comparisons": list(smk.input.get("comparisons", [])),
        "outputs": dict(smk.output.items()),
    }
    make(**{name: given[name] for name in inspect.signature(make).parameters})
