"""Snakemake wrapper of otfs.benchmark (rules benchmark_suite, scaling_study, pipeline_profile)."""

import sys
from pathlib import Path

# Run this checkout's library (Snakemake copies scripts before running them).
sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))  # noqa: F821

from otfs.stages import job

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, sm.rule) as logger:
    out = Path(sm.output.csv).parent
    if sm.rule == "benchmark_suite":
        from otfs.benchmark.suite import write_suite

        rc = write_suite(
            out, size=sm.params.size, repeats=sm.params.repeats, order_check=sm.params.order_check,
            cache_root="data/cache", iterations=sm.params.iterations, per_class=sm.params.per_class,
            per_class_overrides=sm.params.per_class_overrides, log=logger.info,
        )
        if rc:
            raise RuntimeError(f"an implementation's results differ from the reference's; see {sm.output.csv}")
    elif sm.rule == "scaling_study":
        from otfs.benchmark.scaling import main

        main(["--out", str(out), "--d", *map(str, sm.params.d), "--nt", *map(str, sm.params.n_t)])
    elif sm.rule == "pipeline_profile":
        from otfs.benchmark.profile import main

        main(["--root", sm.params.root, "--out", str(out)])
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
