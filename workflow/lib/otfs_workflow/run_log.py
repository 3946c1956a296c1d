"""What the main Snakemake process says about a run: its plan at the start, its conditions counted, its end.

* **The plan** (:func:`plan_lines`): the number of jobs by kind, their job
  time from a shipped table of measured job costs
  (``workflow/resources/job_costs.tsv``, :func:`collect_costs` makes it from
  a run's ``logs/benchmarks``), and the wall time that takes on the given
  cores: the larger of the job time over the cores and the critical path
  through the DAG (:func:`estimate`).
* **Conditions** (:func:`record_condition`, :func:`condition_lines`): every
  warning a job logs stays in full in the job's own log, and is recorded as
  one JSON line under ``logs/conditions/``. The main process prints them
  grouped: one line per kind of job, feature set and message, with the
  number of jobs, the distinct values of their wildcards and the range of
  every number in the message ("rank_features, surf, 14 rankers x 12 pairs:
  1 to 15 of 800 features are constant in both domains"), and writes every
  one, ungrouped, to ``logs/conditions.md``.
* **The end** (:func:`summary_lines`): where the requested tables, figures,
  verdict and report are, and which jobs failed, with their logs.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shlex
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CONDITIONS_DIR", "DATA_NOTES_COLUMNS", "DATA_NOTES_SCOPE", "PlannedJob", "Run", "benchmark_key", "collect_costs",
           "condition_lines", "data_notes_rows", "estimate", "format_duration", "group_conditions", "measured_lines",
           "plan_lines", "read_benchmark_seconds", "read_conditions", "read_costs", "record_condition", "scoped_conditions",
           "summary_lines", "write_conditions", "write_costs", "write_data_notes", "write_data_notes_scope"]

#: Where the jobs record their warnings (one JSON line each), relative to the working directory.
CONDITIONS_DIR = Path("logs") / "conditions"
#: The grouped conditions printed at the end, at most; the rest are counted, and all are in logs/conditions.md.
MAX_CONDITION_LINES = 25


# --- job costs -------------------------------------------------------------------------------------------
def benchmark_key(rule: str, benchmark: str | os.PathLike | None) -> str:
    """The part of a job's benchmark path that its cost depends on: the first folder after
    ``logs/benchmarks/<rule>/`` (the feature set, the dataset) where there is one, else ``*``."""
    if not benchmark:
        return "*"
    parts = Path(benchmark).parts
    try:
        rest = parts[parts.index(rule) + 1:]
    except ValueError:
        return "*"
    return rest[0] if len(rest) >= 2 else "*"


def read_benchmark_seconds(path: str | os.PathLike, since: float | None = None) -> float | None:
    """A job's wall time from its Snakemake benchmark file (column ``s``); None where there is none (or it is
    older than ``since``)."""
    try:
        p = Path(path)
        if since is not None and p.stat().st_mtime < since:
            return None
        with open(p, encoding="utf-8") as fh:
            header = fh.readline().rstrip("\n").split("\t")
            values = fh.readline().rstrip("\n").split("\t")
        return float(values[header.index("s")])
    except (OSError, ValueError, IndexError):
        return None


def collect_costs(bench_dir: str | os.PathLike) -> list[dict]:
    """Rows ``rule, key, jobs, median_s, total_s`` of the jobs timed under ``bench_dir``
    (``logs/benchmarks/<rule>/...tsv``, Snakemake's ``benchmark:`` files; ``s``, the job's wall time)."""
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    root = Path(bench_dir)
    for path in sorted(root.rglob("*.tsv")):
        rel = path.relative_to(root)
        rule = rel.parts[0]
        seconds = read_benchmark_seconds(path)
        if seconds is None:
            continue  # a job that is still running, or a file that is not a benchmark
        times[(rule, benchmark_key(rule, rel))].append(seconds)
    rows = []
    for (rule, key), values in sorted(times.items()):
        rows.append({"rule": rule, "key": key, "jobs": len(values), "median_s": round(statistics.median(values), 2),
                     "total_s": round(sum(values), 1)})
    return rows


def write_costs(rows: Sequence[Mapping], path: str | os.PathLike, header: Sequence[str] = ()) -> None:
    """Write the cost table (:func:`collect_costs`) as TSV, ``header`` lines first as ``#`` comments."""
    from otfs_workflow.io import write_text

    lines = [f"# {h}" for h in header] + ["rule\tkey\tjobs\tmedian_s\ttotal_s"]
    lines += [f"{r['rule']}\t{r['key']}\t{r['jobs']}\t{r['median_s']}\t{r['total_s']}" for r in rows]
    write_text(Path(path), "\n".join(lines) + "\n")


def read_costs(path: str | os.PathLike) -> dict[tuple[str, str], float]:
    """``{(rule, key): median seconds}`` of a cost table; ``(rule, "*")`` is the rule's median over its keys
    where the table has no such row. An absent file is an empty table."""
    costs: dict[tuple[str, str], float] = {}
    per_rule: dict[str, list[float]] = defaultdict(list)
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [line.rstrip("\n") for line in fh if line.strip() and not line.startswith("#")]
    except FileNotFoundError:
        return {}
    header = lines[0].split("\t")
    for line in lines[1:]:
        row = dict(zip(header, line.split("\t"), strict=True))
        seconds = float(row["median_s"])
        costs[(row["rule"], row["key"])] = seconds
        per_rule[row["rule"]] += [seconds] * int(row["jobs"])
    for rule, values in per_rule.items():
        costs.setdefault((rule, "*"), statistics.median(values))
    return costs


@dataclass
class PlannedJob:
    """One job of the plan: its id, rule, cost key (:func:`benchmark_key`), threads, the ids it waits for, and
    whether it runs anything (``runs=False``: a target rule, which only gathers its inputs)."""

    id: int
    rule: str
    key: str = "*"
    threads: int = 1
    deps: Sequence[int] = field(default_factory=tuple)
    runs: bool = True


def _cost(costs: Mapping[tuple[str, str], float], job: PlannedJob) -> float | None:
    if not job.runs:
        return 0.0
    return costs.get((job.rule, job.key), costs.get((job.rule, "*")))


def estimate(jobs: Sequence[PlannedJob], cores: int, costs: Mapping[tuple[str, str], float],
             measured: Mapping[int, float] | None = None) -> dict:
    """The job time of ``jobs`` and the wall time it takes on ``cores``.

    A job's cost is its rule's measured median wall time for its key (else
    over the rule's keys), nothing for a job that runs nothing (a target rule); a job of a rule never measured
    costs the median
    of the measured jobs of this plan (counted in ``unmeasured``); ``measured`` (job id -> seconds, the job's
    own benchmark record) takes precedence. Job time
    is in core-seconds (wall time x threads, a job's threads capped at
    ``cores``); the wall time is the larger of the job time over ``cores``
    and the critical path (the longest chain of dependent jobs' wall times); ``critical_path`` lists that
    chain's jobs, first to last, as ``(rule, key, seconds)``.
    """
    if cores < 1:
        raise ValueError(f"cores: at least 1, got {cores}")
    measured = measured or {}

    found = {j.id: measured[j.id] if j.id in measured else _cost(costs, j) for j in jobs}
    known = [found[j.id] for j in jobs if j.runs and found[j.id] is not None]
    fallback = statistics.median(known) if known else 1.0
    unmeasured = defaultdict(int)
    for j in jobs:
        if found[j.id] is None:
            unmeasured[j.rule] += 1
    wall = {jid: fallback if c is None else c for jid, c in found.items()}
    core_s = sum(wall[j.id] * min(max(1, j.threads), cores) for j in jobs)
    by_id = {j.id: j for j in jobs}
    finish: dict[int, float] = {}
    before: dict[int, int | None] = {}
    for j in _topological(jobs):
        deps = [d for d in j.deps if d in by_id]
        before[j.id] = max(deps, key=lambda d: finish[d]) if deps else None
        finish[j.id] = wall[j.id] + (finish[before[j.id]] if deps else 0.0)
    critical = max(finish.values(), default=0.0)
    chain, at = [], max(finish, key=finish.get) if finish else None
    while at is not None:
        chain.append((by_id[at].rule, by_id[at].key, wall[at]))
        at = before[at]
    return {"jobs": len(jobs), "job_s": core_s, "critical_path_s": critical, "critical_path": chain[::-1],
            "wall_s": max(core_s / cores, critical), "cores": cores, "unmeasured": dict(unmeasured)}


def _topological(jobs: Sequence[PlannedJob]) -> list[PlannedJob]:
    by_id = {j.id: j for j in jobs}
    order, state = [], {}
    for start in jobs:
        stack = [(start, False)]
        while stack:
            j, done = stack.pop()
            if done:
                state[j.id] = 2
                order.append(j)
                continue
            if state.get(j.id):
                continue
            state[j.id] = 1
            stack.append((j, True))
            stack.extend((by_id[d], False) for d in j.deps if d in by_id and not state.get(d))
    return order


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``1 h 44 min``."""
    if not math.isfinite(seconds):
        return "unknown"
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def measured_lines(jobs: Sequence[PlannedJob], benchmarks: Mapping[int, str], cores: int, since: float | None,
                   costs: Mapping[tuple[str, str], float], path: str | os.PathLike | None = None) -> list[str]:
    """The run's measured job time (its jobs' benchmark records), and the wall time it would take on ``cores``
    and on 16 cores through the same DAG (:func:`estimate`); written as JSON to ``path``."""
    measured = {}
    for jid, bench in benchmarks.items():
        seconds = read_benchmark_seconds(bench, since)
        if seconds is not None:
            measured[jid] = seconds
    if not measured:
        return []
    here, sixteen = estimate(jobs, cores, costs, measured), estimate(jobs, 16, costs, measured)
    summary = {"jobs": len(jobs), "jobs_timed": len(measured), "job_s": here["job_s"], "cores": cores,
               "critical_path_s": here["critical_path_s"], "wall_s_estimate": here["wall_s"],
               "wall_s_16_cores_estimate": sixteen["wall_s"]}
    if path is not None:
        from otfs_workflow.io import write_text

        write_text(Path(path), json.dumps(summary, indent=1) + "\n")
    return [f"otfs: job time {format_duration(here['job_s'])} ({len(measured)} of {len(jobs)} jobs timed); on 16 "
            f"cores it would take about {format_duration(sixteen['wall_s'])} (critical path "
            f"{format_duration(here['critical_path_s'])})."]


def plan_lines(jobs: Sequence[PlannedJob], cores: int, costs: Mapping[tuple[str, str], float],
               costs_source: str = "", machine_cores: int | None = None, cluster: bool = False) -> list[str]:
    """The plan, as the main process prints it at the start: jobs by kind, job time, estimated wall time.
    ``machine_cores``: the cores of the machine the jobs run on (None: a cluster's, not this one's), named where
    fewer than ``cores``. ``cluster``: the jobs go to a cluster, ``cores`` of them at once (``--jobs``); the jobs
    that a profile groups run one after another inside their cluster job, which the estimate does not count."""
    if not jobs:
        return []
    est = estimate(jobs, cores, costs)
    by_rule: dict[str, int] = defaultdict(int)
    for j in jobs:
        by_rule[j.rule] += 1
    kinds = sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{n} {rule}" for rule, n in kinds[:6]) + (f", {len(kinds) - 6} more kinds" if len(kinds) > 6
                                                               else "")
    lines = [f"otfs: {len(jobs)} jobs to run ({shown}).",
             f"otfs: about {format_duration(est['job_s'])} of job time; "
             + (f"on a cluster, {cores} jobs at once" if cluster else f"on {cores} core(s)")
             + f" about {format_duration(est['wall_s'])} (critical path {format_duration(est['critical_path_s'])})"
             + (f", from the job costs measured in {costs_source}" if costs_source else "") + "."]
    if cluster:
        lines.append("otfs: jobs that the profile groups run one after another in their cluster job, and each waits "
                     "in the queue: the cluster takes longer than this.")
    longest = sorted(est["critical_path"], key=lambda step: -step[2])[:3]
    if longest:
        lines.append("otfs: the critical path's longest jobs: " + ", ".join(
            f"{rule}{'' if key in ('*', '') else f' ({key})'} {format_duration(seconds)}"
            for rule, key, seconds in longest) + f"; {len(est['critical_path'])} jobs in all.")
    machine = machine_cores
    if machine and cores > machine:
        lines.append(f"otfs: this machine has {machine} core(s), fewer than the {cores} asked for: the jobs share "
                     f"them, run slower than estimated, and their benchmark records count the waiting "
                     f"(--cores {machine} uses them all).")
    if est["unmeasured"]:
        n = sum(est["unmeasured"].values())
        lines.append(f"otfs: {n} job(s) of {len(est['unmeasured'])} kind(s) never measured are counted at the "
                     "median job's cost.")
    lines.append("otfs: the paper's tables and figures run first; warnings are counted and listed at the end "
                 "(each job's log has them in full).")
    return lines


# --- conditions ------------------------------------------------------------------------------------------
def record_condition(log_path: str | os.PathLike, rule: str, wildcards: Mapping[str, str], key: str,
                     category: str, message: str) -> None:
    """Append one warning of a job to its conditions file (``logs/conditions/<the log's path under logs>.jsonl``,
    or ``<log>.conditions.jsonl`` for a log outside ``logs/``)."""
    path = _conditions_path(log_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"rule": rule, "key": key, "wildcards": dict(wildcards), "category": category, "message": message,
              "log": str(log_path)}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def _conditions_path(log_path) -> Path:
    p = Path(log_path)
    parts = p.parts
    if parts and parts[0] == "logs":
        return CONDITIONS_DIR.joinpath(*parts[1:]).with_suffix(".jsonl")
    return p.with_name(p.name + ".conditions.jsonl")


def clear_conditions(log_path) -> None:
    """Remove a job's conditions file (a rerun of the job records its own)."""
    try:
        _conditions_path(log_path).unlink()
    except FileNotFoundError:
        pass


def read_conditions(since: float | None = None, folder: str | os.PathLike = CONDITIONS_DIR) -> list[dict]:
    """Every condition recorded under ``folder`` by jobs whose file changed at or after ``since`` (epoch s)."""
    out = []
    root = Path(folder)
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("*.jsonl")):
        try:
            if since is not None and path.stat().st_mtime < since:
                continue
            with open(path, encoding="utf-8") as fh:
                out += [json.loads(line) for line in fh if line.strip()]
        except (OSError, ValueError):
            continue
    return out


_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
_LIST = re.compile(r"\[[^\[\]]*\]")
_QUOTED = re.compile(r"'[^']*'")
_QUOTED_RUN = re.compile(r"'\.\.\.'(?:, '\.\.\.')+(?:, \.\.\.)?")
_PREFIX = re.compile(r"^[A-Z][A-Za-z0-9_]*: ")
_PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+")


def _template(message: str) -> tuple[str, list[float]]:
    """A message with its variable parts replaced: an estimator's name before it, lists, quoted names and paths
    (``...``), numbers (``{}``, returned in order)."""
    text = message.strip().splitlines()[0] if message.strip() else ""
    text = _PREFIX.sub("", text)
    text = _LIST.sub("[...]", text)
    text = _QUOTED.sub("'...'", text)
    text = _QUOTED_RUN.sub("'...'", text)  # a list of names, however long: one
    text = _PATH.sub("...", text)
    numbers = []

    def number(m):
        try:
            numbers.append(float(m.group(0).replace(",", "")))
        except ValueError:
            return m.group(0)
        return "{}"

    return _NUMBER.sub(number, text), numbers


def _fmt(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:.3g}"


def group_conditions(records: Iterable[Mapping]) -> list[dict]:
    """Conditions grouped by (rule, key, category, message template), largest group first: each with its records,
    its jobs' logs, the distinct values of each wildcard, and every number's range."""
    groups: dict[tuple, dict] = {}
    for r in records:
        template, numbers = _template(r["message"])
        gk = (r["rule"], r.get("key", "*"), r.get("category", ""), template, len(numbers))
        g = groups.setdefault(gk, {"rule": r["rule"], "key": r.get("key", "*"), "category": r.get("category", ""),
                                   "template": template, "records": [], "logs": set(),
                                   "wildcards": defaultdict(set), "numbers": [[] for _ in numbers]})
        g["records"].append(r)
        g["logs"].add(r.get("log", ""))
        for name, value in (r.get("wildcards") or {}).items():
            g["wildcards"][name].add(str(value))
        for slot, value in zip(g["numbers"], numbers, strict=True):
            slot.append(value)
    return sorted(groups.values(), key=lambda g: (-len(g["logs"]), g["rule"], g["key"], g["template"]))


def _group_text(g: Mapping) -> str:
    """A group's message template with each number's range."""
    parts = []
    for i, chunk in enumerate(g["template"].split("{}")):
        parts.append(chunk)
        if i < len(g["numbers"]):
            values = g["numbers"][i]
            lo, hi = min(values), max(values)
            parts.append(_fmt(lo) if lo == hi else f"{_fmt(lo)} to {_fmt(hi)}")
    return "".join(parts)


def _group_line(g: Mapping) -> str:
    text = _group_text(g)
    varied = [f"{len(v)} {name}s" for name, v in sorted(g["wildcards"].items())
              if name not in ("feature_set", g["key"]) and len(v) > 1 and g["key"] not in v]
    where = f"{g['rule']}" + (f", {g['key']}" if g["key"] != "*" else "")
    jobs = len(g["logs"])
    scope = f"{jobs} job{'s' if jobs != 1 else ''}" + (f" ({' x '.join(varied)})" if varied else "")
    category = f"{g['category']}: " if g["category"] else ""
    if len(text) > 160:
        text = text[:157] + "..."
    return f"  {where}, {scope}: {category}{text}"


def condition_lines(records: Sequence[Mapping], limit: int = MAX_CONDITION_LINES,
                    listing: str = "logs/conditions.md") -> list[str]:
    """The conditions of a run, grouped (:func:`group_conditions`), one line per group, at most ``limit``."""
    if not records:
        return []
    groups = group_conditions(records)
    lines = [f"otfs: {len(records)} warning(s) from {len({r.get('log') for r in records})} job(s), in "
             f"{len(groups)} kind(s) (each job's log has them in full; {listing} lists them all):"]
    lines += [_group_line(g) for g in groups[:limit]]
    if len(groups) > limit:
        lines.append(f"  ... and {len(groups) - limit} more kind(s): {listing}")
    return lines


def write_conditions(records: Sequence[Mapping], path: str | os.PathLike) -> None:
    """Every condition of a run, grouped, each group with its jobs' logs and its messages in full."""
    from otfs_workflow.io import write_text

    lines = ["# Conditions met by the run's jobs", "",
             "Every warning the jobs logged, grouped as the run's end summary counts them. Each job's log "
             "(the path beside it) has it in full, with its time.", ""]
    for g in group_conditions(records):
        lines += [f"## {_group_line(g).strip()}", ""]
        lines += [f"- `{r.get('log', '')}`: {r['message']}" for r in g["records"]]
        lines.append("")
    write_text(Path(path), "\n".join(lines))


def data_notes_rows(records: Sequence[Mapping]) -> list[dict]:
    """The conditions as the report's data notes: one row per group (:func:`group_conditions`), with its stage
    (the rule), its feature set or dataset, the condition with each number's range, how many jobs and warnings
    it counts, and the log of one of its jobs (sorted: the first)."""
    rows = []
    for g in group_conditions(records):
        rows.append({"stage": g["rule"], "key": g["key"], "category": g["category"], "condition": _group_text(g),
                     "jobs": len(g["logs"]), "warnings": len(g["records"]),
                     "example_log": sorted(g["logs"])[0]})
    return rows


DATA_NOTES_COLUMNS = ("stage", "key", "category", "condition", "jobs", "warnings", "example_log")

#: The logs of the jobs a data-notes job reports on (its target's jobs), written by the main process at the
#: start of a run that plans it (:func:`write_data_notes_scope`).
DATA_NOTES_SCOPE = "logs/data_notes/{target_set}.jobs.json"


def write_data_notes_scope(path: str | os.PathLike, logs: Iterable[str]) -> None:
    """The logs of a data-notes job's target's jobs, as a sorted JSON list (atomically)."""
    from otfs_workflow.io import write_text

    write_text(Path(path), json.dumps(sorted({str(log) for log in logs}), indent=0) + "\n")


def scoped_conditions(records: Sequence[Mapping], scope_path: str | os.PathLike) -> list[dict]:
    """The conditions of the jobs listed in ``scope_path`` (:data:`DATA_NOTES_SCOPE`): a job of another target,
    or one no longer part of this one, is left out. Every condition where the file is missing (a data-notes
    job started by hand, outside a run that planned it), with a warning that says so."""
    try:
        logs = set(json.loads(Path(scope_path).read_text(encoding="utf-8")))
    except FileNotFoundError:
        logging.getLogger("otfs").warning(
            "%s is missing (written when a run that plans this job starts): the data notes list the warnings of "
            "every job under logs/conditions/, those of other targets too", scope_path)
        return list(records)
    return [r for r in records if r.get("log") in logs]


def write_data_notes(records: Sequence[Mapping], csv_path: str | os.PathLike, md_path: str | os.PathLike) -> None:
    """The report's data notes: the grouped conditions as a CSV table (:func:`data_notes_rows`) and every
    condition in full under its group (:func:`write_conditions`)."""
    import csv
    import io

    from otfs_workflow.io import write_text

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=DATA_NOTES_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(data_notes_rows(records))
    write_text(Path(csv_path), buffer.getvalue())
    write_conditions(records, md_path)


# --- the end ---------------------------------------------------------------------------------------------
#: What the end summary points to, where the run made it: (label, path).
LANDMARKS = (
    ("the paper's tables and figures", "results/paper"),
    ("every target the data allow", "results/available"),
    ("the comparison with the paper's numbers", "results/available/comparison/summary.csv"),
    ("the jobs' warnings by kind (the report's data notes)", "results/available/data_notes.csv"),
    ("the data families' verdict", "results/leaderboard/verdict.md"),
    ("the label-free recommendation", "results/recommend/evaluation.md"),
    ("the related methods", "results/related"),
    ("the clinical study", "results/clinical"),
)


def summary_lines(ok: bool, started: float | None, ran: int, failed: Sequence[Mapping], targets: Sequence[str],
                  root: str | os.PathLike = ".", configfiles: Sequence[str] = ()) -> list[str]:
    """The run's last screen: whether it finished, where its results are, and each failed job with its log.

    ``targets`` are the targets asked for, rules (``available``, ``figure7``) and files: the report's command
    names them (``available`` where none was named). ``configfiles``: the run's ``--configfile`` files, which
    the report's command carries after its targets (``--configfile`` takes every word after it), so that it
    runs pasted as printed.
    """
    root = Path(root)
    took = f" in {format_duration(time.time() - started)}" if started else ""
    head = (f"otfs: finished{took}: {ran} job(s) ran." if ok else
            f"otfs: stopped{took}: {len(failed)} job(s) failed, {ran} ran.")
    lines = [head]
    lines += [f"  {label}: {rel}" for label, rel in LANDMARKS if (root / rel).exists()]
    config = f" --configfile {' '.join(shlex.quote(str(c)) for c in configfiles)}" if configfiles else ""
    lines.append(f"  the HTML report: snakemake --report report.html {' '.join(targets) or 'available'}{config}")
    for job in failed[:10]:
        logs = ", ".join(job.get("log") or []) or "no log"
        lines.append(f"  FAILED {job['rule']} {job.get('wildcards', '')}: {logs}")
    if len(failed) > 10:
        lines.append(f"  ... and {len(failed) - 10} more failed job(s): .snakemake/log/ has the run's full log")
    return lines


# --- the main process's hooks (workflow/rules/run_log.smk) --------------------------------------------------------
class Run:
    """What the main process keeps of a run between its start and its end, from Snakemake's ``workflow`` (its
    DAG, scheduler, cores and ``--configfile`` files): :meth:`start` gives the start-of-run lines, :meth:`end`
    the last ones."""

    def __init__(self, costs_path: str | os.PathLike, repo: str | os.PathLike):
        self.costs_path, self.repo = Path(costs_path), Path(repo)
        self.started: float | None = None
        self.costs: dict = {}
        self.plan: list[PlannedJob] = []
        self.benchmarks: dict[int, str] = {}

    @staticmethod
    def cores(workflow) -> int:
        """The jobs that run at once: the cores (``--cores``), or on a cluster the cluster jobs (``--jobs``)."""
        settings = workflow.resource_settings
        cores = settings.cores if workflow.local_exec else settings.nodes
        return int(cores) if isinstance(cores, int) and cores > 0 else os.cpu_count() or 1

    def _planned_jobs(self, dag) -> list[PlannedJob]:
        """The jobs to run, as :func:`estimate` takes them; their benchmark files, by job id, kept for the end."""
        jobs = list(dag.needrun_jobs())
        ids = {job: i for i, job in enumerate(jobs)}
        planned, self.benchmarks = [], {}
        for job in jobs:
            bench = str(job.benchmark) if job.benchmark else None
            if bench:
                self.benchmarks[ids[job]] = bench
            planned.append(PlannedJob(ids[job], job.rule.name, benchmark_key(job.rule.name, bench),
                                      int(job.threads or 1), [ids[d] for d in dag.dependencies.get(job, {}) if d in ids],
                                      not job.is_norun))
        return planned

    def start(self, workflow, notes: Iterable[tuple[str | None, str]] = ()) -> list[str]:
        """The run's notes about the feature sets its jobs use (``notes``: (feature set or None for every run,
        note)), then its plan and estimate (:func:`plan_lines`). Writes each data_notes job's scope: the logs
        of every job its target runs."""
        dag = workflow.dag
        self.started, self.costs = time.time(), read_costs(self.costs_path)
        used = {str(v) for job in dag.jobs for v in job.wildcards_dict.values()}
        lines = [note for fs, note in notes if fs is None or fs in used]
        self.plan = self._planned_jobs(dag)
        for job in dag.jobs:
            if job.rule.name == "data_notes":
                upstream = [dep for dep in dag.bfs(dag.dependencies, job) if dep is not job]
                write_data_notes_scope(DATA_NOTES_SCOPE.format(**job.wildcards_dict),
                                       (str(log) for dep in upstream for log in dep.log))
        try:
            costs_name = str(self.costs_path.relative_to(self.repo))
        except ValueError:
            costs_name = str(self.costs_path)
        return lines + plan_lines(self.plan, self.cores(workflow), self.costs, costs_name,
                                  machine_cores=os.cpu_count() if workflow.local_exec else None,
                                  cluster=not workflow.local_exec)

    def end(self, workflow, ok: bool) -> list[str]:
        """The run's last lines: its measured job time (:func:`measured_lines`), its conditions counted (written in
        full to ``logs/conditions.md``) and :func:`summary_lines`."""
        records = read_conditions(since=self.started - 1 if self.started else None)
        if records:
            write_conditions(records, "logs/conditions.md")
        scheduler = getattr(workflow, "scheduler", None)
        failed = [{"rule": job.rule.name, "wildcards": ", ".join(f"{k}={v}" for k, v in job.wildcards_dict.items()),
                   "log": [str(f) for f in job.log]} for job in sorted(getattr(scheduler, "failed", ()), key=str)]
        dag = workflow.dag
        targets = sorted(rule.name for rule in dag.targetrules) + sorted(str(f) for f in dag.targetfiles)
        from otfs_workflow.io import cwd_relative

        configfiles = [cwd_relative(f) for f in getattr(workflow, "overwrite_configfiles", None) or ()]
        timed = measured_lines(self.plan, self.benchmarks, self.cores(workflow), self.started, self.costs,
                               "logs/run_summary.json")
        return timed + condition_lines(records) + summary_lines(ok, self.started, getattr(scheduler, "finished_jobs", 0),
                                                                failed, targets, configfiles=configfiles)
