"""Snakemake wrapper of otfs.stages.wda (rules wda_*)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.provenance import provenance_record
from otfs.stages import job, wda

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, "wda"):
    out = dict(sm.output.items())
    if sm.rule == "wda_evaluate":
        wda.evaluate(sm.wildcards.dataset, list(sm.input.raw), sm.wildcards.method, sm.params.wda, sm.output.tsv)
    elif sm.rule == "wda_curves":
        wda.curves(sm.wildcards.dataset, list(sm.input.raw), sm.wildcards.method, sm.params.wda, sm.output.tsv)
    elif sm.rule == "make_wda_table1":
        record = provenance_record(inputs=list(sm.input.runs), params={"wda": sm.params.wda}, config=sm.config)
        wda.table1(list(sm.input.runs), sm.params.wda, out, record)
    elif sm.rule == "plot_wda_figure2":
        wda.figure2(list(sm.input.runs), sm.params.wda, out)
    elif sm.rule == "make_wda_office":
        wda.office(list(sm.input.runs), out, sm.params.feature_set)
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
