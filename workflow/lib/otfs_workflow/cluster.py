"""Cluster execution: how many jobs a run submits, and what each rule needs.

What a user asks before sending the grid to a cluster, answered
from the workflow itself:

* :func:`count_submissions` reads the events of a Snakemake dry run (the
  JSON lines of ``--logger otfs``, :func:`dry_run_events`, not its printed
  text) and counts the jobs a cluster executor would submit: one per group
  job, one per job outside any group, none for local rules (data
  acquisition, see the ``localrules:`` of the Snakefile) or for target rules
  that run nothing. ``python -m otfs_workflow.cluster jobs all`` prints the
  count for a target with and without the grouping of ``profiles/slurm``.
* :func:`compare_results` checks that two runs of the workflow (say, one
  local and one on the cluster) computed the same numbers.
* :func:`rule_resources` reads the ``benchmark:`` files a run leaves in
  ``logs/benchmarks`` and gives, per rule, the largest wall time and peak
  memory measured, and the ``runtime`` / ``mem_mb`` a profile should ask
  for (:func:`recommend`). ``python -m otfs_workflow.cluster resources`` prints them
  as a ``set-resources:`` block.
* ``python -m otfs_workflow.cluster costs`` writes the same records as the job
  costs a run's start estimates its plan and duration from
  (:func:`otfs_workflow.run_log.collect_costs`): measured on your own machine
  or cluster, the estimate speaks of it.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

__all__ = ["compare_results", "count_submissions", "dry_run_events", "local_rules", "recommend", "rule_for_benchmark",
           "rule_resources"]


def dry_run_events(args: list[str], cwd: Path, env: dict | None = None) -> list[dict]:
    """The events of ``snakemake --dry-run ARGS`` run in ``cwd`` (with ``env``, default this process's): one
    dict per log record, as the otfs logger plug-in writes them (``--logger otfs``; ``event`` is
    ``"job_info"`` for a job, ``"group_info"`` for a group job with its members' ``jobs``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.jsonl"
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--dry-run", "--logger", "otfs",
                               "--logger-otfs-events", str(events), *args], cwd=cwd, env=env, capture_output=True,
                              text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"snakemake --dry-run {' '.join(args)} failed:\n{proc.stdout[-3000:]}"
                               f"{proc.stderr[-3000:]}")
        return [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines() if line.strip()]


def local_rules(snakefile, _seen=None) -> set[str]:
    """Rule names listed in the ``localrules:`` directives of a Snakefile and of the files it includes
    (each experiment's ``.smk`` declares its own), followed recursively; a directive may be indented (inside
    an ``if`` block), its names on the lines indented further."""
    path = Path(snakefile).resolve()
    seen = set() if _seen is None else _seen
    if path in seen:
        return set()
    seen.add(path)
    text = path.read_text()
    names: set[str] = set()
    for m in re.finditer(r"^([ \t]*)localrules:[ \t]*([^\n]*\n(?:\1[ \t]+[^\n]*\n)*)", text, flags=re.M):
        names.update(n for n in re.split(r"[\s,]+", re.sub(r"#[^\n]*", "", m.group(2))) if n)
    for m in re.finditer(r"^include:\s*[\"']([^\"']+)[\"']", text, flags=re.M):
        names |= local_rules(path.parent / m.group(1), seen)
    return names


def count_submissions(events: list[dict], local: set[str]) -> dict:
    """Jobs of a dry run (its :func:`dry_run_events`), and the cluster jobs they make.

    Returns ``jobs`` (every job), ``local`` (local-rule jobs and target rules
    that run nothing: never submitted), ``grouped`` (jobs inside group
    jobs), ``group_jobs`` and ``submitted`` (group jobs plus the other
    non-local jobs).
    """
    jobs = [e for e in events if e.get("event") == "job_info"]
    # one event per group job; the group jobs of one group (group-components) share its group_id
    group_infos = [e for e in events if e.get("event") == "group_info"]
    group_of = {jobid: index for index, e in enumerate(group_infos) for jobid in e["jobs"]}
    is_local = [j["rule_name"] in local or not j.get("output") for j in jobs]
    grouped = [j for j, loc in zip(jobs, is_local, strict=True) if j["jobid"] in group_of and not loc]
    alone = [j for j, loc in zip(jobs, is_local, strict=True) if j["jobid"] not in group_of and not loc]
    group_jobs = len({group_of[j["jobid"]] for j in grouped})
    return {"jobs": len(jobs), "local": sum(is_local), "grouped": len(grouped), "group_jobs": group_jobs,
            "submitted": group_jobs + len(alone)}


# --- resources from benchmark files -------------------------------------------
def rule_for_benchmark(rel: Path) -> str:
    """The rule that wrote a benchmark file, from its path under ``logs/benchmarks``.

    Every rule writes its benchmark file under ``logs/benchmarks/<rule>/``
    (the workflow checks it when it is parsed), so the first part of the
    path is the rule: no table to keep in step with the rules.
    """
    parts = Path(rel).parts
    if len(parts) < 2:
        raise ValueError(f"{rel}: a benchmark file lies in logs/benchmarks/<rule>/, not at its top")
    return parts[0]


def rule_resources(root="logs/benchmarks") -> pd.DataFrame:
    """Per rule: jobs measured, largest wall seconds, largest peak RSS (MB), largest CPU/wall ratio."""
    from otfs_workflow.time_profile import collect_benchmarks

    df = collect_benchmarks(root)
    if df.empty:
        raise ValueError(f"{root}: no benchmark files (run the pipeline first)")
    df["rule"] = [rule_for_benchmark(Path(f)) for f in df["file"]]
    df["cpu_ratio"] = df["cpu_seconds"] / df["seconds"].clip(lower=1e-9)
    g = df.groupby("rule")
    return pd.DataFrame({
        "jobs": g.size(),
        "max_s": g["seconds"].max(),
        "max_rss_mb": g["max_rss_mb"].max(),
        "cpu_ratio": g["cpu_ratio"].max(),
    }).sort_values("max_s", ascending=False)


def recommend(measured: pd.DataFrame, time_factor: float = 3.0, min_runtime: int = 2, mem_factor: float = 1.5,
              min_mem_mb: int = 1024) -> pd.DataFrame:
    """Cluster requests from measurements: ``runtime`` (minutes) and ``mem_mb``, with margins.

    runtime = max(min_runtime, ceil(time_factor * largest wall time)); mem_mb =
    max(min_mem_mb, largest peak RSS x mem_factor, rounded up to 256 MB).
    """
    out = measured.copy()
    out["runtime"] = [max(min_runtime, math.ceil(time_factor * s / 60)) for s in measured["max_s"]]
    out["mem_mb"] = [max(min_mem_mb, 256 * math.ceil(mem_factor * m / 256)) if m == m else min_mem_mb
                     for m in measured["max_rss_mb"]]
    return out


# --- two runs, the same numbers ----------------------------------------------------
_TIMING = re.compile(r"(^|_)(seconds|time|elapsed|s)$|^(time|seconds)_|_time_", re.I)
_SKIP_JSON = {"provenance.json"}


def is_timing(name: str) -> bool:
    """Whether a column or JSON key named ``name`` records a duration (``seconds``, ``ranking_time_s``...)."""
    return bool(_TIMING.search(str(name)))


def _json_diff(a, b, where: str, out: list[str]):
    if isinstance(a, dict) and isinstance(b, dict):
        keys = {k for k in set(a) | set(b) if not is_timing(k) and k != "provenance"}
        for k in sorted(keys):
            if k not in a or k not in b:
                out.append(f"{where}: key {k!r} only in {'second' if k in b else 'first'} run")
            else:
                _json_diff(a[k], b[k], f"{where}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} vs {len(b)} items")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                _json_diff(x, y, f"{where}[{i}]", out)
    elif a != b:
        out.append(f"{where}: {a!r} vs {b!r}")


def compare_results(first, second, folders=("results",), second_is_subset=False) -> tuple[int, list[str]]:
    """Compare the results of two runs of the workflow, file by file.

    Every ``.tsv``, ``.csv`` and ``.json`` under ``folders`` of ``first`` must
    exist in ``second`` and hold the same values, exactly (with
    ``second_is_subset``, the second run built only some of the first run's
    targets: its files are compared, and one that the first run lacks is still
    a difference). The pipeline is deterministic, so a run on a cluster must equal a local one. Columns and
    keys that record wall time (``seconds``, ``*_time``...) and the
    ``provenance.json`` files (versions, hosts, dates) are left out; figures
    and ``.md``/``.tex`` renderings are derived from the compared tables.

    Returns the number of files compared and the differences found (empty
    when the runs agree).
    """
    first, second = Path(first), Path(second)
    diffs: list[str] = []
    n = 0
    for folder in folders:
        files_a = {p.relative_to(first) for p in (first / folder).rglob("*")
                   if p.is_file() and p.suffix in {".tsv", ".csv", ".json"} and p.name not in _SKIP_JSON}
        files_b = {p.relative_to(second) for p in (second / folder).rglob("*")
                   if p.is_file() and p.suffix in {".tsv", ".csv", ".json"} and p.name not in _SKIP_JSON}
        if second_is_subset:
            files_a &= files_b
        for rel in sorted(files_a ^ files_b):
            diffs.append(f"{rel}: only in {'first' if rel in files_a else 'second'} run")
        for rel in sorted(files_a & files_b):
            n += 1
            a, b = first / rel, second / rel
            if rel.suffix == ".json":
                _json_diff(json.loads(a.read_text()), json.loads(b.read_text()), str(rel), diffs)
                continue
            sep = "\t" if rel.suffix == ".tsv" else ","
            da, db = pd.read_csv(a, sep=sep), pd.read_csv(b, sep=sep)
            if list(da.columns) != list(db.columns) or da.shape != db.shape:
                diffs.append(f"{rel}: columns or shape differ ({da.shape} vs {db.shape})")
                continue
            keep = [c for c in da.columns if not is_timing(c)]
            left, right = da[keep], db[keep]
            if not left.equals(right):
                bad = [c for c in keep if not left[c].equals(right[c])]
                diffs.append(f"{rel}: values differ in {bad}")
    return n, diffs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs_workflow.cluster", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    jobs = sub.add_parser("jobs", help="cluster jobs a target submits, with and without grouping")
    jobs.add_argument("targets", nargs="+")
    jobs.add_argument("--profile", default="profiles/slurm")
    jobs.add_argument("--workdir", type=Path, default=Path("."))
    jobs.add_argument("--configfile", nargs="*", default=[])
    jobs.add_argument("--forceall", action="store_true", help="count every job, as from a fresh clone")
    res = sub.add_parser("resources", help="per-rule measurements and the requests they imply")
    res.add_argument("root", nargs="?", default="logs/benchmarks")
    costs = sub.add_parser("costs", help="the job costs a run's start estimates its plan from, measured in a run")
    costs.add_argument("root", nargs="?", default="logs/benchmarks")
    costs.add_argument("--out", type=Path, required=True,
                       help="the table to write (workflow/resources/job_costs.tsv is the one a run reads)")
    costs.add_argument("--note", action="append", default=[], help="a header line: what ran, where, when")
    args = parser.parse_args(argv)

    if args.command == "costs":
        from otfs_workflow.run_log import collect_costs, write_costs

        rows = collect_costs(args.root)
        if not rows:
            parser.error(f"{args.root}: no benchmark files (run the pipeline first)")
        write_costs(rows, args.out, header=args.note)
        jobs, total = sum(r["jobs"] for r in rows), sum(r["total_s"] for r in rows)
        print(f"{args.out}: {len(rows)} kinds of job, {jobs} jobs, {total:,.0f} s of job time")
        return 0

    if args.command == "resources":
        table = recommend(rule_resources(args.root))
        with pd.option_context("display.width", 120, "display.max_rows", 200):
            print(table.round(2).to_string())
        print("\nset-resources:")
        for rule, runtime, mem_mb in zip(table.index, table["runtime"], table["mem_mb"]):  # integers, as profiles set
            print(f"  {rule}: {{runtime: {int(runtime)}, mem_mb: {int(mem_mb)}}}")
        return 0

    extra = [*(["--configfile", *args.configfile] if args.configfile else []),
             *(["--forceall"] if args.forceall else [])]
    local = local_rules(args.workdir / "Snakefile")
    plain = count_submissions(dry_run_events([*extra, "--cores", "1", "--", *args.targets], args.workdir), local)
    grouped = count_submissions(dry_run_events(["--profile", args.profile, *extra, "--", *args.targets],
                                               args.workdir), local)
    print(f"targets {' '.join(args.targets)}: {plain['jobs']} jobs, {plain['local']} run locally")
    print(f"  submitted without grouping: {plain['submitted']}")
    print(f"  submitted with {args.profile}: {grouped['submitted']} "
          f"({grouped['grouped']} jobs in {grouped['group_jobs']} group jobs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
