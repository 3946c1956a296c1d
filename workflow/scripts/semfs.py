"""Snakemake wrapper of otfs.stages.semfs (rules semfs_run, make_semfs_table, plot_semfs_figure)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.protocol import parse_pair
from otfs.provenance import provenance_record
from otfs.stages import domain_caches, job, semfs

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, "semfs"):
    out = dict(sm.output.items())
    cfg = sm.params.semfs
    if sm.rule == "semfs_run":
        w = sm.wildcards
        source, target = parse_pair(w.pair)
        semfs.run(domain_caches(sm.input.caches), sm.input.attributes, w.feature_set, target, source, int(w.split),
                  cfg, sm.output.run)
    elif sm.rule == "make_semfs_table":
        record = provenance_record(inputs=list(sm.input.runs), params={"semfs": cfg}, config=sm.config)
        semfs.table(list(sm.input.runs), cfg, out, record)
    elif sm.rule == "plot_semfs_figure":
        semfs.figure(list(sm.input.runs), cfg, out)
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
