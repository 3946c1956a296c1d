"""Snakemake wrapper of otfs.benchmark (the rules of workflow/rules/benchmarks.smk)."""

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
    elif sm.rule == "end_to_end":
        from otfs.benchmark.end_to_end import TOLERANCE, compare

        row = compare(Path(sm.scriptdir).resolve().parents[1], Path(sm.params.workdir).resolve(), sm.params.mirror,
                      out, cores=sm.threads, iterations=sm.params.iterations, log=logger.info)
        if row["max_accuracy_difference"] > TOLERANCE:
            raise RuntimeError(f"the pipeline's and the plain script's accuracies differ; see {sm.output.csv}")
    elif sm.rule == "table3_4096":
        from otfs.benchmark.table3 import main

        main(["--workdir", sm.params.workdir, "--jobs", str(sm.threads), "--iterations", str(sm.params.iterations),
              "--d", str(sm.params.d), "--out", str(out)])
    elif sm.rule == "benchmark_goals":
        from otfs.benchmark.goals import goals_markdown, goals_table
        from otfs.io import atomic_path, write_text

        df = goals_table(sm.input.bench, sm.input.end_to_end, sm.input.table3, sm.input.scaling)
        with atomic_path(sm.output.csv) as tmp:
            df.to_csv(tmp, index=False)
        write_text(sm.output.md, goals_markdown(df))
        logger.info("\n%s", goals_markdown(df))
    elif sm.rule == "pipeline_profile":
        from otfs.benchmark.profile import main

        main(["--root", sm.params.root, "--out", str(out)])
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
