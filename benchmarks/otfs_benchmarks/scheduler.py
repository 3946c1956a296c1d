"""Snakemake's own CPU time on many short jobs, with and without :func:`otfs_workflow.snakemake_scheduler.coalesce_reevaluations`.

:func:`run` writes a toy workflow of ``n_jobs`` independent shell jobs (each
sleeps ``sleep_s``, so the jobs themselves use almost no CPU), runs it with
``--cores cores`` once as Snakemake ships and once with the patch applied by
the Snakefile, and records for each the wall time, the CPU time of the
Snakemake process (its own and its reaped children's, which here are the
sleeping shells) and its number of scheduling rounds (the ``Ready jobs``
lines of ``--verbose``).

Command line: ``python -m otfs_benchmarks.scheduler [--jobs 300] [--sleep 0.5] [--cores 2]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from otfs_benchmarks import REPO

__all__ = ["run", "toy_workflow"]

#: The folder holding the pipeline package (workflow/lib/), put on the toy workflow's path.
SRC = REPO / "workflow" / "lib"


def toy_workflow(folder, n_jobs: int, sleep_s: float) -> Path:
    """Write the toy Snakefile into ``folder``; ``--config coalesce=1`` applies the patch."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    snakefile = folder / "Snakefile"
    snakefile.write_text(f"""\
import sys
sys.path.insert(0, {str(SRC)!r})
if config.get("coalesce"):
    from otfs_workflow.snakemake_scheduler import coalesce_reevaluations
    assert coalesce_reevaluations()

rule all:
    input: expand("out/{{i}}.txt", i=range({int(n_jobs)}))

rule one:
    output: "out/{{i}}.txt"
    shell: "sleep {float(sleep_s)}; echo {{wildcards.i}} > {{output}}"
""")
    return snakefile


def _run_once(folder: Path, cores: int, coalesce: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(folder / "Snakefile"), "--directory", str(folder),
           "--cores", str(cores), "--verbose", "--config", f"coalesce={int(coalesce)}"]
    start = time.perf_counter()
    with open(folder / f"snakemake-{int(coalesce)}.log", "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"the toy workflow failed ({proc.returncode}); see {folder}/snakemake-{int(coalesce)}.log")
    text = (folder / f"snakemake-{int(coalesce)}.log").read_text()
    return {"coalesce": coalesce, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "rounds": sum(line.startswith("Ready jobs") for line in text.splitlines())}


def run(n_jobs: int = 300, sleep_s: float = 0.5, cores: int = 2, folder=None) -> list[dict]:
    """Run the toy workflow as shipped, then with the patch; one record each (see the module's docstring)."""
    import shutil

    own = folder is None
    folder = Path(tempfile.mkdtemp(prefix="otfs-scheduler-") if own else folder)
    toy_workflow(folder, n_jobs, sleep_s)
    records = []
    try:
        for coalesce in (False, True):
            shutil.rmtree(folder / "out", ignore_errors=True)
            shutil.rmtree(folder / ".snakemake", ignore_errors=True)
            records.append({"jobs": n_jobs, "sleep_s": sleep_s, "cores": cores,
                            **_run_once(folder, cores, coalesce)})
    finally:
        if own:
            shutil.rmtree(folder, ignore_errors=True)
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs_benchmarks.scheduler", description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--sleep", type=float, default=0.5)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args(argv)
    for r in run(args.jobs, args.sleep, args.cores):
        print(f"{'patched' if r['coalesce'] else 'as shipped'}: {r['jobs']} jobs of {r['sleep_s']} s on "
              f"{r['cores']} cores: wall {r['wall_s']:.1f} s, Snakemake CPU {r['cpu_s']:.1f} s, "
              f"{r['rounds']} scheduling rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
