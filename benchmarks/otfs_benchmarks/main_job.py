"""The main job, timed as a new user runs it: ``available`` from a fresh copy, then ``leaderboard`` warm.

:func:`run` copies the workflow into a work folder (no data, no results:
:func:`otfs_benchmarks.end_to_end.copy_workflow`), then runs each target of
``targets`` in order in that one folder, so a later target finds the
caches, features and results the earlier ones built (``leaderboard`` after
``available`` is "from a warm cache"). For each it records the wall time (timed once by
pytest-benchmark: :func:`otfs_benchmarks.timing.time_once`),
the number of jobs and their summed wall time, the largest peak memory of a
job, and the job time per stage (from the rules' benchmark files:
:func:`otfs_workflow.time_profile.collect_benchmarks`, grouped by stage with
:data:`STAGES`).

:func:`plot_stages` draws where the time goes by stage, beside a reference
profile (the same figures measured before a change: ``before``), so that a
change's effect on each stage is one figure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from otfs_benchmarks import checkout
from otfs_benchmarks.end_to_end import copy_workflow, job_times, overhead_figures, prepare_workdir
from otfs_benchmarks.timing import time_once
from otfs_workflow.io import write_csv

__all__ = ["STAGES", "STAGE_PREFIXES", "overhead_figures", "plot_stages", "run", "stage_of", "stage_table", "target_name"]

#: Rules (the first folder of ``logs/benchmarks``) -> the stage they are counted in; any other rule is "other".
STAGES = {
    "rank_features": "ranking",  # Algorithms 1 and 2: the OT rankers select their samples in fit
    "classify": "classification",
    "classify_leaderboard_adapters": "classification",
    "classify_leaderboard_all_features": "classification",
    "clinical_rank": "clinical",
    "clinical_classify": "clinical",
    "clinical_data": "clinical",
    "clinical_aggregate": "clinical",
    "extract_features": "extraction",
    "build_cache": "cache",
    "acquire": "acquisition",
    "acquire_images": "acquisition",
    "score_model_selection": "model selection",
    "score_model_selection_all_features": "model selection",
}


RUN_COLUMNS = ["target", "order", "cache", "cores", "wall_s", "jobs", "job_s", "core_s", "critical_path_s",
               "wall_s_16_cores_estimate", "max_rss_mb", "snakemake_cpu_s",
               "jobs_timed", "before_s", "imports_s", "after_s", "body_s", "overhead_s"]


def _run_summary(path) -> dict:
    """The JSON a run writes at its end (:func:`otfs_workflow.run_log.measured_lines`); empty where it wrote none."""
    import json

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def target_name(target) -> str:
    """A target of ``targets`` as one name: a group of targets run by one Snakemake call is joined by ``+``."""
    return "+".join(target) if isinstance(target, (list, tuple)) else str(target)


#: Rule names made from the configuration (one rule per feature set, the families' pair rules) -> their stage, by the
#: name's start.
STAGE_PREFIXES = {"run_family_pair": "families", "rank_pairs_": "ranking",
                  "classify_pairs_": "classification", "score_pairs_": "model selection"}


def stage_of(rule: str) -> str:
    """The stage of ``rule`` (:data:`STAGES`, :data:`STAGE_PREFIXES`); any other rule is "other"."""
    if rule in STAGES:
        return STAGES[rule]
    return next((stage for prefix, stage in STAGE_PREFIXES.items() if rule.startswith(prefix)), "other")


def stage_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per stage: ``jobs``, ``job_s`` (summed wall), ``median_s``, ``max_s``, ``max_rss_mb``."""
    df = jobs.assign(stage=[stage_of(r) for r in jobs["rule"]])
    g = df.groupby("stage")
    return pd.DataFrame({
        "jobs": g.size(), "job_s": g["seconds"].sum(), "median_s": g["seconds"].median(),
        "max_s": g["seconds"].max(), "max_rss_mb": g["max_rss_mb"].max(),
    }).reset_index().sort_values("job_s", ascending=False, ignore_index=True)


def _jobs(root: Path) -> pd.DataFrame:
    """:func:`otfs_benchmarks.end_to_end.job_times`, empty where no job has run yet."""
    if not root.is_dir():
        return pd.DataFrame(columns=["rule", "file", "seconds", "max_rss_mb", "cpu_seconds"])
    return job_times(root)


def _own_cpu_until_exit(proc: subprocess.Popen, every_s: float = 1.0) -> float:
    """Wait for ``proc``; return the CPU time of that process itself (user + system, not its jobs'), sampled
    every ``every_s`` until it exits (NaN where it cannot be read)."""
    import psutil

    own = np.nan
    try:
        p = psutil.Process(proc.pid)
    except psutil.Error:
        p = None
    while proc.poll() is None:
        if p is not None:
            try:
                t = p.cpu_times()
                own = t.user + t.system
            except psutil.Error:
                pass
        time.sleep(every_s)
    return float(own)


def run(repo, workdir, targets, cores: int = 2, env=None, log=print) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run ``targets`` (names of the workflow's targets) in order in a fresh copy; return (runs, stages).

    ``runs`` has one row per target: ``target``, ``order`` (its place: the first
    is from a cold cache, the others warm), ``wall_s``, ``jobs``, ``job_s``,
    ``max_rss_mb``, ``snakemake_cpu_s`` (the CPU time of the Snakemake process itself, sampled every
    second: the scheduler's cost), and the jobs' overhead (:func:`overhead_figures`: every job appends its
    times to a file named by :data:`otfs_workflow.stages.JOB_TIMES_ENV`); ``stages`` one row per (target,
    stage) (:func:`stage_table`). A target that is a list of targets is run by one Snakemake call.
    """
    from otfs_workflow.stages import JOB_TIMES_ENV

    workdir = prepare_workdir(workdir)
    copy_workflow(repo, workdir)
    env = {**os.environ, **(env or {})}
    env.pop("PYTHONPATH", None)
    runs, stages = [], []
    seen: set[str] = set()
    for i, group in enumerate(targets):
        target = target_name(group)
        names = list(group) if isinstance(group, (list, tuple)) else [str(group)]
        times_file = workdir / f"job-times-{target}.tsv"
        times_file.unlink(missing_ok=True)
        (workdir / "logs" / "run_summary.json").unlink(missing_ok=True)  # the previous target's
        def snakemake(names=names, target=target, times_file=times_file):
            with open(workdir / f"snakemake-{target}.log", "w") as out:
                proc = subprocess.Popen([sys.executable, "-m", "snakemake", "--directory", str(workdir),
                                         "--snakefile", str(workdir / "Snakefile"), "--cores", str(cores), *names],
                                        env={**env, JOB_TIMES_ENV: str(times_file)}, cwd=workdir,
                                        stdout=out, stderr=subprocess.STDOUT)
                own_cpu = _own_cpu_until_exit(proc)
            if proc.returncode:
                raise subprocess.CalledProcessError(proc.returncode, proc.args)
            return own_cpu

        timed = time_once({target: snakemake}, workdir=workdir / "timing")[target]
        own_cpu, wall = timed["output"], timed["seconds"]
        jobs = _jobs(workdir / "logs" / "benchmarks")
        jobs = jobs[~jobs["file"].isin(seen)]  # the jobs this target ran (earlier targets' files stay)
        seen |= set(jobs["file"])
        job_s = float(jobs["seconds"].sum())
        # the run's own account (otfs_workflow.run_log, written at its end): its job time in core-seconds and the
        # wall time it would take on 16 cores, the larger of job time / 16 and the DAG's critical path
        summary = _run_summary(workdir / "logs" / "run_summary.json")
        runs.append({"target": target, "order": i, "cache": "cold" if i == 0 else "warm", "cores": cores,
                     "wall_s": wall, "jobs": len(jobs), "job_s": job_s,
                     "core_s": summary.get("job_s", np.nan),
                     "critical_path_s": summary.get("critical_path_s", np.nan),
                     "wall_s_16_cores_estimate": summary.get("wall_s_16_cores_estimate", np.nan),
                     "max_rss_mb": float(jobs["max_rss_mb"].max()) if len(jobs) else np.nan,
                     "snakemake_cpu_s": own_cpu, **overhead_figures(times_file, job_s)})
        r = runs[-1]
        log(f"{target} ({r['cache']} cache, --cores {cores}): {wall:.0f} s, {len(jobs)} jobs, "
            f"{job_s:.0f} s of job time ({r['overhead_s']:.0f} s not the jobs' code, {r['jobs_timed']} jobs "
            f"timed), Snakemake's own CPU {own_cpu:.0f} s; on 16 cores about {r['wall_s_16_cores_estimate']:.0f} s "
            f"(critical path {r['critical_path_s']:.0f} s)")
        if len(jobs):
            stages.append(stage_table(jobs).assign(target=target))
    stage_df = pd.concat(stages, ignore_index=True) if stages else pd.DataFrame(
        columns=["stage", "jobs", "job_s", "median_s", "max_s", "max_rss_mb", "target"])
    return pd.DataFrame(runs, columns=RUN_COLUMNS), stage_df


def plot_stages(stages: pd.DataFrame, before: pd.DataFrame | None, path, target: str = "available") -> None:
    """Summed job time per stage of ``target``: ``before`` (a reference profile) beside this run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_figure

    after = stages[stages["target"] == target].set_index("stage")["job_s"]
    ref = (before[before["target"] == target].set_index("stage")["job_s"] if before is not None
           else pd.Series(dtype=float))
    if len(ref):  # this run's stages in the reference's groups: any stage it does not list is "other"
        after = after.groupby([s if s in ref.index else "other" for s in after.index]).sum()
    names = sorted(set(after.index) | set(ref.index), key=lambda s: -max(after.get(s, 0), ref.get(s, 0)))
    fig, ax = plt.subplots(figsize=(8, 0.45 * max(len(names), 1) + 1.6))
    y = np.arange(len(names))
    if len(ref):
        ax.barh(y - 0.2, [ref.get(s, 0) for s in names], height=0.4, color="0.7",
                label=f"before ({ref.sum():.0f} s of job time)")
    ax.barh(y + (0.2 if len(ref) else 0), [after.get(s, 0) for s in names], height=0.4 if len(ref) else 0.6,
            color="tab:blue", label=f"this run ({after.sum():.0f} s of job time)")
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel("summed wall time of the stage's jobs (s)")
    ax.set_title(f"Where `{target}` spends its time, by stage")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs_benchmarks.main_job", description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", default="/tmp/otfs-main-job")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--out", default="results/benchmarks")
    parser.add_argument("--before", default=None, help="a reference stage table (main_job_stages.csv)")
    parser.add_argument("targets", nargs="*", default=["available", "leaderboard+model_selection", "related"],
                        help="targets run in order; a+b: one Snakemake call for both")
    args = parser.parse_args(argv)
    repo = checkout()
    targets = [t.split("+") if "+" in t else t for t in args.targets]
    runs, stages = run(repo, args.workdir, targets, cores=args.cores)
    out = Path(args.out)
    write_csv(runs, out / "main_job.csv", float_format="%.4g")
    write_csv(stages, out / "main_job_stages.csv", float_format="%.4g")
    before = pd.read_csv(args.before) if args.before else None
    plot_stages(stages, before, out / "main_job_stages.pdf",
                target=target_name(targets[0]) if targets else "available")
    print(runs.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
