"""End to end: the SURF Figure 7 target against the paper's protocol as one plain script.

``plain_figure7`` runs the paper's protocol the straightforward way, in one
process: read the ``.mat`` files, normalise, and for every pair and
iteration rank with POT's ``ot.da`` classes (:func:`reference.rank`) and
score each point of the three curves with a fresh 1-NN classifier
(:func:`reference.na_curve`). It draws the same source subsets and random
orders as the pipeline (seeds from feature set, pair and iteration), so its
accuracies must equal the pipeline's.

The authors' released protocol (:mod:`otfs_benchmarks.authors`, step for
step with the installed POT) is the second reference, run in a process of
its own as their script runs.

``python -m otfs_benchmarks.end_to_end --mirror DIR --workdir DIR`` times
all three in one run: the pipeline from a cold cache (a fresh copy of the
workflow, data acquired from the mirror, every job of ``figure7`` for SURF,
Snakemake's overhead included, ``--cores`` as given), the authors' protocol
and the plain script, each timed once by pytest-benchmark
(:func:`otfs_benchmarks.timing.time_once`). It writes ``end_to_end.csv`` with the wall times, the
ratios, the largest accuracy difference against the plain script, and the
median wall time of the pipeline's selection, ranking and NA-classification
jobs (from their Snakemake benchmark files); ``end_to_end_jobs.csv`` holds
every job's record.

Beside them, the CPU time of ``snakemake -n figure7``, a second run and after,
by pytest-benchmark with the children's CPU clock (:func:`_time_dry_runs`):
in the fresh copy before the build (the default configuration, its jobs
still to plan), in the same copy once Figure 7 for SURF is built (nothing
to plan), and, the floor both stand on, a workflow of one rule whose job has
a ``params:`` entry and whose output is present (Snakemake's import, its
plug-ins and its check of a job's parameters, without this workflow).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io

from otfs.preprocessing import row_sum_normalize, zscore
from otfs.rankers import feature_orders
from otfs_benchmarks import checkout, reference
from otfs_benchmarks.timing import time_once, time_rounds
from otfs_workflow.io import write_csv
from otfs_workflow.protocol import derive_seed, draw_source_subset, feature_counts, make_pairs

__all__ = ["MARKER", "check_mirror", "dry_run_figures", "job_times", "overhead_figures", "plain_figure7",
           "prepare_workdir", "run_pipeline"]

DOMAINS = ("amazon", "caltech10", "dslr", "webcam")
#: What a fresh copy of the workflow needs (everything but data and results).
WORKFLOW_FILES = ["Snakefile", "config.yaml", "config", "envs", "profiles", "workflow", "src", "benchmarks", "data/manifests",
                  "data/paper", "data/attributes", "data/benchmarks"]


def copy_workflow(repo, dest) -> Path:
    """Copy the workflow's files from ``repo`` to ``dest`` (no data, no results)."""
    repo, dest = Path(repo), Path(dest)
    for name in WORKFLOW_FILES:
        src = repo / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def plain_figure7(mat_dir, iterations=19, per_class=20, overrides=None, feature_set="surf",
                  pairs=None) -> pd.DataFrame:
    """The paper's Figure 7 protocol for SURF as a plain loop; one row per (pair, iteration, order, n)."""
    overrides = {"dslr": 8} if overrides is None else overrides
    data = {}
    for d in DOMAINS:
        mat = scipy.io.loadmat(Path(mat_dir) / f"{d}.mat")
        # C order, as the pipeline's cache: MATLAB arrays load in Fortran order, and
        # the z-score's sums in the other order differ by ~1e-13, which is enough
        # to flip the exact ties of Algorithm 1's coupling and change T_u.
        X = np.ascontiguousarray(mat["fts"], dtype=float)
        data[d] = (zscore(row_sum_normalize(X)), np.asarray(mat["labels"]).ravel().astype(int))
    rows = []
    for pair in make_pairs(DOMAINS) if pairs is None else pairs:
        s, t = pair.split("-")
        (Xs_all, ys_all), (Xt, yt) = data[s], data[t]
        counts = feature_counts(Xt.shape[1])
        for it in range(iterations):
            sub = draw_source_subset(ys_all, overrides.get(s, per_class),
                                     random_state=derive_seed(feature_set, pair, it, "source_subset"),
                                     classes=range(1, 11))
            Xs, ys = Xs_all[sub], ys_all[sub]
            scores = reference.rank(Xs, Xt)
            orders = feature_orders(scores, random_state=derive_seed(feature_set, pair, it, "random_order"))
            for name, order in orders.items():
                for n, acc in zip(counts, reference.na_curve(Xs, ys, Xt, yt, order, counts), strict=True):
                    rows.append({"pair": pair, "iteration": it, "order": name, "n_features": n, "accuracy": acc})
    return pd.DataFrame(rows)


#: Written into the work folder by :func:`prepare_workdir`: only a folder holding it is ever deleted.
MARKER = ".otfs-end-to-end"


def check_mirror(mirror) -> Path:
    """The mirror folder, holding SURF's four ``.mat`` files; else a ``ValueError`` naming what is missing."""
    mirror = Path(mirror)
    missing = [d for d in DOMAINS if not (mirror / "surf" / f"{d}.mat").is_file()]
    if missing:
        raise ValueError(f"--mirror {mirror}: no surf/<domain>.mat for {missing}; it must name the office-caltech "
                         "data folder (the one holding surf/amazon.mat)")
    return mirror.resolve()


def prepare_workdir(workdir) -> Path:
    """An empty ``workdir`` with a marker file; a folder is only ever deleted if a previous run marked it.

    A non-empty folder without the marker is refused (it may be the user's),
    as is a path that is not a folder.
    """
    workdir = Path(workdir)
    if workdir.exists() or workdir.is_symlink():
        if not workdir.is_dir() or workdir.is_symlink():
            raise FileExistsError(f"--workdir {workdir}: exists and is not a folder; choose another path")
        if any(workdir.iterdir()):
            if not (workdir / MARKER).is_file():
                raise FileExistsError(
                    f"--workdir {workdir}: not empty, and not made by this command (no {MARKER} file in it); "
                    "it is left untouched. Choose another --workdir, or empty that folder yourself"
                )
            shutil.rmtree(workdir)  # made by a previous run of this command
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / MARKER).write_text("made by python -m otfs_benchmarks.end_to_end; deleted by its next run\n")
    return workdir


def run_pipeline(repo, workdir, mirror, cores=2, iterations=19,
                 dry_run_rounds: int = 0) -> tuple[float, pd.DataFrame, dict]:
    """Copy the workflow to ``workdir``, build Figure 7 for SURF from nothing; return (seconds, results, the
    dry runs' figures of :func:`dry_run_figures` over ``dry_run_rounds`` rounds, empty where 0)."""
    repo = Path(repo)
    mirror = check_mirror(mirror)
    workdir = prepare_workdir(workdir)
    copy_workflow(repo, workdir)
    config = workdir / "config" / "figure7_surf.yaml"
    config.write_text(
        f"protocol:\n  iterations: {int(iterations)}\ntargets:\n  figure7:\n    feature_sets: [surf]\n"
    )
    from otfs_workflow.stages import JOB_TIMES_ENV

    # every job appends its times there (otfs_workflow.stages.job): the jobs' overhead, in compare
    env = {**os.environ, "OTFS_DATA_MIRROR": str(mirror), JOB_TIMES_ENV: str(workdir / JOB_TIMES_FILE)}
    env.pop("PYTHONPATH", None)
    dry = {}
    if dry_run_rounds:  # before anything is built: the default configuration's Figure 7, every job to plan
        dry |= _time_dry_runs({"fresh": lambda: _dry_run(workdir, env)}, dry_run_rounds, workdir / "timing")
    seconds = time_once({"pipeline": lambda: _run_snakemake(workdir, cores, env)},
                        workdir=workdir / "timing")["pipeline"]["seconds"]
    if dry_run_rounds:
        floor = _floor_workflow(workdir / "floor", env)
        dry |= _time_dry_runs({"built": lambda: _dry_run(workdir, env, "--configfile", str(config)),
                               "floor": lambda: _dry_run(floor, env, target="floor")},
                              dry_run_rounds, workdir / "timing")
    frames = [pd.read_csv(p, sep="\t", keep_default_na=False)
              for p in sorted((workdir / "results" / "runs" / "surf" / "classification").rglob("*.tsv"))]
    return seconds, pd.concat(frames, ignore_index=True), dry


#: A workflow of one rule whose job has a ``params:`` entry: the floor of a dry run (Snakemake's import and
#: plug-ins, and its check of a job's parameters, which imports pandas where it is installed).
FLOOR_SNAKEFILE = """\
rule floor:
    output:
        "floor.txt",
    params:
        value=1,
    shell:
        "echo {params.value} > {output}"
"""


def _floor_workflow(folder: Path, env) -> Path:
    """:data:`FLOOR_SNAKEFILE` in ``folder``, its output built (a dry run then has nothing to plan)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Snakefile").write_text(FLOOR_SNAKEFILE)
    with open(folder / "build.log", "w") as log:
        subprocess.run(_snakemake(folder, "--cores", "1", "floor"), check=True, env=env, cwd=folder, stdout=log,
                       stderr=subprocess.STDOUT)
    return folder


def _dry_run(folder: Path, env, *args: str, target: str = "figure7") -> int:
    """``snakemake -n <target>`` in ``folder``; the number of jobs it plans (0: nothing to be done)."""
    proc = subprocess.run(_snakemake(folder, *args, "--cores", "2", "-n", target), env=env, cwd=folder,
                          capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"snakemake -n {target} {' '.join(args)} in {folder} failed ({proc.returncode}): "
                           f"{(proc.stdout + proc.stderr).strip()[-2000:]}")
    total = re.search(r"^total\s+(\d+)\s*$", proc.stdout, re.MULTILINE)
    return int(total.group(1)) if total else 0


def _time_dry_runs(runs, rounds: int, timing_dir: Path) -> dict:
    """Each of ``runs`` timed by its process's CPU over ``rounds`` rounds after one untimed run (the one that
    keeps the plan's answers: a second run and after); ``dry_run_<name>_cpu_s`` (median), ``_min_s``,
    ``_max_s`` and ``_jobs`` for each."""
    measured = time_rounds(runs, rounds=rounds, workdir=timing_dir, warmup_rounds=1,
                           timer="otfs_benchmarks.timing.children_cpu_time")
    out = {"dry_run_rounds": rounds}
    for name, m in measured.items():
        out |= {f"dry_run_{name}_cpu_s": m["seconds"], f"dry_run_{name}_cpu_min_s": m["min"],
                f"dry_run_{name}_cpu_max_s": m["max"], f"dry_run_{name}_jobs": m["output"]}
    return out


def dry_run_figures(row) -> str:
    """The dry runs of ``row`` (a row of ``end_to_end.csv``) in one line, or "" where none were timed."""
    if pd.isna(row.get("dry_run_built_cpu_s", np.nan)):
        return ""
    return (f"dry run of figure7, CPU over {int(row['dry_run_rounds'])} runs (median, range): fresh copy "
            f"{row['dry_run_fresh_cpu_s']:.2f} s ({row['dry_run_fresh_cpu_min_s']:.2f}-"
            f"{row['dry_run_fresh_cpu_max_s']:.2f}, {int(row['dry_run_fresh_jobs'])} jobs to plan), built "
            f"{row['dry_run_built_cpu_s']:.2f} s ({row['dry_run_built_cpu_min_s']:.2f}-"
            f"{row['dry_run_built_cpu_max_s']:.2f}); a one-rule workflow {row['dry_run_floor_cpu_s']:.2f} s "
            f"({row['dry_run_floor_cpu_min_s']:.2f}-{row['dry_run_floor_cpu_max_s']:.2f})")


def _snakemake(folder: Path, *args: str) -> list[str]:
    """The command line of this interpreter's Snakemake on the workflow in ``folder``, run there."""
    return [sys.executable, "-m", "snakemake", "--directory", str(folder), "--snakefile", str(folder / "Snakefile"),
            *args]


def _run_snakemake(workdir, cores, env):
    with open(workdir / "snakemake.log", "w") as log:
        subprocess.run(
            _snakemake(workdir, "--configfile", str(workdir / "config" / "figure7_surf.yaml"), "--cores", str(cores),
                       "figure7"),
            check=True, env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
        )


def compare(repo, workdir, mirror, out, cores=2, iterations=19, log=print, authors: bool = True,
            dry_run_rounds: int = 0) -> dict:
    """Time the pipeline and the plain script, compare their accuracies, write ``end_to_end.csv``; with
    ``dry_run_rounds``, time the dry runs too (:func:`run_pipeline`)."""
    mirror = check_mirror(mirror)  # before anything is touched; resolved: the nested pipeline runs elsewhere
    pipe_s, pipe, dry = run_pipeline(repo, workdir, mirror, cores, iterations, dry_run_rounds=dry_run_rounds)
    log(f"pipeline (snakemake --cores {cores} figure7, SURF, cold cache): {pipe_s:.1f} s")
    if dry:
        log(dry_run_figures(dry))
    # One BLAS thread, as every pipeline job: the exact OT of Algorithm 1 has
    # tied optimal couplings, and the cost matrix's round-off, which depends on
    # the BLAS thread count, picks among them (see docs/protocol.md).
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        timed = time_once({"plain script": lambda: plain_figure7(Path(mirror) / "surf", iterations=iterations)},
                          workdir=Path(workdir) / "timing")["plain script"]
    plain, plain_s = timed["output"], timed["seconds"]
    log(f"plain script with the straightforward implementations (1 BLAS thread): {plain_s:.1f} s")
    keys = ["pair", "iteration", "order", "n_features"]
    merged = plain.merge(pipe[keys + ["accuracy"]], on=keys, suffixes=("_plain", "_pipeline"), validate="1:1")
    diff = float(np.abs(merged["accuracy_plain"] - merged["accuracy_pipeline"]).max())
    row = {"case": "Figure 7, SURF, cold cache", "iterations": iterations, "cores": cores,
           "pipeline_s": pipe_s, "plain_script_s": plain_s, "ratio": plain_s / pipe_s,
           "accuracies": len(merged), "max_accuracy_difference": diff, **dry}
    log(f"{len(merged)} accuracies compared; largest difference {diff:g} points; ratio {row['ratio']:.1f}x")
    if authors:
        ref = run_authors(Path(mirror) / "surf", iterations, Path(workdir) / "timing")
        log(f"the authors' protocol (POT {ref['pot']}, SinkhornTransport method {ref['sinkhorn_method']}): "
            f"{ref['wall_s']:.1f} s, {ref['accuracies']} accuracies")
        row.update({"authors_script_s": ref["wall_s"], "ratio_authors": ref["wall_s"] / pipe_s,
                    "authors_accuracies": ref["accuracies"], "authors_pot": ref["pot"],
                    "authors_sinkhorn_method": ref["sinkhorn_method"]})
    jobs = job_times(Path(workdir) / "logs" / "benchmarks")
    for rule in JOB_RULES:
        times = jobs.loc[jobs["rule"] == rule, "seconds"]
        row[f"median_{rule}_s"] = float(times.median()) if len(times) else float("nan")
    row["jobs"] = len(jobs)
    log("median job wall time: " + ", ".join(f"{r} {row[f'median_{r}_s']:.2f} s" for r in JOB_RULES))
    job_s = float(jobs["seconds"].sum())
    over = overhead_figures(Path(workdir) / JOB_TIMES_FILE, job_s)
    row.update({"job_s": job_s, "overhead_s": over["overhead_s"], "jobs_timed": over["jobs_timed"]})
    log(f"job time {job_s:.1f} s, of which {over['overhead_s']:.1f} s not the jobs' code "
        f"({over['jobs_timed']} of {len(jobs)} jobs timed)")
    write_csv(pd.DataFrame([row]), Path(out) / "end_to_end.csv", float_format="%.4g")
    write_csv(jobs, Path(out) / "end_to_end_jobs.csv", float_format="%.4g")
    return row


#: The file, in the nested pipeline's folder, of its jobs' times (:data:`otfs_workflow.stages.JOB_TIMES_ENV`).
JOB_TIMES_FILE = "job-times.tsv"

#: The rules whose median job time is a goal (the NA classification jobs of Figure 7 are ``classify``).
JOB_RULES = ("rank_features", "classify")


def job_times(root) -> pd.DataFrame:
    """Every job's Snakemake benchmark record under ``root``: ``rule``, ``file``, ``seconds``, ``max_rss_mb``."""
    from otfs_workflow.time_profile import collect_benchmarks

    df = collect_benchmarks(root)
    df.insert(0, "rule", [Path(f).parts[0] for f in df["file"]])
    return df.drop(columns="group")


def overhead_figures(times_file, job_s: float) -> dict:
    """Sum the jobs' lines of ``times_file`` (:data:`otfs_workflow.stages.JOB_TIMES_COLUMNS`) over a run whose
    benchmark records sum to ``job_s`` seconds.

    ``overhead_s`` is what is not the jobs' own code: the time before it (interpreter, Snakemake's preamble,
    imports), the imports it made, the check after it, and the part of the records outside the jobs'
    processes' measured time (Snakemake starting and ending each job; a job without a line counts whole).
    """
    from otfs_workflow.stages import JOB_TIMES_COLUMNS

    path = Path(times_file)
    t = (pd.read_csv(path, sep="\t", names=list(JOB_TIMES_COLUMNS), header=None) if path.is_file()
         else pd.DataFrame(columns=list(JOB_TIMES_COLUMNS)))
    sums = {c: float(t[c].sum()) for c in ("before_s", "imports_s", "after_s", "body_s")}
    code_s = sums["body_s"] - sums["imports_s"]
    return {"jobs_timed": len(t), **sums, "overhead_s": max(0.0, job_s - code_s) if len(t) else np.nan}


def _authors_env() -> dict:
    """The environment of the authors' run: POT's optional backends off, as in every pipeline job.

    Their script imports POT, which imports PyTorch where it is installed
    (here it is, for the feature extraction): 1.2 s the pipeline's jobs do
    not pay. The reference is not charged for it either.
    """
    from otfs_workflow.stages import POT_OPTIONAL_BACKENDS

    repo = checkout()
    return {**os.environ, **dict.fromkeys(POT_OPTIONAL_BACKENDS, "1"),
            "PYTHONPATH": os.pathsep.join(p for p in (str(repo / "src"), str(repo / "workflow" / "lib"),
                                                        os.environ.get("PYTHONPATH")) if p)}


def run_authors(mat_dir, iterations: int, workdir) -> dict:
    """The authors' protocol in a fresh interpreter; its record with ``wall_s`` measured from outside (by
    pytest-benchmark, in ``workdir``: the session's configuration file)."""
    timed = time_once({"authors' script": lambda: subprocess.run(
        [sys.executable, "-m", "otfs_benchmarks.authors", "--mat-dir", str(mat_dir), "--iterations",
         str(int(iterations))], capture_output=True, text=True, check=False, env=_authors_env())},
        workdir=workdir)["authors' script"]
    done, wall = timed["output"], timed["seconds"]
    if done.returncode != 0:
        raise RuntimeError(f"the authors' protocol failed: {done.stderr.strip()[-2000:]}")
    import json

    return {**json.loads(done.stdout.strip().splitlines()[-1]), "wall_s": wall}


#: Largest accuracy difference (points) counted as equal: the results TSVs hold 10 digits.
TOLERANCE = 1e-6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs_benchmarks.end_to_end", description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("OTFS_DATA_MIRROR"), help="office-caltech mirror folder")
    parser.add_argument("--workdir", default="/tmp/otfs-end-to-end")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=19)
    parser.add_argument("--out", default="results/benchmarks")
    parser.add_argument("--no-authors", action="store_true", help="do not time the authors' protocol")
    parser.add_argument("--dry-run-rounds", type=int, default=5,
                        help="timed rounds of each dry run of figure7 (0: none)")
    args = parser.parse_args(argv)
    if args.dry_run_rounds < 0:
        parser.error(f"--dry-run-rounds must be 0 or more; got {args.dry_run_rounds}")
    if not args.mirror:
        raise SystemExit("--mirror (or OTFS_DATA_MIRROR) must name the office-caltech data folder")
    try:
        check_mirror(args.mirror)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    row = compare(checkout(), args.workdir, args.mirror, args.out, args.cores, args.iterations,
                  authors=not args.no_authors, dry_run_rounds=args.dry_run_rounds)
    return 0 if row["max_accuracy_difference"] <= TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
