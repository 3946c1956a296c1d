# What the main process says of a run (otfs_workflow.run_log): at the start, the
# jobs it plans and their estimated duration on the given cores (from the job
# costs measured in workflow/resources/job_costs.tsv), and the notes about the
# feature sets its jobs use; at the end, the jobs' warnings counted by kind
# (each job's log has them in full; logs/conditions.md lists them all), where
# the results are, and which jobs failed.
import time as _time

from otfs_workflow.run_log import (
    CONDITIONS_DIR,
    DATA_NOTES_SCOPE,
    PlannedJob,
    benchmark_key,
    condition_lines,
    measured_lines,
    plan_lines,
    read_conditions,
    read_costs,
    summary_lines,
    write_conditions,
    write_data_notes_scope,
)

JOB_COSTS = REPO / "workflow" / "resources" / "job_costs.tsv"
_RUN = {}


def _planned_jobs(dag):
    """The jobs to run, as run_log plans them; their benchmark files, by job id, kept for the end."""
    jobs = list(dag.needrun_jobs())
    ids = {job: i for i, job in enumerate(jobs)}
    planned = []
    _RUN["benchmarks"] = {}
    for job in jobs:
        deps = [ids[d] for d in dag.dependencies.get(job, {}) if d in ids]
        bench = str(job.benchmark) if job.benchmark else None
        if bench:
            _RUN["benchmarks"][ids[job]] = bench
        planned.append(
            PlannedJob(
                ids[job],
                job.rule.name,
                benchmark_key(job.rule.name, bench),
                int(job.threads or 1),
                deps,
            )
        )
    return planned


def _used_names(dag):
    """Every wildcard value of the run's jobs: the feature sets (and families) the targets use."""
    names = set()
    for job in dag.jobs:
        names.update(str(v) for v in job.wildcards_dict.values())
    return names


def _write_data_notes_scopes(dag):
    """For each data_notes job of the run, the logs of every job it follows: the jobs of its target."""
    for job in dag.jobs:
        if job.rule.name != "data_notes":
            continue
        upstream = [dep for dep in dag.bfs(dag.dependencies, job) if dep is not job]
        write_data_notes_scope(
            DATA_NOTES_SCOPE.format(**job.wildcards_dict),
            (str(log) for dep in upstream for log in dep.log),
        )


def _targets(dag):
    """The targets asked for, as the report's command takes them: rule names, then files."""
    return sorted(rule.name for rule in dag.targetrules) + sorted(
        str(f) for f in dag.targetfiles
    )


def _cores():
    cores = workflow.resource_settings.cores
    return int(cores) if isinstance(cores, int) and cores > 0 else os.cpu_count() or 1


onstart:
    _RUN["started"] = _time.time()
    _RUN["costs"] = read_costs(JOB_COSTS)
    used = _used_names(workflow.dag)
    for fs, note in FEATURE_SET_NOTES:
        if fs is None or fs in used:
            print(note, file=sys.stderr)
    _RUN["plan"] = _planned_jobs(workflow.dag)
    _write_data_notes_scopes(workflow.dag)
    for line in plan_lines(
        _RUN["plan"],
        _cores(),
        _RUN["costs"],
        str(JOB_COSTS.relative_to(REPO)),
        machine_cores=os.cpu_count() if workflow.local_exec else None,
    ):
        print(line, file=sys.stderr)


def _configfiles():
    """The run's --configfile files, relative to the working directory where they are inside it."""
    out = []
    for f in getattr(workflow, "overwrite_configfiles", None) or ():
        p = Path(f)
        try:
            p = p.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            pass
        out.append(str(p))
    return out


def _end(ok):
    started = _RUN.get("started")
    records = read_conditions(since=started - 1 if started else None)
    if records:
        write_conditions(records, "logs/conditions.md")
    scheduler = getattr(workflow, "scheduler", None)
    failed = [
        {
            "rule": job.rule.name,
            "wildcards": ", ".join(f"{k}={v}" for k, v in job.wildcards_dict.items()),
            "log": [str(f) for f in job.log],
        }
        for job in sorted(getattr(scheduler, "failed", ()), key=str)
    ]
    ran = getattr(scheduler, "finished_jobs", 0)
    timed = measured_lines(
        _RUN.get("plan", []),
        _RUN.get("benchmarks", {}),
        _cores(),
        started,
        _RUN.get("costs", {}),
        "logs/run_summary.json",
    )
    for line in (
        timed
        + condition_lines(records)
        + summary_lines(
            ok,
            started,
            ran,
            failed,
            _targets(workflow.dag),
            configfiles=_configfiles(),
        )
    ):
        print(line, file=sys.stderr)


onsuccess:
    _end(True)


onerror:
    _end(False)
