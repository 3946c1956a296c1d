"""Cluster execution: the profiles, job grouping, data staging, and a real SLURM run.

The last test (marked ``slurm``) starts a one-node SLURM cluster with an
accounting database on this machine (tests/localslurm.py), runs the test
configuration through ``profiles/slurm-ci`` and checks that the results
equal the local run's. It runs when ``OTFS_TEST_SLURM=1`` (CI sets it, after
installing Debian's SLURM packages: ``make slurm-packages``) and is
deselected otherwise; with the variable set, a missing program fails it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from otfs_workflow.cluster import (
    compare_results,
    count_submissions,
    dry_run_events,
    local_rules,
    recommend,
    rule_for_benchmark,
)

from .conftest import REPO, copy_workflow, mirror_dir, planned_jobs, snakemake, snakemake_env
from .localslurm import ACCOUNT, PARTITION, LocalSlurm, missing_programs

# Keys in which profiles/slurm-ci may differ from profiles/slurm (its header says why).
CI_KEYS = {"jobs", "cores", "local-cores", "latency-wait", "keep-going", "retries", "max-status-checks-per-second",
           "slurm-init-seconds-before-status-checks", "slurm-keep-successful-logs"}


def _profile(name: str, env: dict | None = None) -> dict:
    import yte

    text = (REPO / "profiles" / name / "config.yaml").read_text()
    if "__use_yte__" not in text:
        return yaml.safe_load(text)
    saved = dict(os.environ)
    try:
        for k in ("OTFS_SLURM_PARTITION", "OTFS_SLURM_ACCOUNT", "SBATCH_PARTITION", "SBATCH_ACCOUNT"):
            os.environ.pop(k, None)
        os.environ.update(env or {})
        return yte.process_yaml(text, require_use_yte=True)
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="module")
def workflow_rules() -> set[str]:
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--list-rules"], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, "OTFS_DATA_MIRROR": str(mirror_dir())})
    assert proc.returncode == 0, proc.stderr
    return {line.strip() for line in proc.stdout.splitlines() if re.fullmatch(r"\s*[a-z_0-9]+\s*", line)}


# --- profiles ------------------------------------------------------------------
def test_slurm_ci_differs_from_slurm_only_in_the_documented_keys():
    slurm, ci = _profile("slurm"), _profile("slurm-ci")
    assert slurm["executor"] == ci["executor"] == "slurm"
    differing = {k for k in set(slurm) | set(ci) if slurm.get(k) != ci.get(k)}
    assert differing <= CI_KEYS, f"profiles/slurm-ci drifted from profiles/slurm in {differing - CI_KEYS}"
    # what makes CI work without waiting: the first status check after 2 s
    assert ci["slurm-init-seconds-before-status-checks"] == 2
    assert "slurm-status-command" not in slurm and "slurm-status-command" not in ci  # sacct, the default


def test_workflow_profile_leaves_site_settings_to_the_selected_profile():
    # Snakemake lets profiles/default override a --profile per key: it must not
    # hold anything profiles/local or profiles/slurm set.
    default = _profile("default")
    for name in ("local", "slurm", "slurm-ci"):
        shared = set(default) & set(_profile(name))
        assert not shared, f"profiles/default would override {shared} of profiles/{name}"


def test_partition_and_account_come_from_the_environment():
    bare = _profile("slurm", {})["default-resources"]
    assert "slurm_partition" not in bare and "slurm_account" not in bare  # nothing of a site is written in
    res = _profile("slurm", {"SBATCH_PARTITION": "long", "SBATCH_ACCOUNT": "lab42"})["default-resources"]
    # quoted, so that Snakemake evaluates them to strings (a partition called `max` stays a string)
    assert res["slurm_partition"] == "'long'" and res["slurm_account"] == "'lab42'"
    res = _profile("slurm", {"SBATCH_PARTITION": "long", "OTFS_SLURM_PARTITION": "gpu"})["default-resources"]
    assert res["slurm_partition"] == "'gpu'"


@pytest.mark.subprocess
def test_profiles_name_only_rules_of_the_workflow(workflow_rules):
    assert {"rank_features", "classify", "aggregate"} <= workflow_rules
    for name in ("slurm", "slurm-ci"):
        prof = _profile(name)
        for key in ("set-resources", "set-threads", "groups"):
            unknown = set(prof.get(key, {})) - workflow_rules
            assert not unknown, f"profiles/{name} {key} names unknown rules {unknown}"
        assert set(prof["groups"].values()) == set(prof["group-components"])
        # every computing rule of the grid has a measured request
        for rule in ("rank_features", "classify", "classify_leaderboard_adapters", "run_family_pair", "build_cache",
                     "extract_features", "clinical_rank", "clinical_classify", "score_model_selection"):
            assert {"runtime", "mem_mb"} <= set(prof["set-resources"][rule]), rule


def test_no_runtime_settings_in_config_yaml():
    config = yaml.safe_load((REPO / "config.yaml").read_text())

    def keys(d, prefix=""):
        for k, v in d.items():
            yield f"{prefix}{k}"
            if isinstance(v, dict):
                yield from keys(v, f"{prefix}{k}.")

    runtime = [k for k in keys(config) if k.rsplit(".", 1)[-1] in {"threads", "jobs", "cores", "mem_mb", "runtime"}]
    assert not runtime, f"runtime settings belong in profiles/: {runtime}"


# --- counting the jobs a cluster gets --------------------------------------------
def _job(jobid, rule, output=True):
    return {"event": "job_info", "jobid": jobid, "rule_name": rule, "output": [f"out/{jobid}"] if output else []}


# a dry run's events as --logger otfs writes them: two group jobs of one group (group-components), a local
# rule and a target that runs nothing
EVENTS = [
    {"event": "workflow_started"},
    _job(1, "acquire"), _job(2, "build_cache"),
    {"event": "group_info", "group_id": "pairs", "jobs": [3, 4]}, _job(3, "classify"), _job(4, "rank_features"),
    {"event": "group_info", "group_id": "pairs", "jobs": [5]}, _job(5, "classify"),
    _job(6, "plot_figure5"), _job(7, "table2", output=False),
]


def test_local_rules_reads_indented_and_included_directives(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "Snakefile").write_text('include: "rules/a.smk"\n\nlocalrules: top, other\n')
    (tmp_path / "rules" / "a.smk").write_text(
        "if FLAG:\n\n    localrules:\n        inner,\n        # a comment\n        second,\n\n"
        "    ruleorder: inner > not_local\n\nlocalrules:\n    plain,\n\nrule not_local_either:\n"
        "    output: 'x'\n")
    assert local_rules(tmp_path / "Snakefile") == {"top", "other", "inner", "second", "plain"}


def test_count_submissions_reads_groups_local_and_target_rules():
    counts = count_submissions(EVENTS, {"acquire"})
    # acquire is local and table2 runs nothing; 2 group jobs + build_cache + plot_figure5
    assert counts == {"jobs": 7, "local": 2, "grouped": 3, "group_jobs": 2, "submitted": 4}
    # a local rule inside a group is still not submitted
    assert count_submissions(EVENTS, {"acquire", "rank_features"})["grouped"] == 2


@pytest.mark.subprocess
def test_local_rules_fetch_data_or_summarise(workflow_rules):
    local = local_rules(REPO / "Snakefile")
    # the Snakefile's own and those of the included experiment files (each declares its summaries)
    assert {"acquire", "acquire_images", "aggregate", "make_table2", "plot_figure7", "acquire_uci", "make_wda_table1",
            "make_semfs_table", "plot_boosting_figure", "make_invariance_table", "make_table4",
            "plot_figure4", "recommend_task", "recommend_evaluation",
            # declared inside an `if` block (shift.smk), indented
            "aggregate_family"} <= local <= workflow_rules
    # nothing that computes the grid runs locally, and no local rule is grouped (groups override localrules)
    assert not local & {"rank_features", "classify", "classify_leaderboard_adapters", "run_family_pair", "build_cache",
                        "extract_features", "clinical_rank", "clinical_classify", "clinical_data",
                        "score_model_selection"}
    assert not local & set(_profile("slurm")["groups"])


@pytest.mark.subprocess
def test_grouping_bundles_the_test_configuration(tmp_path):
    work = copy_workflow(tmp_path)
    args = ("--configfile", "config/test.yaml", "--forceall")
    local = local_rules(work / "Snakefile")
    # each dry run once: Snakemake's own job table, and the events (--logger otfs) that python -m
    # otfs_workflow.cluster reads, which list the same jobs
    runs = []
    for how in (("--cores", "1"), ("--profile", "profiles/slurm-ci")):
        events = tmp_path / f"events{len(runs)}.jsonl"
        proc = snakemake(work, *args, *how, "--dry-run", "--logger", "otfs", "--logger-otfs-events", str(events),
                         "available")
        runs.append((planned_jobs(proc), [json.loads(line) for line in events.read_text().splitlines()]))
    (jobs, plain), (grouped_jobs, grouped) = runs
    assert jobs == grouped_jobs  # grouping changes no job, only their bundling
    for events in (plain, grouped):
        assert Counter(e["rule_name"] for e in events if e.get("event") == "job_info") == jobs
    a, b = count_submissions(plain, local), count_submissions(grouped, local)
    assert a["jobs"] == b["jobs"] == sum(jobs.values())
    assert a["group_jobs"] == 0 and a["submitted"] == a["jobs"] - a["local"]
    # one chain per (feature set, ranker, pair)'s ranking job, and one per data family's (feature set, pair)
    chains = jobs["rank_features"] + jobs["run_family_pair"]
    comps = _profile("slurm-ci")["group-components"]
    # and the points of all features of the choice of k (the verdict reads the recommendation's evaluation, which
    # reads SURF's choice of k), bundled on their own
    ends = jobs.get("score_model_selection_all_features", 0) + jobs.get("classify_leaderboard_all_features", 0)
    expected_groups = (-(-chains // comps["pairs"]) + -(-jobs["build_cache"] // comps["caches"])
                       + -(-(jobs["clinical_rank"]) // comps["clinical"]) + -(-ends // comps["ends"]))
    assert b["group_jobs"] == expected_groups
    # docs/cluster.md's command prints the same counts
    env = snakemake_env()
    proc = subprocess.run([sys.executable, "-m", "otfs_workflow.cluster", "jobs", "available", "--forceall",
                           "--configfile", "config/test.yaml", "--profile", "profiles/slurm-ci"], cwd=work,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"{a['jobs']} jobs, {a['local']} run locally" in proc.stdout
    assert f"submitted without grouping: {a['submitted']}" in proc.stdout
    assert f"with profiles/slurm-ci: {b['submitted']} ({b['grouped']} jobs in {b['group_jobs']} group jobs)" in proc.stdout
    assert b["submitted"] < a["submitted"] / 4


@pytest.mark.subprocess
def test_stage_fetches_every_input_and_nothing_else(tmp_path):
    work = copy_workflow(tmp_path)
    jobs = planned_jobs(snakemake(work, "--dry-run", "--cores", "1", "stage"))
    from otfs.datasets import get_reader, reader_spec

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    released = {(fs["dataset"], rel) for fs in config["feature_sets"].values() if "extractor" not in fs
                for d in fs.get("domains") or config["datasets"][fs["dataset"]]["domains"]
                for rel in get_reader(*reader_spec(fs)).files(d)}  # every file each dataset reader reads
    # Office-Caltech's three released sets, USPS's and MNIST's two files each, and the 19 files of the seven
    # classification data families (Amazon 400: 4, Amazon 5,000: 4 train files, 20 Newsgroups: 1 archive, wine:
    # 2, heart: 4, landmine: 1, WiFi: 3); corn NIR has no feature set
    assert len(released) == 12 + 4 + 19
    assert jobs == {"acquire": len(released), "acquire_images": 4, "stage": 1}
    # with downloads off and files missing, only `stage` itself fails at once, naming them
    (work / "config" / "offline.yaml").write_text("datasets:\n  office-caltech:\n    download: false\n")
    snakemake(work, "--configfile", "config/offline.yaml", "--dry-run", "--cores", "1", "available")
    proc = snakemake(work, "--configfile", "config/offline.yaml", "--dry-run", "--cores", "1", "stage", check=False)
    assert proc.returncode != 0 and "cannot be obtained" in proc.stdout + proc.stderr


# --- resources from measurements -----------------------------------------------------
@pytest.mark.subprocess
def test_benchmark_files_map_to_their_rules(workflow_rules):
    # every benchmark: path of the workflow, with its wildcards filled, maps to its own rule
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        text = smk.read_text()
        for m in re.finditer(r"^rule (\w+):(.*?)(?=^rule |\Z)", text, flags=re.S | re.M):
            rule, body = m.group(1), m.group(2)
            b = re.search(r'benchmark:\s*\n\s*"logs/benchmarks/([^"]+)"', body)
            if not b:
                continue
            path = re.sub(r"\{target_set\}", "available", b.group(1))
            path = re.sub(r"\{(\w+)\}", lambda w: {"adapter": "OT3"}.get(w.group(1), "x"), path)
            if rule.startswith("benchmark") or rule in {"scaling_study", "pipeline_profile", "end_to_end",
                                                         "table3_4096"}:
                continue
            assert rule_for_benchmark(Path(path)) == rule, (smk.name, rule, path)
            assert rule in workflow_rules


def _documented_command(page: str, start: str) -> str:
    """The one line of ``docs/<page>`` that starts the command ``start``, as written there (a code block's line or
    an inline code span)."""
    found = [m.strip("`") for line in (REPO / "docs" / page).read_text(encoding="utf-8").splitlines()
             for m in re.findall(rf"`?({re.escape(start)}[^`]*)`?", line.strip())]
    assert len(found) == 1, (page, start, found)
    return found[0]


@pytest.mark.subprocess
def test_the_documented_resource_and_cost_commands_run_as_written(tmp_path):
    import shlex

    from otfs_workflow.run_log import read_costs

    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for rel, s, rss in (("rank_features/surf/ot/a-b.tsv", 4.0, 300.0), ("rank_features/surf/ks/a-b.tsv", 2.0, 200.0),
                        ("rank_features/mnist/ot/a-b.tsv", 9.0, 500.0), ("make_table2/available.tsv", 1.5, 100.0)):
        path = tmp_path / "logs" / "benchmarks" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + f"{s}\t0:00:0{int(s)}\t{rss}\t0\t0\t0\t0\t0\t50\t{s / 2}\n")
    (tmp_path / "workflow" / "resources").mkdir(parents=True)

    def run(command: str, cwd=tmp_path) -> subprocess.CompletedProcess:
        argv = shlex.split(command)
        assert argv[0] == "python"
        return subprocess.run([sys.executable, *argv[1:]], cwd=cwd, capture_output=True, text=True)

    resources = run(_documented_command("cluster.md", "python -m otfs_workflow.cluster resources"))
    assert resources.returncode == 0, resources.stderr
    assert "set-resources:" in resources.stdout and "  rank_features: {runtime: 2, mem_mb: 1024}" in resources.stdout

    costs = run(_documented_command("usage.md", "python -m otfs_workflow.cluster costs"))
    assert costs.returncode == 0, costs.stderr
    assert "3 kinds of job, 4 jobs, 16 s of job time" in costs.stdout
    table = tmp_path / "workflow" / "resources" / "job_costs.tsv"
    assert table.read_text().startswith("# where and when this ran\n")
    assert read_costs(table) == {("rank_features", "surf"): 3.0, ("rank_features", "mnist"): 9.0,
                                 ("make_table2", "*"): 1.5, ("rank_features", "*"): 3.0}
    (tmp_path / "empty").mkdir()
    nothing = run("python -m otfs_workflow.cluster costs empty --out empty/job_costs.tsv")
    assert nothing.returncode == 2 and "empty: no benchmark files" in nothing.stderr
    assert not (tmp_path / "empty" / "job_costs.tsv").exists()


def test_recommend_adds_margins():
    measured = pd.DataFrame({"jobs": [3, 2], "max_s": [10.0, 200.0], "max_rss_mb": [300.0, 2000.0],
                             "cpu_ratio": [1.0, 1.0]}, index=["rank_features", "classify"])
    rec = recommend(measured)
    assert rec.loc["rank_features", "runtime"] == 2 and rec.loc["rank_features", "mem_mb"] == 1024
    assert rec.loc["classify", "runtime"] == 10  # 3 x 200 s
    assert rec.loc["classify", "mem_mb"] == 3072  # 1.5 x 2000 MB, to 256 MB


# --- comparing two runs ------------------------------------------------------------
def test_compare_results_ignores_time_and_finds_any_other_change(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root, (acc, sec) in ((a, (61.5, 0.1)), (b, (61.5, 9.9))):
        (root / "results" / "runs").mkdir(parents=True)
        pd.DataFrame({"n_features": [5], "accuracy": [acc], "seconds": [sec]}).to_csv(
            root / "results" / "runs" / "x.tsv", sep="\t", index=False)
        (root / "results" / "runs" / "x.json").write_text('{"iterations": [1, 2], "elapsed_s": %s}' % sec)
        (root / "results" / "runs" / "provenance.json").write_text('{"host": "%s"}' % root.name)
    n, diffs = compare_results(a, b, folders=("results/runs",))
    assert n == 2 and diffs == []
    # the second run built a subset of the first's targets: only its own files are compared
    (b / "results" / "runs" / "x.json").unlink()
    assert compare_results(a, b, folders=("results/runs",), second_is_subset=True) == (1, [])
    n, diffs = compare_results(a, b, folders=("results/runs",))
    assert diffs == ["results/runs/x.json: only in first run"]
    (b / "results" / "runs" / "extra.csv").write_text("a\n1\n")
    n, diffs = compare_results(a, b, folders=("results/runs",), second_is_subset=True)
    assert diffs == ["results/runs/extra.csv: only in second run"]

    pd.DataFrame({"n_features": [5], "accuracy": [61.4], "seconds": [0.1]}).to_csv(
        b / "results" / "runs" / "x.tsv", sep="\t", index=False)
    (b / "results" / "runs" / "x.json").write_text('{"iterations": [1, 3]}')
    n, diffs = compare_results(a, b, folders=("results/runs",))
    assert len(diffs) == 3
    assert any("accuracy" in d for d in diffs) and any("iterations[1]" in d for d in diffs)
    assert any("extra.csv: only in second run" in d for d in diffs)
    n, diffs = compare_results(a, b, folders=("results/runs",), second_is_subset=True)
    assert len(diffs) == 3


# --- a real SLURM cluster -----------------------------------------------------------
def _sacct_jobs(env) -> pd.DataFrame:
    proc = subprocess.run(["sacct", "-n", "-X", "-P", "-a", "-S", "now-1days",
                           "-o", "JobID,JobName,State,Account,Partition,AllocCPUS,ReqMem,Elapsed"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("|") for line in proc.stdout.splitlines() if line.strip()]
    return pd.DataFrame(rows, columns=["id", "name", "state", "account", "partition", "cpus", "mem", "elapsed"])


# Targets of `available`'s scope (the named targets `table1`... ask for every feature set of the paper, CaffeNet's
# too, whose files are not in the CI mirror).
SLURM_TARGETS = ("results/available/table1/EfficientNetLite0.csv", "results/available/table1/surf.csv", "figure4")


@pytest.mark.slurm
def test_slurm_profile_runs_the_test_configuration_like_a_local_run(test_run_results, tmp_path):
    missing = missing_programs()
    assert not missing, f"SLURM test: {missing} not installed (make slurm-packages)"
    root = Path(tempfile.mkdtemp(prefix="otfs-slurm-", dir="/tmp"))
    cluster = LocalSlurm(root)
    started = time.monotonic()
    cluster.start()
    setup_s = time.monotonic() - started
    try:
        work = copy_workflow(tmp_path / "slurm")
        env = {**os.environ, **cluster.env, "OTFS_DATA_MIRROR": str(mirror_dir()), "OTFS_SLURM_ACCOUNT": ACCOUNT}
        env.pop("PYTHONPATH", None)
        # without the data families (their files absent), which the local run has built too, and three targets
        # of the test configuration, not all of `available`: Table 1 of SURF and of EfficientNet-Lite0 (image
        # features extracted, the caches' and the pairs' groups) and Figure 4 (the clinical group). Every group
        # and local rule of the profile runs, and the SLURM run stays within CI's time (all of `available` took
        # 800 s here, its groups' members one after the other).
        env.pop("OTFS_SHIFT_MIRROR", None)
        args = ["--profile", "profiles/slurm-ci", "--configfile", "config/test.yaml", "--", *SLURM_TARGETS]
        expected = count_submissions(dry_run_events(args, work, env), local_rules(work / "Snakefile"))
        assert {"group_jobs", "submitted"} <= set(expected) and expected["group_jobs"] >= 3, expected

        t0 = time.monotonic()
        # snakemake ignores SIGTERM while jobs run: stop it with SIGINT, then kill
        proc = subprocess.run(["timeout", "-s", "INT", "-k", "60", "1200", sys.executable, "-m", "snakemake", *args],
                              cwd=work, env=env, capture_output=True, text=True)
        run_s = time.monotonic() - t0
        log = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"SLURM run failed (exit {proc.returncode}):\n{log[-8000:]}\n" + "\n".join(
            p.read_text()[-3000:] for p in sorted((work / "logs" / "slurm").rglob("*.log"))[-3:])

        jobs = _sacct_jobs(env)
        assert len(jobs) == expected["submitted"], (jobs, expected)
        assert set(jobs["state"]) == {"COMPLETED"}, jobs
        assert set(jobs["account"]) == {ACCOUNT} and set(jobs["partition"]) == {PARTITION}
        assert len(jobs) < expected["jobs"] - expected["local"]  # grouping bundled jobs

        folders = ["results/runs", "results/aggregate", "results/available", "results/clinical"]
        # the local run's results as built (test_run_results: the tests of test_run rerun jobs there)
        n, diffs = compare_results(test_run_results, work, folders=folders, second_is_subset=True)
        assert n > 20 and not diffs, f"{len(diffs)} differences from the local run:\n" + "\n".join(diffs[:30])
        assert (work / "results" / "clinical").is_dir() and list((work / "results" / "runs").iterdir())
        print(f"\nSLURM: cluster up in {setup_s:.1f} s; {expected['jobs']} jobs ({expected['local']} local) "
              f"in {len(jobs)} SLURM jobs, {run_s:.0f} s; {n} result files equal to the local run's")
    finally:
        stopped = cluster.stop()
    assert set(stopped) == {"munged", "mariadbd", "slurmdbd", "slurmctld", "slurmd"}
    for name, pid in stopped.items():
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower(), name
