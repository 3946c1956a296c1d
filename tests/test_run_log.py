"""What the main process says of a run (otfs_workflow.run_log): the plan's estimate, the conditions counted,
the end summary."""

from __future__ import annotations

import json
import logging
import sys
import warnings
from types import SimpleNamespace

import pytest

from otfs_workflow import run_log
from otfs_workflow.run_log import PlannedJob, estimate, plan_lines

from .conftest import REPO


def test_the_estimate_is_the_larger_of_the_job_time_over_the_cores_and_the_critical_path():
    costs = {("rank", "surf"): 10.0, ("rank", "*"): 4.0, ("classify", "*"): 2.0}
    # a chain rank(surf) -> classify -> table, and 4 independent rank jobs of another key
    jobs = [PlannedJob(0, "rank", "surf"), PlannedJob(1, "classify", "surf", deps=[0]),
            PlannedJob(2, "table", deps=[1])] + [PlannedJob(3 + i, "rank", "usps", threads=2) for i in range(4)]
    est = estimate(jobs, 2, costs)
    # table is never measured: it costs the median of the measured jobs of the plan (10, 2, 4, 4, 4, 4 -> 4)
    assert est["unmeasured"] == {"table": 1}
    assert est["job_s"] == pytest.approx(10 + 2 + 4 + 4 * 4 * 2)
    assert est["critical_path_s"] == pytest.approx(10 + 2 + 4)
    assert est["critical_path"] == [("rank", "surf", 10.0), ("classify", "surf", 2.0), ("table", "*", 4.0)]
    assert est["wall_s"] == pytest.approx(max(48 / 2, 16))
    # on 64 cores the critical path bounds it; a job's threads are capped at the cores
    assert estimate(jobs, 64, costs)["wall_s"] == pytest.approx(16)
    assert estimate(jobs, 1, costs)["job_s"] == pytest.approx(10 + 2 + 4 + 4 * 4)
    with pytest.raises(ValueError, match="cores: at least 1, got 0"):
        estimate(jobs, 0, costs)
    # a target rule runs nothing: it costs nothing, never the median of the measured jobs
    target = [*jobs, PlannedJob(7, "all", deps=[2], runs=False)]
    assert estimate(target, 64, costs)["critical_path_s"] == pytest.approx(16)
    assert estimate(target, 64, costs)["unmeasured"] == {"table": 1}
    # the start-of-run lines name the cores and the critical path, and a machine with fewer cores than asked for
    lines = plan_lines(jobs, 16, costs, machine_cores=2)
    assert "on 16 core(s) about" in lines[1] and "(critical path " in lines[1]
    assert "the critical path's longest jobs: rank (surf) 10 s, table 4 s, classify (surf) 2 s; 3 jobs in all." \
        in lines[2]
    assert any("this machine has 2 core(s), fewer than the 16 asked for" in line for line in lines)
    assert not any("this machine has" in line for line in plan_lines(jobs, 2, costs, machine_cores=2))
    assert not any("this machine has" in line for line in plan_lines(jobs, 16, costs, machine_cores=None))
    # on a cluster: so many cluster jobs at once, and a word on what the estimate leaves out
    cluster = plan_lines(jobs, 200, costs, cluster=True)
    assert "on a cluster, 200 jobs at once about 16 s (critical path 16 s)" in cluster[1]
    assert any("run one after another in their cluster job" in line for line in cluster)
    assert not any("cluster" in line for line in lines)


def test_costs_are_collected_from_benchmark_files_by_rule_and_key(tmp_path):
    bench = tmp_path / "logs" / "benchmarks"
    for rel, s in [("rank_features/surf/ot/a-b.tsv", 3.0), ("rank_features/surf/ks/a-b.tsv", 5.0),
                   ("rank_features/usps/ot/a-b.tsv", 7.0), ("make_table2/available.tsv", 1.5)]:
        f = bench / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"s\th:m:s\tmax_rss\n{s}\t0:00:03\t100\n")
    (bench / "rank_features" / "surf" / "ot" / "running.tsv").write_text("s\n")  # unfinished: skipped
    rows = run_log.collect_costs(bench)
    assert [(r["rule"], r["key"], r["jobs"], r["median_s"]) for r in rows] == [
        ("make_table2", "*", 1, 1.5), ("rank_features", "surf", 2, 4.0), ("rank_features", "usps", 1, 7.0)]
    run_log.write_costs(rows, tmp_path / "costs.tsv", ["measured here"])
    costs = run_log.read_costs(tmp_path / "costs.tsv")
    # a key never measured: the median of the rule's medians, each counted once per job (4, 4, 7)
    assert costs[("rank_features", "surf")] == 4.0 and costs[("rank_features", "*")] == 4.0
    assert run_log.benchmark_key("rank_features", "logs/benchmarks/rank_features/surf/ot/a-b.tsv") == "surf"
    assert run_log.benchmark_key("make_table2", "logs/benchmarks/make_table2/available.tsv") == "*"


def test_the_shipped_job_costs_are_read():
    costs = run_log.read_costs(REPO / "workflow" / "resources" / "job_costs.tsv")
    assert ("run_family_pair_part6of7", "amazon5000") in costs and all(v >= 0 for v in costs.values())


def _records(n_rankers=14, n_pairs=12):
    out = []
    for r in range(n_rankers):
        for p in range(n_pairs):
            out.append({"rule": "rank_features", "key": "surf", "wildcards": {"feature_set": "surf",
                        "ranker": f"r{r}", "pair": f"p{p}"}, "category": "DegenerateResultWarning",
                        "message": f"Ranker{r}: {1 + (r * p) % 15} of 1000 features are constant in both domains "
                                   f"['f{p}', 'g']: they carry no information", "log": f"logs/r{r}/p{p}.log"})
    return out


def test_conditions_are_one_line_per_kind_with_counts_and_ranges():
    records = _records() + [{"rule": "classify", "key": "heart", "wildcards": {"feature_set": "heart"},
                             "category": "ConvergenceWarning", "message": "lbfgs failed to converge after 100 "
                             "iterations", "log": "logs/c.log"}]
    lines = run_log.condition_lines(records)
    assert lines[0].startswith("otfs: 169 warning(s) from 169 job(s), in 2 kind(s)")
    assert lines[1] == ("  rank_features, surf, 168 jobs (12 pairs x 14 rankers): DegenerateResultWarning: 1 to 15 of "
                        "1,000 features are constant in both domains [...]: they carry no information")
    assert lines[2] == "  classify, heart, 1 job: ConvergenceWarning: lbfgs failed to converge after 100 iterations"
    assert len(run_log.condition_lines(_records(), limit=0)) == 2  # the head and "... and 1 more kind(s)"


def test_a_jobs_warnings_go_to_its_log_and_its_conditions_file_not_the_terminal(tmp_path, monkeypatch, capsys):
    import __main__
    from otfs._checks import DegenerateResultWarning
    from otfs_workflow.stages import job

    class FakeSnakemake:
        rule = "rank_features"
        wildcards = {"feature_set": "surf", "ranker": "ks", "pair": "a-b"}

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(__main__, "snakemake", FakeSnakemake, raising=False)
    log = "logs/ranking/surf/ks/a-b.log"
    with job(log, 1, "ranking") as logger:
        warnings.warn("KSRanker: 3 of 10 features are constant in both domains", DegenerateResultWarning,
                      stacklevel=1)
        logger.warning("pair a-b: the target has labels the source lacks")
        logger.info("working")
    logging.shutdown()
    err = capsys.readouterr().err
    assert "constant in both domains" not in err and "labels the source lacks" not in err
    text = (tmp_path / log).read_text()
    assert "KSRanker: 3 of 10 features are constant in both domains" in text and "lacks" in text
    records = [json.loads(x) for x in (tmp_path / "logs/conditions/ranking/surf/ks/a-b.jsonl").read_text().splitlines()]
    assert [(r["category"], r["message"]) for r in records] == [
        ("DegenerateResultWarning", "KSRanker: 3 of 10 features are constant in both domains"),
        ("", "pair a-b: the target has labels the source lacks")]
    assert records[0]["rule"] == "rank_features" and records[0]["key"] == "surf"
    assert run_log.read_conditions() == records
    # a rerun of the job starts its conditions afresh
    with job(log, 1, "ranking"):
        pass
    logging.shutdown()
    assert not (tmp_path / "logs/conditions/ranking/surf/ks/a-b.jsonl").exists()
    monkeypatch.setattr(sys, "stderr", sys.__stderr__)


def test_the_summary_names_the_results_the_report_and_every_failed_job(tmp_path):
    (tmp_path / "results" / "leaderboard").mkdir(parents=True)
    (tmp_path / "results" / "leaderboard" / "verdict.md").write_text("x")
    failed = [{"rule": "classify", "wildcards": "feature_set=surf, pair=a-b", "log": ["logs/classify/a-b.log"]}]
    lines = run_log.summary_lines(False, None, 12, failed, ["available"], root=tmp_path)
    assert lines[0] == "otfs: stopped: 1 job(s) failed, 12 ran."
    assert "  the data families' verdict: results/leaderboard/verdict.md" in lines
    assert "  the HTML report: snakemake --report report.html available" in lines
    # the run's config files after the targets (--configfile takes every word after it)
    mine = run_log.summary_lines(True, None, 3, [], ["recommend"], root=tmp_path, configfiles=["my config.yaml"])
    assert "  the HTML report: snakemake --report report.html recommend --configfile 'my config.yaml'" in mine
    assert lines[-1] == "  FAILED classify feature_set=surf, pair=a-b: logs/classify/a-b.log"
    assert run_log.format_duration(6240) == "1 h 44 min" and run_log.format_duration(45) == "45 s"


def test_the_measured_account_uses_each_jobs_own_record_and_the_dag(tmp_path):
    bench = {}
    for i, s in enumerate([30.0, 10.0, 10.0]):
        f = tmp_path / f"b{i}.tsv"
        f.write_text(f"s\th:m:s\n{s}\t0:00:10\n")
        bench[i] = str(f)
    jobs = [PlannedJob(0, "rank"), PlannedJob(1, "classify", deps=[0]), PlannedJob(2, "classify", deps=[0])]
    lines = run_log.measured_lines(jobs, bench, 2, None, {}, tmp_path / "summary.json")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["job_s"] == 50.0 and summary["critical_path_s"] == 40.0
    assert summary["wall_s_16_cores_estimate"] == 40.0 and summary["wall_s_estimate"] == 40.0  # max(25, 40)
    assert lines == ["otfs: job time 50 s (3 of 3 jobs timed); on 16 cores it would take about 40 s (critical "
                     "path 40 s)."]
    assert run_log.measured_lines(jobs, {}, 2, None, {}) == []


def test_every_condition_is_listed_in_full_under_its_group(tmp_path):
    records = _records(n_rankers=2, n_pairs=2)
    run_log.write_conditions(records, tmp_path / "conditions.md")
    text = (tmp_path / "conditions.md").read_text()
    assert text.count("\n## ") == 1 and all(f"- `{r['log']}`: {r['message']}" in text for r in records)


def test_the_data_notes_are_the_groups_as_a_table_and_in_full(tmp_path):
    import csv

    records = _records(n_rankers=3, n_pairs=2) + [{"rule": "classify", "key": "heart", "wildcards": {},
                                                   "category": "", "message": "lbfgs failed after 100 iterations",
                                                   "log": "logs/c.log"}]
    run_log.write_data_notes(records, tmp_path / "notes.csv", tmp_path / "notes.md")
    with open(tmp_path / "notes.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["stage"], r["key"], r["jobs"], r["warnings"]) for r in rows] == [
        ("rank_features", "surf", "6", "6"), ("classify", "heart", "1", "1")]
    # the ranges of the numbers over the group's messages: 1 + (r * p) % 15 for r < 3, p < 2
    assert rows[0]["condition"] == ("1 to 3 of 1,000 features are constant in both domains [...]: they carry no "
                                    "information")
    assert rows[0]["category"] == "DegenerateResultWarning" and rows[0]["example_log"] == "logs/r0/p0.log"
    text = (tmp_path / "notes.md").read_text()
    assert all(r["message"] in text for r in records)


def test_the_data_notes_keep_the_conditions_of_their_targets_jobs(tmp_path, caplog):
    records = _records(n_rankers=2, n_pairs=2)
    scope = tmp_path / "available.jobs.json"
    run_log.write_data_notes_scope(scope, ["logs/r1/p0.log", "logs/r0/p1.log", "logs/r0/p1.log", "logs/other.log"])
    assert json.loads(scope.read_text()) == ["logs/other.log", "logs/r0/p1.log", "logs/r1/p0.log"]
    kept = run_log.scoped_conditions(records, scope)
    assert [r["log"] for r in kept] == ["logs/r0/p1.log", "logs/r1/p0.log"]  # in the records' order
    assert kept == [r for r in records if r["log"] in {"logs/r0/p1.log", "logs/r1/p0.log"}]
    # a job started by hand, outside a run that planned it: every condition, and a warning naming the file
    with caplog.at_level("WARNING", logger="otfs"):
        assert run_log.scoped_conditions(records, tmp_path / "paper.jobs.json") == records
    assert "paper.jobs.json is missing" in caplog.text


class _Job:
    """A stand-in for a Snakemake job: hashable by identity, as Snakemake's are."""

    def __init__(self, rule, benchmark=None, threads=1, wildcards=None, log=(), is_norun=False):
        self.rule, self.benchmark, self.threads = SimpleNamespace(name=rule), benchmark, threads
        self.wildcards_dict, self.log, self.is_norun = dict(wildcards or {}), list(log), is_norun

    def __str__(self):
        return f"{self.rule.name}{self.wildcards_dict}"


def _workflow(jobs, dependencies, cores=2, failed=(), configfiles=(), nodes=None, local_exec=True):
    def bfs(deps, job):  # the job, then every job it depends on
        seen, todo = [], [job]
        while todo:
            j = todo.pop(0)
            if j not in seen:
                seen.append(j)
                todo.extend(deps.get(j, {}))
        return seen

    dag = SimpleNamespace(jobs=jobs, needrun_jobs=lambda: jobs, dependencies=dependencies, bfs=bfs,
                          targetrules=[SimpleNamespace(name="available")], targetfiles=[])
    return SimpleNamespace(dag=dag, resource_settings=SimpleNamespace(cores=cores, nodes=nodes), local_exec=local_exec,
                           scheduler=SimpleNamespace(failed=list(failed), finished_jobs=len(jobs) - len(failed)),
                           overwrite_configfiles=list(configfiles))


def test_a_runs_start_and_end_lines_from_snakemakes_dag(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config").mkdir()
    costs = tmp_path / "job_costs.tsv"
    costs.write_text("rule\tkey\tjobs\tmedian_s\ttotal_s\nrank_features\tsurf\t1\t30\t30\nclassify\tsurf\t1\t6\t6\n")
    rank = _Job("rank_features", "logs/benchmarks/rank_features/surf/ot/a-b.tsv", wildcards={
        "feature_set": "surf", "pair": "a-b"}, log=["logs/ranking/surf/a-b.log"])
    classify = _Job("classify", "logs/benchmarks/classify/surf/a-b.tsv", threads=2,
                    wildcards={"feature_set": "surf"}, log=["logs/classification/surf/a-b.log"])
    notes = _Job("data_notes", wildcards={"target_set": "available"})
    target = _Job("available", is_norun=True)  # a target rule: it runs nothing
    deps = {classify: {rank: None}, notes: {classify: None}, target: {notes: None}}
    workflow = _workflow([rank, classify, notes, target], deps, configfiles=[tmp_path / "config" / "test.yaml"])
    run = run_log.Run(costs, tmp_path)
    lines = run.start(workflow, [("surf", "note: surf's"), ("wine", "note: wine's"), (None, "note: every run's")])
    assert lines[:2] == ["note: surf's", "note: every run's"]  # wine is used by no job of the run
    assert lines[2] == "otfs: 4 jobs to run (1 available, 1 classify, 1 data_notes, 1 rank_features)."
    assert "on 2 core(s)" in lines[3] and "from the job costs measured in job_costs.tsv" in lines[3]
    # on a cluster (the slurm profile: one core per cluster job, --jobs 200 at once), the cluster jobs at once
    cluster = run_log.Run(costs, tmp_path).start(
        _workflow([rank, classify, notes, target], deps, cores=1, nodes=200, local_exec=False))
    assert "on a cluster, 200 jobs at once" in cluster[1] and "core(s)" not in cluster[1], cluster
    assert run.benchmarks == {0: str(rank.benchmark), 1: str(classify.benchmark)}
    assert [j.deps for j in run.plan] == [[], [0], [1], [2]] and run.plan[1].threads == 2
    assert [j.runs for j in run.plan] == [True, True, True, False]
    # data_notes, never measured, costs the median of the measured jobs (30, 6 -> 18); the target nothing
    assert run_log.estimate(run.plan, 64, run.costs)["critical_path_s"] == pytest.approx(30 + 6 + 18)
    scope = json.loads((tmp_path / "logs" / "data_notes" / "available.jobs.json").read_text())
    assert scope == sorted([*rank.log, *classify.log])
    failed = _workflow([rank, classify, notes], deps, failed=[classify], configfiles=[tmp_path / "config" / "test.yaml"])
    end = run.end(failed, False)
    assert any(line.startswith("otfs: stopped") and "1 job(s) failed, 2 ran" in line for line in end)
    assert "  FAILED classify feature_set=surf: logs/classification/surf/a-b.log" in end
    assert any(line.endswith("snakemake --report report.html available --configfile config/test.yaml")
               for line in end)
