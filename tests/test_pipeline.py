"""The Snakemake pipeline, run for real on the tiny test configuration.

The workflow is copied into a temporary folder (Snakefile, config, workflow/,
src/, data/manifests) so tests can run it, and edit its code, without
touching the checkout.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from otfs_workflow.data import read_cache
from otfs_workflow.io import read_tsv

from .conftest import (
    REPO,
    ROWS_PER_PAIR_ITERATION,
    SNAKEMAKE,
    copy_workflow,
    docs_block,
    install_distribution,
    mirror_dir,
    planned_jobs,
    snakemake,
)

pytestmark = pytest.mark.pipeline



def test_dry_run_of_all_plans_the_paper_grid(tmp_path):
    work = copy_workflow(tmp_path)
    jobs = planned_jobs(snakemake(work, "--dry-run", "--cores", "16", "all"))
    # 3 released feature sets x 4 domains, and USPS's and MNIST's 2 files each (the leaderboard's USPSMNIST),
    # each acquired once; the images of 4 domains acquired, extracted and cached once
    assert jobs["acquire"] == 12 + 4 and jobs["acquire_images"] == jobs["extract_features"] == 4
    assert jobs["build_cache"] == 16 + 2
    # ranking (an OT ranker selects its samples, Algorithm 1, inside its fit: no job of its own): one job per
    # pair and OT ranker (ot for 4 feature sets and USPSMNIST's 2 pairs, plus ot-random and ot-1nn for Table 5's
    # CaffeNet); the leaderboard's other rankers on SURF, EfficientNet-Lite0 and USPSMNIST one job per feature
    # set and ranker, for all its pairs
    assert "select_samples" not in jobs
    n_leaderboard = len(yaml.safe_load((REPO / "config.yaml").read_text())["leaderboard"]["rankers"])  # ot among them
    assert jobs["rank_features"] == 12 * 4 + 2 + 12 * 2
    for fs in ("surf", "EfficientNetLite0", "USPSMNIST"):
        assert jobs[f"rank_pairs_{fs}"] == n_leaderboard - 1, fs
    # classification: NA curves (4 feature sets), OT3 curves (GoogleNet),
    # Table 1's NA and OT3 (CaffeNet, EfficientNet), Table 3's 5 adapters
    # (CaffeNet), Table 5's two other strategies; and, since `all` includes the
    # related methods, WDA's Office-Caltech table (5 adapters on SURF, grid `wda`)
    assert jobs["classify"] == 12 * (4 + 1 + 4 + 5 + 2) + 12 * 5
    # and the leaderboard's own grid: its rankers on 26 pairs, each job running the 5 adapters on every pair of
    # its feature set
    assert "classify_leaderboard_adapters" not in jobs
    for fs in ("surf", "EfficientNetLite0", "USPSMNIST"):
        assert jobs[f"classify_pairs_{fs}"] == n_leaderboard, fs
    assert jobs["classify_leaderboard_all_features"] == 26  # the point of all features: once per pair
    assert jobs["make_leaderboard"] == jobs["shift_recovery_run"] == 1
    # the label-free choice of k: one job per (feature set, ranker) of the leaderboard's grid, for all its pairs,
    # or for each share of them (model_selection.pairs_per_job: SURF's and EfficientNet-Lite0's 12 in two)
    assert "score_model_selection" not in jobs and jobs["make_model_selection"] == 1
    for fs in ("surf", "EfficientNetLite0"):
        assert f"score_pairs_{fs}" not in jobs, fs
        assert jobs[f"score_pairs_{fs}_part1of2"] == jobs[f"score_pairs_{fs}_part2of2"] == 7, fs
    assert jobs["score_pairs_USPSMNIST"] == 7
    assert jobs["score_model_selection_all_features"] == 26  # its point of all features: once per pair
    # the related methods' experiments are part of `all`
    for rule in ("make_wda_table1", "make_wda_ablation", "plot_wda_figure2", "make_wda_office",
                 "make_invariance_table", "make_boosting_table", "make_semfs_table"):
        assert jobs[rule] == 1, rule
    assert jobs["make_table1"] == 2
    # the clinical experiment: 20 repetitions, NA and OT3
    assert jobs["clinical_data"] == 1 and jobs["clinical_rank"] == 20
    assert jobs["clinical_classify"] == 40 and jobs["clinical_aggregate"] == 2
    for rule in ("make_table4", "plot_figure3", "plot_figure4"):
        assert jobs[rule] == 1, rule
    for rule in ("make_table2", "make_table3", "make_table5", "make_table6",
                 "plot_figure1", "plot_figure2", "plot_figure5", "plot_figure6", "plot_figure7",
                 "make_comparison"):
        assert jobs[rule] == 1, rule


def test_every_target_is_built(test_run):
    out = test_run / "results" / "available"
    for name in ("table1/surf", "table1/GoogleNet1024", "table1/EfficientNetLite0", "table2/table2", "table3/surf",
                 "table3/GoogleNet1024", "table5/surf", "table5/GoogleNet1024", "table6/table6"):
        for ext in ("csv", "tex", "md", "comparison.csv"):
            assert (out / f"{name}.{ext}").stat().st_size > 0, f"{name}.{ext}"
    for name in ("figure1/surf", "figure1/GoogleNet1024", "figure2/GoogleNet1024", "figure7/figure7",
                 "figure5/figure5", "figure6/figure6"):
        assert (out / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert (out / f"{name}.png").read_bytes().startswith(b"\x89PNG")
    clinical = test_run / "results" / "clinical"
    for name in ("figure3/figure3", "figure4/figure4"):
        assert (clinical / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert (clinical / f"{name}.png").read_bytes().startswith(b"\x89PNG")
    t4 = pd.read_csv(clinical / "table4" / "table4.csv")
    assert t4["voxels"].sum() == 4193 + 9874  # Table 4 x 0.01
    prov = json.loads((clinical / "aggregate" / "NA" / "provenance.json").read_text())
    assert prov["detection"]["repetitions"] == 2 and prov["detection"]["hits"] == 2
    # CaffeNet has one domain here: no pair, so no CaffeNet target
    assert not list(out.glob("*/CaffeNet4096.*"))
    tex = (out / "table6" / "table6.tex").read_text()
    assert r"\begin{tabular}" in tex and r"$\searrow$" in tex


def test_every_output_has_the_values_of_the_reference_run(test_run_results):
    """Every output of the test configuration's `available` that tests/data/available_values.tsv lists has the
    values it records (tests/values.py: a digest of each file's values to 6 significant digits, with times,
    dates, versions, provenance, figures' bytes and the results of PyTorch's extracted features left out); a
    file it does not list is new. The digests were taken right after the build (conftest._built_run), before any
    test reruns a job."""
    from .values import read_digests

    expected = read_digests(Path(__file__).parent / "data" / "available_values.tsv")
    found = json.loads((test_run_results.parent / "run_cores2-values.json").read_text())
    missing = sorted(set(expected) - set(found))
    changed = sorted(p for p in expected.keys() & found.keys() if expected[p] != found[p])
    assert not missing, f"outputs of the reference run not built: {missing}"
    assert not changed, f"outputs whose values differ from the reference run's: {changed}"


def test_the_data_notes_count_every_warning_the_jobs_recorded(test_run):
    """results/available/data_notes.csv (the report's "Data notes") counts each job's recorded warnings: its
    groups' warnings sum to the lines of logs/conditions/ as the run left them, and the full listing beside it
    has every message."""
    snapshot = test_run.parent / f"{test_run.name}-pristine" / "logs" / "conditions"  # conftest._built_run
    records = [json.loads(line) for f in sorted(snapshot.rglob("*.jsonl"))
               for line in f.read_text().splitlines() if line.strip()]
    notes = pd.read_csv(test_run / "results" / "available" / "data_notes.csv", keep_default_na=False)
    assert list(notes.columns) == ["stage", "key", "category", "condition", "jobs", "warnings", "example_log"]
    assert int(notes["warnings"].sum()) == len(records)
    assert len(records) > 0 and (notes["jobs"] <= notes["warnings"]).all()
    assert notes["jobs"].sum() >= len({r["log"] for r in records})  # a job may meet several kinds
    listing = (test_run / "results" / "available" / "data_notes.md").read_text()
    assert all(r["message"] in listing for r in records)
    # the jobs it reports on: every job of the target (written at the run's start), not the notes' own
    scope = json.loads((test_run / "logs" / "data_notes" / "available.jobs.json").read_text())
    assert {r["log"] for r in records} <= set(scope)
    assert "logs/data_notes/available.log" not in scope
    assert any(log.startswith("logs/shift/pairs/") for log in scope) and any("table2" in log for log in scope)


def test_tables_and_comparisons(test_run):
    out = test_run / "results" / "available"
    t3 = pd.read_csv(out / "table3" / "GoogleNet1024.csv", keep_default_na=False)
    assert set(t3["adapter"]) == {"NA", "CORAL", "SA", "TCA", "OT3"}
    assert sorted(set(t3["n_features"])) == [128, 256, 512, 1024]
    assert (t3.loc[t3["adapter"] == "NA", "seconds"] < t3.loc[t3["adapter"] == "CORAL", "seconds"].max()).all()
    t5 = pd.read_csv(out / "table5" / "surf.csv", keep_default_na=False)
    assert set(t5["ranker"]) == {"ot", "ot-1nn", "ot-random"}
    at_d = t5[t5["order"] == "All"].groupby("ranker")["accuracy"].first()
    assert at_d.nunique() == 1  # all features: the selection strategy cannot matter

    comp = pd.read_csv(out / "table6" / "table6.comparison.csv", keep_default_na=False)
    assert {"published", "reproduced", "difference", "pairs"} <= set(comp.columns)
    row = comp[(comp["feature_set"] == "surf") & (comp["pair"] == "dslr-webcam")
               & (comp["order"] == "Descending")].iloc[0]
    assert row["published"] == 53.6
    assert abs(row["difference"] - (row["reproduced"] - 53.6)) < 1e-9
    summary = (out / "comparison" / "summary.md").read_text()
    assert "table6.comparison.csv" in summary and "table2.comparison.csv" in summary
    fig2 = pd.read_csv(out / "figure2" / "GoogleNet1024.comparison.csv", keep_default_na=False)
    assert dict(zip(fig2["adapter"], fig2["published"], strict=True)) == {"NA": 86.8, "OT3": 93.5}
    assert set(fig2["comparable"].astype(str)) == {"False"}  # 3 pairs here, 12 in the paper


def test_end_to_end_table_and_figure(test_run):
    long = read_tsv(test_run / "results" / "available" / "results_long.tsv")
    surf = long[(long["feature_set"] == "surf") & (long["ranker"] == "ot")
                & (long["adapter"] == "NA") & (long["grid"] == "curves")]
    assert set(surf["pair"]) == {"dslr-webcam", "webcam-dslr", "amazon-dslr"}
    assert len(surf) == 3 * 2 * ROWS_PER_PAIR_ITERATION
    assert long["accuracy"].between(0, 100).all()
    assert not long.duplicated(
        ["feature_set", "ranker", "adapter", "grid", "pair", "iteration", "order", "n_features"]
    ).any()
    at_d = surf[surf["n_features"] == 800].groupby(["pair", "iteration"])["accuracy"].nunique()
    assert (at_d == 1).all()  # all features: the order cannot matter

    agg = test_run / "results" / "aggregate" / "surf" / "all" / "ot" / "NA" / "curves"
    summary = read_tsv(agg / "summary.tsv")
    assert len(summary) == 3 * 5 and (summary["pairs"] == 3).all()
    pick = summary.set_index(["order", "n_features"])["accuracy"]
    # the method's signal on real data: most similar features beat least similar
    assert pick[("Descending", 100)] > pick[("Ascending", 100)] + 10

    fig = test_run / "results" / "available" / "figure7"
    plotted = pd.read_csv(fig / "figure7.csv")
    assert set(plotted["panel"].str.split(" ").str[0]) == {"SURF", "GoogleNet"}

    prov = json.loads((agg / "provenance.json").read_text())
    assert prov["versions"]["POT"] and prov["versions"]["numpy"]
    assert prov["config"]["protocol"]["iterations"] == 2
    assert prov["raw_files"]["dslr"]["git_blob_sha1"] == "944902f10891e355beed167f54d14c345453e38b"
    assert sorted(k.rsplit("/", 1)[-1] for k in prov["inputs"]) == ["amazon.h5", "dslr.h5", "webcam.h5"]

    ranked = json.loads((test_run / "results/runs/surf/ranking/ot/amazon-dslr.json").read_text())
    assert [it["flipped"] for it in ranked["iterations"]] == [True, True]  # 200 > 157 samples
    assert ranked["strategy"] == "ot" and all(it["sinkhorn_iterations"] > 0 for it in ranked["iterations"])


def test_extracted_feature_set_runs_like_the_released_ones(test_run):
    # EfficientNet-Lite0 features, extracted from the images of dslr and webcam
    feats = test_run / "data" / "features" / "office-caltech" / "efficientnet-lite0"
    assert sorted(p.name for p in feats.glob("*.h5")) == ["dslr.h5", "webcam.h5"]
    raw = read_cache(feats / "webcam.h5")
    assert raw.domain("webcam").X.shape == (295, 1280) and raw.preprocessing == []
    cache = read_cache(test_run / "data" / "cache" / "EfficientNetLite0" / "webcam.h5")
    assert cache.preprocessing == ["zscore"] and cache.domain("webcam").sample_ids[0].startswith("images/webcam/")
    assert json.loads(cache.attrs["extractor"])["name"] == "efficientnet-lite0"
    log = (test_run / "logs" / "acquisition" / "office-caltech" / "images" / "webcam.log").read_text()
    assert "295 images verified, by source: {'mirror': 295}" in log

    out = test_run / "results" / "available"
    t1 = pd.read_csv(out / "table1" / "EfficientNetLite0.csv", keep_default_na=False)
    assert set(t1["adapter"]) == {"NA", "OT3"}
    assert set(t1["pair"]) == {"dslr-webcam", "webcam-dslr", "Mean"}
    assert set(t1["n_features"]) == {160, 1280}
    md = (out / "table1" / "EfficientNetLite0.md").read_text()
    assert "NA ↘160" in md and "OT3 ↗160" in md and "OT3 1280" in md
    t2 = pd.read_csv(out / "table2" / "table2.csv", keep_default_na=False)
    assert set(t2["feature_set"]) == {"surf", "GoogleNet1024", "EfficientNetLite0"}
    assert sorted(set(t2.loc[t2["feature_set"] == "EfficientNetLite0", "n_features"])) == [40, 160, 640, 1280]
    assert "EfficientNet-Lite0" in (out / "table2" / "table2.md").read_text()
    # deep features: the 160 most similar features beat the 160 least similar
    na = t1[(t1["adapter"] == "NA") & (t1["pair"] == "Mean")].set_index("order")["accuracy"]
    assert na["Descending"] > na["Ascending"]


def test_results_do_not_depend_on_cores(test_run_results, tmp_path):
    work = copy_workflow(tmp_path)
    features = "data/features/office-caltech/efficientnet-lite0/dslr.h5"
    snakemake(work, "--configfile", "config/test.yaml", "--cores", "1", "table6", features)
    # the network's features: the same bits with 1 core as with 2
    assert read_cache(work / features).domain("dslr").X.tobytes() == \
        read_cache(test_run_results / features).domain("dslr").X.tobytes()
    a = read_tsv(test_run_results / "results" / "aggregate" / "surf" / "all" / "ot" / "NA" / "curves" / "long.tsv")
    b = read_tsv(work / "results" / "aggregate" / "surf" / "all" / "ot" / "NA" / "curves" / "long.tsv")
    # "seconds" is a measured wall time, not a result
    pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))
    # the rankings too (Algorithms 1 and 2), but for each iteration's measured time
    a, b = (json.loads((w / "results/runs/surf/ranking/ot/amazon-dslr.json").read_text()) for w in (test_run_results, work))
    for run in (a, b):
        for it in run["iterations"]:
            assert it.pop("ranking_time_s") > 0
    assert a == b


def test_a_run_killed_with_sigkill_resumes_to_the_same_results(test_run_results, tmp_path):
    # kill -9 of Snakemake and its jobs mid-run: no output is half-written under
    # its name, and the rerun (after --unlock, as Snakemake asks) gives the
    # numbers of an uninterrupted run.
    work = copy_workflow(tmp_path)
    target = "results/aggregate/surf/all/ot/NA/curves/summary.tsv"
    env = {**os.environ, "OTFS_DATA_MIRROR": str(mirror_dir())}
    env.pop("PYTHONPATH", None)
    proc = subprocess.Popen([*SNAKEMAKE, "--snakefile", str(work / "Snakefile"), "--directory", str(work),
                             "--configfile", "config/test.yaml", "--cores", "2", target],
                            cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 180
    while not list((work / "results" / "runs" / "surf" / "ranking" / "ot").glob("*.json")):
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (work / target).exists()
    for f in (work / "results").rglob("*.json"):
        json.loads(f.read_text())  # every file under its final name is whole
    snakemake(work, target, "--unlock", "--configfile", "config/test.yaml")
    snakemake(work, "--configfile", "config/test.yaml", "--cores", "2", target)
    a = read_tsv(test_run_results / target.replace("summary.tsv", "long.tsv"))
    b = read_tsv(work / target.replace("summary.tsv", "long.tsv"))
    pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))


def test_sigterm_at_random_points_ends_the_run_and_a_rerun_gives_the_same_tables(test_run_results, tmp_path):
    # `kill` (SIGTERM) of a running `snakemake --cores 2`: it starts no new job, lets the running ones finish
    # and exits (Snakemake's own handler could deadlock on its scheduler's lock: otfs_workflow.snakemake_scheduler).
    # Ten SIGTERMs at random points each end the run within 30 s; the rerun's tables are an uninterrupted
    # run's.
    import random

    work = copy_workflow(tmp_path)
    targets = ["results/available/table3/surf.csv", "results/available/table1/surf.csv"]
    env = {**os.environ, "OTFS_DATA_MIRROR": str(mirror_dir()), "MPLBACKEND": "Agg"}
    env.pop("PYTHONPATH", None)
    rng = random.Random(12)
    exits = []
    for trial in range(10):
        log = tmp_path / f"trial{trial}.log"
        with open(log, "w") as out:
            proc = subprocess.Popen([*SNAKEMAKE, "--snakefile", str(work / "Snakefile"), "--directory", str(work),
                                     "--configfile", "config/test.yaml", "--cores", "2", *targets],
                                    cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while "Select jobs to execute" not in log.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        if proc.poll() is not None:  # everything was done already
            break
        time.sleep(rng.uniform(0.2, 4.0))
        proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail(f"trial {trial}: snakemake still running 30 s after SIGTERM:\n{log.read_text()[-3000:]}")
        exits.append(time.monotonic() - sent)
        text = log.read_text()
        # a SIGTERM that lands after Snakemake printed its end ("Elapsed time": every job done, the process
        # exiting, its handler gone) ends the exit with -15: nothing was left to stop
        assert ("Will exit after finishing currently running jobs" in text or proc.returncode == 0
                or (proc.returncode == -signal.SIGTERM and "Elapsed time" in text)), text[-3000:]
    assert len(exits) >= 5, f"the run finished after {len(exits)} SIGTERMs"
    snakemake(work, "--configfile", "config/test.yaml", "--cores", "2", *targets)
    for adapter in ("NA", "CORAL", "SA", "TCA", "OT3"):
        rel = f"results/aggregate/surf/all/ot/{adapter}/table3/long.tsv"
        a, b = read_tsv(test_run_results / rel), read_tsv(work / rel)
        pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))
    for t in targets:  # the tables, but for the measured adaptation times
        a, b = pd.read_csv(test_run_results / t), pd.read_csv(work / t)
        timed = [c for c in a.columns if "time" in c or "seconds" in c]
        pd.testing.assert_frame_equal(a.drop(columns=timed), b.drop(columns=timed))


def test_a_copied_project_plans_nothing(test_run, tmp_path):
    # a finished project copied elsewhere with its files' times (a cluster's scratch to a laptop, a renamed
    # folder): every path the workflow gives Snakemake is relative to the working directory, so the set of
    # input files of no job changes and nothing is planned
    import shutil

    moved = tmp_path / "elsewhere" / "project"
    shutil.copytree(test_run, moved, symlinks=True)  # copy2: the files' times are kept
    proc = snakemake(moved, "--configfile", "config/test.yaml", "--dry-run", "--cores", "2", "available")
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]


def test_rebuilding_a_figure_runs_only_what_it_needs(test_run):
    # A change to the plotting code reruns the curve plots and nothing upstream.
    plotting = test_run / "workflow" / "lib" / "otfs_workflow" / "plotting.py"
    original = plotting.read_text()
    plotting.write_text(original + "\n# edited\n")
    args = ("--configfile", "config/test.yaml", "--dry-run", "--cores", "2")
    try:
        jobs = planned_jobs(snakemake(test_run, *args, "results/available/figure7/figure7.pdf"))
    finally:  # the run is shared by the tests after this one: every stage that plots imports plotting.py
        plotting.write_text(original)
    assert jobs == {"plot_figure7": 1}
    # Deleting one figure also rebuilds only that figure.
    (test_run / "results" / "available" / "figure1" / "surf.pdf").unlink()
    proc = snakemake(test_run, "--configfile", "config/test.yaml", "--cores", "2",
                     "results/available/figure1/surf.pdf")
    assert (test_run / "results" / "available" / "figure1" / "surf.pdf").is_file()
    # the end summary's report command names the file asked for
    assert "snakemake --report report.html results/available/figure1/surf.pdf" in proc.stderr


def test_an_adapters_hyper_parameters_come_from_config_and_rerun_only_its_jobs(test_run):
    # config `adapters`: OT3 with another reg reruns the OT3 jobs (and what reads them), no other
    import re

    (test_run / "config" / "ot3.yaml").write_text("adapters:\n  OT3: {reg: 3.0, eta: 1.0}\n")
    planned = snakemake(test_run, "--configfile", "config/test.yaml", "config/ot3.yaml", "--dry-run", "--cores", "2",
                        "available")
    jobs = planned_jobs(planned)
    assert jobs.get("classify", 0) > 0 and jobs.get("clinical_classify", 0) > 0
    assert not {"rank_features", "clinical_rank"} & set(jobs)
    adapters = re.findall(r"rule (?:classify|clinical_classify):\n(?:.*\n)*?\s+wildcards: .*?adapter=(\w+)",
                          planned.stdout)
    assert adapters and set(adapters) == {"OT3"}, set(adapters)


def test_clinical_runs_on_a_users_voxel_table(tmp_path):
    # A CSV with the columns exam, domain, label and features goes through
    # the same rules as the generated data.
    work = copy_workflow(tmp_path / "work")
    rng = np.random.RandomState(0)
    n = 400
    df = pd.DataFrame({"exam": [f"p{i % 10}" for i in range(n)],
                       "domain": ["siteA"] * (n // 2) + ["siteB"] * (n // 2),
                       "label": ["Cancer" if i % 5 == 0 else "Non cancer" for i in range(n)]})
    for j in range(6):
        df[f"feat{j}"] = rng.randn(n) + (df["label"] == "Cancer") * 0.5
    df.to_csv(work / "my_voxels.csv", index=False)
    (work / "config" / "mine.yaml").write_text(
        "clinical:\n  data: my_voxels.csv\n  source: siteA\n  target: siteB\n  iterations: 1\n"
        "  source_voxels: 60\n  target_voxels: 150\n  feature_counts: [2, d]\n"
    )
    snakemake(work, "--configfile", "config/test.yaml", "config/mine.yaml", "--cores", "2", "table4", "figure4")
    t4 = pd.read_csv(work / "results" / "clinical" / "table4" / "table4.csv")
    assert dict(zip(t4["domain"] + "/" + t4["class"], t4["voxels"], strict=True)) == {
        "siteA/Non cancer": 160, "siteA/Cancer": 40, "siteB/Non cancer": 160, "siteB/Cancer": 40}
    fig = pd.read_csv(work / "results" / "clinical" / "figure4" / "figure4.csv")
    assert set(fig.loc[fig["panel"] == "similarity", "feature"]) == {f"feat{j}" for j in range(6)}
    # a typo in the path is named before anything runs
    (work / "config" / "typo.yaml").write_text("clinical:\n  data: my_voxel.csv\n")
    proc = snakemake(work, "--configfile", "config/test.yaml", "config/typo.yaml", "--dry-run", "table4", check=False)
    assert proc.returncode != 0 and "clinical.data: voxel table 'my_voxel.csv' not found" in proc.stdout + proc.stderr


def test_config_typo_stops_the_pipeline(tmp_path):
    work = copy_workflow(tmp_path)
    bad = work / "config" / "typo.yaml"
    bad.write_text("protocol:\n  iteratons: 3\n")
    proc = snakemake(work, "--configfile", "config/typo.yaml", "--dry-run", check=False)
    assert proc.returncode != 0
    assert "unknown key 'protocol.iteratons' (did you mean 'iterations'?)" in proc.stdout + proc.stderr


@pytest.mark.parametrize("yaml_text, message", [
    ("grids:\n  table3:\n    orders: [Descending]\n    feature_counts: [\"d/1024\", \"d/2048\"]\n",
     "grids.table3.feature_counts: every count of ['d/1024', 'd/2048'] gives 0 of the 800 features of feature set "
     "'surf'"),
    ("targets:\n  table2:\n    n_features: [\"d/8\", 2000]\n",
     "targets.table2.n_features[1]: 2000 gives 2000 features for feature set 'surf', outside [1, 800]"),
    ("clinical:\n  feature_counts: [5, 96]\n",
     "clinical.feature_counts[1]: 96 gives 96 features, outside [1, 95] (d = 95, clinical.synthetic.n_features)"),
    ("protocol:\n  source_per_class_overrides: {DSLR: 8}\n",
     "protocol.source_per_class_overrides: 'DSLR' is not a domain of any dataset"),
    ("wda:\n  office:\n    grid: curvez\n", "wda.office.grid: unknown grid 'curvez'"),
])
def test_config_errors_stop_the_pipeline_before_any_job(tmp_path, yaml_text, message):
    work = copy_workflow(tmp_path)
    (work / "config" / "bad.yaml").write_text(yaml_text)
    proc = snakemake(work, "--configfile", "config/bad.yaml", "--dry-run", "all", check=False)
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr
    assert not (work / "logs").exists()  # nothing ran


def test_a_yaml_syntax_error_and_an_unknown_grid_are_named(tmp_path):
    work = copy_workflow(tmp_path)
    good = (work / "config.yaml").read_text()
    (work / "config.yaml").write_text(good.replace("  iterations: 19\n", "  iterations: [19\n", 1))
    proc = snakemake(work, "--dry-run", check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and f"{work / 'config.yaml'}, line " in text and "invalid YAML" in text
    (work / "config.yaml").write_text(good)
    proc = snakemake(work, "--dry-run", "results/runs/surf/classification/ot/NA/grid8/amazon-dslr.tsv", check=False)
    assert proc.returncode != 0
    grids = "['curves', 'families', 'leaderboard', 'table1', 'table3', 'wda']"
    assert f"unknown grid 'grid8' (a file path names it); config grids: {grids}" in proc.stdout + proc.stderr


def test_missing_data_fails_with_a_clear_message(tmp_path):
    # CaffeNet4096 amazon is not in the mirror: the acquisition job must say
    # where to put it; with downloads off nothing is attempted online.
    work = copy_workflow(tmp_path)
    cfg = work / "config" / "caffenet.yaml"
    cfg.write_text(
        "datasets:\n  office-caltech:\n    download: false\n"
        "protocol:\n  iterations: 1\n  pairs: [amazon-dslr]\n"
    )
    proc = snakemake(work, "--configfile", "config/caffenet.yaml", "--cores", "1",
                     "data/raw/office-caltech/CaffeNet4096/amazon.mat", check=False)
    assert proc.returncode != 0
    log = (work / "logs" / "acquisition" / "office-caltech" / "CaffeNet4096" / "amazon.mat.log").read_text()
    assert "CaffeNet4096/amazon.mat: no source has this file" in log
    assert "data/local/office-caltech/CaffeNet4096/amazon.mat" in log
    assert "config datasets.office-caltech.download" in log
    # A paper target that needs it fails before any job runs, saying why.
    proc = snakemake(work, "--configfile", "config/caffenet.yaml", "--dry-run", "table1", check=False)
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "feature set 'CaffeNet4096': the data of domain(s) ['amazon', 'caltech10', 'webcam'] cannot be obtained" in text
    assert "snakemake available" in text


def _check_landing_page_in_a_browser(report, screenshot):
    """The report opened in headless Chromium as a person opens it: the page it lands on (the DOM after its
    scripts ran) shows the verdict's table and the recommendation's goals before any click, and its
    screenshot is a page with content, not blank."""
    import shutil

    from .conftest import unavailable

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        unavailable("Debian's headless Chromium", "make browser-packages (root)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000",
             "--window-size=1400,1000"]
    dom = subprocess.run([*flags, "--dump-dom", report.as_uri()], capture_output=True, text=True, timeout=300)
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    for text in ("Which ranker to trust, per family", "judged by", "Never worse than the simplest rule"):
        assert text in page, text
    assert "<table" in page  # the glance table is a table, not text
    shot = subprocess.run([*flags, f"--screenshot={screenshot}", report.as_uri()], capture_output=True, text=True,
                          timeout=300)
    assert shot.returncode == 0 and screenshot.is_file(), shot.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(screenshot)
    assert pixels.shape[:2] == (1000, 1400)
    assert pixels[..., :3].std() > 0.05  # text and a table on the page, not a blank or loading screen


def test_report_lists_every_target_by_section(test_run):
    report = test_run / "report.html"
    snakemake(test_run, "--configfile", "config/test.yaml", "--report", str(report), "available")
    html = report.read_text(errors="replace")
    for section in ("5.1 Office/Caltech", "5.2 Clinical data", "Supplementary A", "Supplementary B.1",
                    "Supplementary B.2", "Published versus reproduced"):
        assert section in html, section
    for name in ("table1/surf.csv", "table2/table2.csv", "table3/GoogleNet1024.csv",
                 "table5/surf.csv", "table6/table6.csv", "figure1/surf.png",
                 "figure2/GoogleNet1024.png", "figure5.png", "figure6.png", "figure7.png",
                 "table4/table4.csv", "figure3.png", "figure4.png",
                 "comparison/summary.csv", "recommend/evaluation.csv", "recommend/evaluation.png"):
        assert name in html, name
    assert "Label-free recommendation" in html  # the recommendation's section (its evaluation: the verdict reads it)
    assert "iterations per pair" in html  # captions say what was run
    # the landing page (the workflow profile's report metadata makes it the first page): the description opens on
    # the verdict's table and the recommendation's evaluation, the report's own results, each naming its page
    for text in ("The answer first", "Which ranker to trust, per family", "best ranker (adapters)",
                 "results/leaderboard/verdict.md", "Never worse than the simplest rule", "Report written (UTC"):
        assert text in html, text
    _check_landing_page_in_a_browser(report, test_run / "landing.png")
    from .test_docs import report_captions

    captions = report_captions(html)  # none with an empty ("") or unresolved ({{ }}) field
    assert len(captions) >= 20
    text = " ".join(captions)
    assert "Feature set <strong>surf</strong> (dataset office-caltech" in text
    assert "Algorithm 1: exact OT sample selection (ties: lowest, iteration limit auto)" in text


def test_bench_targets_on_the_test_configuration(built_run_copy):
    # The benchmark rules at the small sizes of config/test.yaml: every case
    # equal to its reference, the ranking orders of the real runs identical.
    snakemake(built_run_copy, "--configfile", "config/test.yaml", "--cores", "2", "bench", "time_profile")
    out = built_run_copy / "results" / "benchmarks"
    bench = pd.read_csv(out / "benchmarks.csv")
    from otfs_benchmarks.cases import make_cases

    assert list(bench["case"]) == [case.name for case in make_cases("quick")] and "WDA" in set(bench["case"])
    bad = bench.loc[~(bench["difference"] <= bench["tolerance"]), ["case", "difference", "note"]]
    assert bad.empty, bad.to_string()  # every case equal to its reference
    assert (bench["otfs_s"] > 0).all() and (bench["reference_peak_mb"] >= 0).all()
    orders = pd.read_csv(out / "ranking_orders.csv")
    assert set(orders["feature_set"]) == {"surf", "GoogleNet1024"}
    assert (orders["runs"] > 0).all() and (orders["runs"] == orders["identical"]).all()
    assert list(pd.read_csv(out / "scaling.csv")["x"]) == [64, 256, 100, 300]
    profile = pd.read_csv(out / "pipeline_profile.csv")
    assert {"rank_features", "classify NA"} <= set(profile["group"])
    assert (out / "benchmarks.png").is_file() and (out / "pipeline_profile.png").is_file()
    assert (out / "main_job_stages.png").is_file() and pd.read_csv(out / "main_job.csv").empty
    # the end-to-end run (a nested pipeline from a cold cache, 1 iteration) gives the plain script's accuracies
    e2e = pd.read_csv(out / "end_to_end.csv").iloc[0]
    assert e2e["accuracies"] == 12 * 3 * 17 and e2e["max_accuracy_difference"] <= 1e-6
    # every job of the nested pipeline wrote its times (OTFS_JOB_TIMES reaches the jobs through Snakemake)
    assert e2e["jobs_timed"] == e2e["jobs"] > 0 and 0 < e2e["overhead_s"] < e2e["job_s"]
    # its dry runs of figure7 (one timed round each here): the fresh copy's plans jobs, the built one's and the
    # one-rule workflow's none
    assert e2e["dry_run_rounds"] == 1 and e2e["dry_run_fresh_jobs"] > 0
    assert e2e["dry_run_built_jobs"] == e2e["dry_run_floor_jobs"] == 0
    assert all(e2e[f"dry_run_{name}_cpu_s"] > 0 for name in ("fresh", "built", "floor"))
    t3 = pd.read_csv(out / "table3_4096.csv")
    assert (t3["job"] == "classify").sum() == 60 and (t3["job"] == "rank").sum() == 12
    goals = pd.read_csv(out / "goals.csv")
    # the benchmarks' rows, and 12 more: end to end (2), the dry runs (2), the ranking and NA-classification jobs'
    # medians, Table 3, the scaling study, memory, and the main job's targets (3, not run here: no overhead or
    # families rows)
    assert len(goals) == len(bench) + 12 and goals["goal"].str.contains("end to end").any()
    dry = goals[goals["goal"].str.startswith("dry run of figure7")]
    assert len(dry) == 2 and dry["note"].str.contains("a one-rule workflow whose job has params").all()
    assert goals["goal"].str.contains("median wall time of a ranking job").any()
    assert (out / "end_to_end_jobs.csv").is_file() and not pd.isna(e2e["median_classify_s"])
    assert "goals met" in (out / "goals.md").read_text()


# The walk-throughs of docs/extending.md, as written there.
PLUGIN_ADAPTER = docs_block("extending.md", "# mypackage/adapters.py")
PLUGIN_ADAPTER_ENTRY_POINTS = docs_block("extending.md", "# mypackage's pyproject.toml", "toml")


@pytest.mark.pipeline
def test_a_plugin_adapter_from_another_package_runs_through_the_pipeline(tmp_path):
    # a third-party package, installed as pip leaves it (a module and its dist-info with an entry point):
    # naming its adapter in the config is the only other step
    # the page's pyproject entry point, as pip writes it into entry_points.txt
    group, name, value = re.search(r'\[project\.entry-points\."([\w.]+)"\]\n(\w+) = "([\w.:]+)"',
                                   PLUGIN_ADAPTER_ENTRY_POINTS).groups()
    plugin = install_distribution(tmp_path / "site", "mypackage", f"[{group}]\n{name} = {value}\n",
                                  {"mypackage/__init__.py": "", "mypackage/adapters.py": PLUGIN_ADAPTER})
    work = copy_workflow(tmp_path / "wf")
    (work / "config" / "mine.yaml").write_text(
        "protocol:\n  pairs: [dslr-webcam]\n  iterations: 1\n"
        "targets:\n  table3:\n    feature_sets: [surf]\n    adapters: [NA, CENTRE]\n")
    args = ("--configfile", "config/test.yaml", "config/mine.yaml", "--cores", "2", "results/paper/table3/surf.csv")
    # without the package the name is refused before any job, with the registered names
    proc = snakemake(work, *args, "--dry-run", check=False)
    assert proc.returncode != 0
    assert ("targets.table3.adapters[1]: unknown adapter 'CENTRE'; registered adapters: ['CORAL'"
            in proc.stdout + proc.stderr)
    snakemake(work, *args, pythonpath=str(plugin))
    runs = pd.read_csv(next((work / "results" / "runs" / "surf" / "classification" / "ot" / "CENTRE").rglob("*.tsv")),
                       sep="\t")
    assert len(runs) > 0 and runs["accuracy"].between(0, 100).all()
    assert "CENTRE" in (work / "results" / "paper" / "table3" / "surf.csv").read_text()


PLUGIN_RANKER = docs_block("extending.md", "# src/otfs/rankers/mean_gap.py")

PLUGIN_DATASET = docs_block("extending.md", "# src/otfs/datasets/shifted_blobs.py")


@pytest.mark.pipeline
def test_a_plugin_ranker_and_dataset_run_through_the_pipeline(tmp_path):
    # docs/extending.md's ranker and dataset reader, each dropped as one file into its kind's folder: the
    # config naming them is the only other step
    work = copy_workflow(tmp_path / "wf")
    (work / "config" / "mine.yaml").write_text(
        "datasets:\n  blobs: {domains: [north, south]}\n"
        "feature_sets:\n  blobs64: {dataset: blobs, reader: {name: shifted-blobs, n_features: 64}, "
        "preprocessing: []}\n"  # the per-domain z-score would undo the planted shift
        "protocol:\n  pairs: [north-south]\n  iterations: 2\n"
        "targets:\n  table5:\n    feature_sets: [blobs64]\n    rankers: [ot, mean-gap]\n"
        '    n_features: ["d/8"]\n')
    target = "results/paper/table5/blobs64.csv"
    args = ("--configfile", "config/test.yaml", "config/mine.yaml", "--cores", "2", target)
    # neither is known yet: both names refused before any job, each with the registered names
    out = snakemake(work, *args, "--dry-run", check=False)
    assert out.returncode != 0
    text = out.stdout + out.stderr
    from otfs.rankers import FEATURE_RANKERS

    assert "ot" in FEATURE_RANKERS and "mean-gap" not in FEATURE_RANKERS
    assert (f"targets.table5.rankers[1]: unknown feature ranker 'mean-gap'; registered feature rankers: "
            f"{sorted(FEATURE_RANKERS)}" in text)
    assert "feature_sets.blobs64.reader.name: unknown dataset reader 'shifted-blobs'; registered dataset " \
           "readers: ['20newsgroups', 'amazon-reviews-400', 'amazon-reviews-5000', 'corn-nir', 'heart-disease', " \
           "'landmine', 'mat', 'planted-shifts', 'tabular', 'usps-mnist', 'wifi', 'wine-quality']" in text
    (work / "src" / "otfs" / "rankers" / "mean_gap.py").write_text(PLUGIN_RANKER)
    (work / "src" / "otfs" / "datasets" / "shifted_blobs.py").write_text(PLUGIN_DATASET)
    snakemake(work, *args)

    table = pd.read_csv(work / target, keep_default_na=False)
    assert set(table["ranker"]) == {"ot", "mean-gap"} and table["accuracy"].between(0, 100).all()
    rank = json.loads((work / "results" / "runs" / "blobs64" / "ranking" / "mean-gap" / "north-south.json").read_text())
    assert rank["strategy"] is None and rank["params"] == {"n_features_to_select": None}
    for it in rank["iterations"]:
        # the shifted features rank last, and the ranker saw the same source samples as the OT ranker
        assert set(it["orders"]["Descending"][-8:]) == set(range(8))
        assert len(it["source_subset"]) == 60 and it["ranking_time_s"] > 0
    ot = json.loads((work / "results" / "runs" / "blobs64" / "ranking" / "ot" / "north-south.json").read_text())
    assert [it["source_subset"] for it in ot["iterations"]] == [it["source_subset"] for it in rank["iterations"]]
    cache = read_cache(work / "data" / "cache" / "blobs64" / "south.h5")
    assert cache.domain("south").X.shape == (180, 64) and cache.class_names == ["a", "b", "c"]


def test_the_leaderboard_on_the_test_configuration(test_run):
    # 3 rankers x 2 adapters on SURF's 3 test pairs, 2 iterations, 4 fractions
    snakemake(test_run, "--configfile", "config/test.yaml", "--cores", "2", "leaderboard")
    out = test_run / "results" / "leaderboard"
    long = pd.read_parquet(out / "results_long.parquet")
    assert set(long["ranker"]) == {"ot", "ks", "random"} and set(long["adapter"]) == {"NA", "CORAL"}
    assert len(long) == 3 * 2 * 3 * 2 * 4 and set(long["n_features"]) == {25, 100, 400, 800}
    assert (long["ranking_seconds"] > 0).all() and long[["versions", "config_hash"]].nunique().max() == 1
    # the same seeds as the paper's grid: its Descending curve at d/8 is the leaderboard's
    curves = read_tsv(test_run / "results" / "aggregate" / "surf" / "all" / "ot" / "NA" / "curves" / "long.tsv")
    curves = curves[(curves["order"] == "Descending") & (curves["n_features"] == 100)].set_index(["pair", "iteration"])
    lb = long[(long["ranker"] == "ot") & (long["adapter"] == "NA") & (long["n_features"] == 100)]
    np.testing.assert_array_equal(lb.set_index(["pair", "iteration"])["accuracy"].sort_index(),
                                  curves["accuracy"].sort_index())
    ranks = pd.read_csv(out / "ranks.csv")
    assert (ranks.groupby(["adapter", "criterion"])["average_rank"].sum() == 6).all()  # 1 + 2 + 3
    assert ranks["friedman_p"].between(0, 1).all() and set(ranks["tasks"]) == {3} and set(ranks["dataset"]) == {"all"}
    post = pd.read_csv(out / "posthoc.csv", keep_default_na=False)
    assert len(post) == 2 * 2 * 9 and post["p"].between(0, 1).all() and set(post["adapter"]) == {"NA", "CORAL"}
    # each reference (the test configuration's two) against the two others, from the same per-pair means as the
    # ranks, Holm's correction within each reference
    from statsmodels.stats.multitest import multipletests

    versus = pd.read_csv(out / "versus.csv", keep_default_na=False)
    assert len(versus) == 2 * 2 * 2 * 2 and set(versus["dataset"]) == {"all"}
    assert {r: set(g["ranker"]) for r, g in versus.groupby("reference")} == {"ot": {"ks", "random"},
                                                                             "ks": {"ot", "random"}}
    for _, block in versus.groupby(["reference", "adapter", "criterion"]):
        np.testing.assert_allclose(block["p_holm"], multipletests(block["p"], method="holm")[1], rtol=1e-3)
    assert ((versus["wins"] + versus["ties"] + versus["losses"]) == 3).all()
    assert ((versus["run_wins"] + versus["run_ties"] + versus["run_losses"]) == 3 * 2).all()
    at_fraction = long[long["n_features"] == 100].groupby(["adapter", "pair", "ranker"])["accuracy"].mean().unstack()
    row = versus.set_index(["reference", "adapter", "criterion", "ranker"]).loc[("ot", "NA", "fraction", "ks")]
    # the CSV keeps 4 significant digits
    assert row["mean_difference"] == pytest.approx((at_fraction.loc["NA", "ot"] - at_fraction.loc["NA", "ks"]).mean(), rel=1e-3)
    assert 0 < row["p"] <= row["p_holm"] <= 1
    for name in ("cd", "heatmap", "recovery"):
        assert (out / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert (out / f"{name}.png").read_bytes().startswith(b"\x89PNG")
    assert "| ot | NA |" in (out / "table.md").read_text().replace("| surf ", "")
    # its 6 aggregates came from one job (rule aggregate_leaderboard), each of its own (ranker, adapter)'s runs
    assert (test_run / "logs" / "benchmarks" / "aggregate_leaderboard" / "surf" / "all" / "leaderboard.tsv").is_file()
    assert not (test_run / "logs" / "benchmarks" / "aggregate" / "surf" / "all" / "ks").exists()
    for ranker in ("ot", "ks", "random"):
        for adapter in ("NA", "CORAL"):
            folder = test_run / "results" / "aggregate" / "surf" / "all" / ranker / adapter / "leaderboard"
            runs = pd.concat([read_tsv(test_run / "results" / "runs" / "surf" / "classification" / ranker / adapter
                                       / "leaderboard" / f"{pair}.tsv") for pair in ("dslr-webcam", "webcam-dslr",
                                                                                    "amazon-dslr")])
            agg = read_tsv(folder / "long.tsv")
            key = ["pair", "iteration", "n_features"]
            pd.testing.assert_frame_equal(agg.sort_values(key).reset_index(drop=True),
                                          runs[agg.columns].sort_values(key).reset_index(drop=True))
            prov = json.loads((folder / "provenance.json").read_text())
            assert (prov["params"]["ranker"], prov["params"]["adapter"]) == (ranker, adapter)


#: One classification job with a skada estimator as adapter, named in its path.
SKADA_JOB = "results/runs/surf/classification/ot/skada:LinearOTMapping/table1/webcam-dslr.tsv"


def test_model_selection_on_the_test_configuration(test_run):
    # the OT ranker x 2 adapters on SURF's 3 test pairs, 2 iterations, 4 numbers of features, every rule;
    # in the same run, one classification job with a skada estimator as adapter (the next test reads it)
    snakemake(test_run, "--configfile", "config/test.yaml", "--cores", "2", "model_selection", SKADA_JOB)
    out = test_run / "results" / "model_selection"
    chosen = pd.read_parquet(out / "choices.parquet")
    rules = {"IW", "DEV", "circular", "entropy", "SND", "MixVal", "MaNo", "ATC", "COT", "EnsV", "shift-test",
             "failing-loudly", "oracle", "all-features"}
    assert set(chosen["rule"]) == rules and len(chosen) == 2 * 3 * 2 * len(rules)
    assert set(chosen["k"]) <= {25, 100, 400, 800} and (chosen["regret"] >= 0).all()
    assert (chosen.loc[chosen["rule"] == "oracle", "regret"] == 0).all()
    assert (chosen.loc[chosen["rule"] == "all-features", ["k", "gain"]].to_numpy() == [800, 0]).all()
    assert chosen.loc[chosen["rule"] == "oracle", "reads_target_labels"].all()
    assert not chosen.loc[chosen["rule"] != "oracle", "reads_target_labels"].any()
    # its 1-NN accuracies are the leaderboard's, for the same (ranker, adapter, pair, iteration, k)
    for ranker in ("ot",):
        for adapter in ("NA", "CORAL"):
            lb = read_tsv(test_run / "results" / "aggregate" / "surf" / "all" / ranker / adapter / "leaderboard"
                          / "long.tsv").set_index(["pair", "iteration", "n_features"])["accuracy"]
            for pair in ("dslr-webcam", "webcam-dslr", "amazon-dslr"):
                ms = read_tsv(test_run / "results" / "runs" / "surf" / "model_selection" / ranker / "leaderboard"
                              / f"{pair}.tsv")
                ms = ms[ms["adapter"] == adapter].set_index(["iteration", "n_features"])["accuracy"]
                np.testing.assert_array_equal(ms.sort_index().to_numpy(), lb.loc[pair].sort_index().to_numpy())
    table = pd.read_csv(out / "table.csv", keep_default_na=False)
    assert set(table["dataset"]) == {"surf", "all"} and set(table["adapter"]) == {"NA", "CORAL"}
    assert np.allclose(table["beats_all"] + table["ties_all"] + table["loses_all"], 1, atol=1e-3)  # 4 digits
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["versions"]["skada"] == "0.6.0" and prov["params"]["model_selection"]["cv"]["n_splits"] == 1
    for name in ("regret",):
        assert (out / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert (out / f"{name}.png").read_bytes().startswith(b"\x89PNG")


def test_a_skada_estimator_runs_as_an_adapter_of_the_grid(test_run):
    # skada:NAME in a file path: one classification job of the table1 grid, with skada's LinearOTMapping
    # (its 1-NN predictions) on the test run's ranking; the accuracy is the library's on the same samples
    from otfs.adapters import get_adapter
    from otfs.classification import accuracy_curve
    from otfs_workflow.data.cache import read_domains
    from otfs_workflow.io import read_json

    if not (test_run / SKADA_JOB).exists():  # the model_selection test builds it; alone, this one does
        snakemake(test_run, "--configfile", "config/test.yaml", "--cores", "2", SKADA_JOB)
    got = read_tsv(test_run / SKADA_JOB)
    assert set(got["adapter"]) == {"skada:LinearOTMapping"} and len(got) == 2 * 2 * 2  # iterations x orders x counts
    rank = read_json(test_run / "results/runs/surf/ranking/ot/webcam-dslr.json")["iterations"][0]
    cache = read_domains({d: test_run / f"data/cache/surf/{d}.h5" for d in ("webcam", "dslr")})
    src, tgt = cache.domain("webcam"), cache.domain("dslr")
    sub = rank["source_subset"]
    rows = accuracy_curve(src.X[sub], src.y[sub], tgt.X, tgt.y, {"Descending": rank["orders"]["Descending"]}, [100],
                          adapter=get_adapter("skada:LinearOTMapping"))
    row = got[(got["iteration"] == 0) & (got["order"] == "Descending") & (got["n_features"] == 100)]
    assert row["accuracy"].iloc[0] == pytest.approx(rows[0]["accuracy"], abs=1e-9)


@pytest.mark.pipeline
def test_the_documented_experiment_runs(tmp_path):
    # docs/extending.md's experiment, written as the page says: its schema section, stage, script and rules,
    # and its name and include line in the Snakefile
    work = copy_workflow(tmp_path)
    for path in ("workflow/schemas/experiments/ranking_stability.schema.yaml",
                 "workflow/lib/otfs_workflow/stages/ranking_stability.py", "workflow/scripts/ranking_stability.py",
                 "workflow/rules/ranking_stability.smk"):
        language = {"yaml": "yaml", "py": "python", "smk": "snakemake"}[path.rsplit(".", 1)[1]]
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(docs_block("extending.md", f"# {path}", language))
    snakefile = (work / "Snakefile").read_text()
    assert '    "model_selection",\n]' in snakefile and 'include: "workflow/rules/model_selection.smk"\n' in snakefile
    snakefile = snakefile.replace('    "model_selection",\n]', '    "model_selection",\n    "ranking_stability",\n]')
    snakefile = snakefile.replace('include: "workflow/rules/model_selection.smk"\n',
                                  'include: "workflow/rules/model_selection.smk"\n'
                                  'include: "workflow/rules/ranking_stability.smk"\n')
    (work / "Snakefile").write_text(snakefile)
    # its configuration section is checked like the rest: a misspelt key stops the run before any job
    (work / "config" / "bad.yaml").write_text("ranking_stability:\n  rankerz: [ot]\n")
    bad = snakemake(work, "--configfile", "config/test.yaml", "config/bad.yaml", "--dry-run", "--cores", "2",
                    "ranking_stability", check=False)
    assert bad.returncode != 0 and "unknown key 'ranking_stability.rankerz'" in bad.stdout + bad.stderr
    # `related` builds it; its defaults fill the section config.yaml does not have
    related = planned_jobs(snakemake(work, "--configfile", "config/test.yaml", "--dry-run", "--cores", "2", "related"))
    assert related.get("ranking_stability_table") == 1
    snakemake(work, "--configfile", "config/test.yaml", "--cores", "2", "ranking_stability")
    table = read_tsv(work / "results" / "ranking_stability" / "table.tsv")
    assert set(table["ranker"]) == {"ot"} and set(table["feature_set"]) == {"surf"}
    assert set(table["pair"]) == {"dslr-webcam", "webcam-dslr", "amazon-dslr"}
    # the statistic, recomputed from a ranking file with SciPy
    from scipy.stats import spearmanr

    ranking = json.loads((work / "results" / "runs" / "surf" / "ranking" / "ot" / "amazon-dslr.json").read_text())
    a, b = (np.asarray(it["scores"]) for it in ranking["iterations"])  # the test configuration's 2 iterations
    row = table.set_index("pair").loc["amazon-dslr"]
    assert row["iterations"] == 2 and row["mean_spearman"] == pytest.approx(spearmanr(a, b).statistic, rel=1e-9)


def test_the_leaderboards_zoo_is_ranked_on_the_iterations_its_grids_read(tmp_path):
    # A ranker that no paper target reads and that the leaderboard lists is ranked on the first iterations of the
    # leaderboard's grid (here 1 of the protocol's 2); the paper's ranker on all of them. The leaderboard's curves
    # read the short ranking, and a grid of every iteration asked for by its path fails naming the file.
    work = copy_workflow(tmp_path / "w")
    (work / "one.yaml").write_text("grids:\n  leaderboard:\n    iterations: 1\n")
    config = ["--configfile", "config/test.yaml", "one.yaml", "--cores", "2"]
    zoo, paper = (f"results/runs/surf/ranking/{r}/dslr-webcam.json" for r in ("ks", "ot"))
    curve = "results/runs/surf/classification/ks/NA/leaderboard/dslr-webcam.tsv"
    snakemake(work, *config, zoo, paper, curve)
    short, full = (json.loads((work / p).read_text()) for p in (zoo, paper))
    assert [it["iteration"] for it in short["iterations"]] == [0] and short["protocol_iterations"] == 2
    assert [it["iteration"] for it in full["iterations"]] == [0, 1] and "protocol_iterations" not in full
    assert set(read_tsv(work / curve)["iteration"]) == {0}
    proc = snakemake(work, *config, "results/runs/surf/classification/ks/NA/curves/dslr-webcam.tsv", check=False)
    assert proc.returncode != 0
    assert "ks/dslr-webcam.json: ranked on the first 1 of the protocol's 2 iterations" in proc.stdout + proc.stderr
    # the zoo's rankings of a feature set's pairs are one job per ranker (rule rank_pairs_surf), which writes
    # what rank_features writes for each pair: the same scores, orders, subsets and seeds
    pairs = ("dslr-webcam", "webcam-dslr", "amazon-dslr")
    assert sorted(p.name for p in (work / "results/runs/surf/ranking/ks").glob("*.json")) == sorted(
        f"{p}.json" for p in pairs)
    log = (work / "logs/ranking/surf/ks/pairs.log").read_text()
    assert log.count("ranking: done in") == 1
    assert len(list((work / "logs/benchmarks/rank_pairs_surf/surf").glob("*.tsv"))) == 1

    def ranked(path):
        doc = json.loads((work / path).read_text())
        return [{k: v for k, v in it.items() if not k.endswith("time_s")} for it in doc["iterations"]], doc["params"]

    batched = {p: ranked(f"results/runs/surf/ranking/ks/{p}.json") for p in pairs}
    (work / zoo).unlink()
    alone = snakemake(work, *config, "--allowed-rules", "rank_features", "--", zoo)
    assert "rule rank_features:" in alone.stdout + alone.stderr and "rank_pairs" not in alone.stdout + alone.stderr
    assert ranked(zoo) == batched["dslr-webcam"]
    assert batched["dslr-webcam"][0][0]["scores"] != batched["amazon-dslr"][0][0]["scores"]
    # the curves and the choice of k's scores likewise: one job per (feature set, ranker) for all the pairs
    # (classify_pairs_surf, score_pairs_surf), the same rows as the one-pair rules' (times aside)
    ms = "results/runs/surf/model_selection/ot/leaderboard/dslr-webcam.tsv"
    first = snakemake(work, *config, ms)
    assert "score_pairs_surf" in first.stdout + first.stderr
    files = [*(f"results/runs/surf/classification/ks/{a}/leaderboard/dslr-webcam.tsv" for a in ("NA", "CORAL")), ms]
    before = {f: read_tsv(work / f) for f in files}
    for f in files:
        (work / f).unlink()
    alone = snakemake(work, *config, "--allowed-rules", "classify_leaderboard_adapters", "score_model_selection",
                      "--", *files)
    assert "_pairs_surf" not in alone.stdout + alone.stderr
    for f, rows in before.items():
        after = read_tsv(work / f)
        kept = [c for c in rows.columns if not c.endswith("seconds")]
        assert len(rows) > 0 and list(after.columns) == list(rows.columns), f
        pd.testing.assert_frame_equal(after[kept], rows[kept], check_exact=True, obj=f)


def test_the_recommendation_on_the_test_configuration(test_run):
    # `available` built the meta-evaluation (the verdict reads it); `recommend` adds the wine pair's recommendation
    snakemake(test_run, "--configfile", "config/test.yaml", "--cores", "2", "recommend")
    out = test_run / "results" / "recommend"
    tasks = pd.read_csv(out / "tasks.csv", keep_default_na=False, na_values=[""])  # "NA" is an adapter
    # every task of the test configuration: SURF's 3 pairs (a family of its own) and one pair of each family
    assert set(tasks.loc[tasks["adapter"] == "NA", "family"]) == {"surf", "amazon5000", "news", "wine", "heart",
                                                                   "landmine", "wifi"}
    assert len(tasks[(tasks["adapter"] == "NA") & (tasks["family"] == "surf")]) == 3
    regrets = tasks[["recommendation", "always OT", "always source-ANOVA", "best-on-average ranker", "all features"]]
    assert (regrets.to_numpy() >= -1e-9).all()  # nothing beats the best (ranker, k) in hindsight
    # the regret of keeping every feature, from the choice of k's own rows: the oracle over both rankers' grids
    rows = pd.concat([read_tsv(test_run / f"results/runs/surf/model_selection/{r}/leaderboard/dslr-webcam.tsv")
                      for r in ("ot", "ks")])
    na = rows[rows["adapter"] == "NA"]
    oracle = na.groupby(["ranker", "n_features"])["accuracy"].mean().max()
    every = na[na["n_features"] == 800].groupby("iteration")["accuracy"].first().mean()
    row = tasks[(tasks["adapter"] == "NA") & (tasks["feature_set"] == "surf") & (tasks["pair"] == "dslr-webcam")]
    assert row["all features"].iloc[0] == pytest.approx(oracle - every)
    md = (out / "evaluation.md").read_text()
    assert "Goals:" in md and "What was tried" in md and ("**met**" in md or "**not met**" in md)
    # every task's rows permuted 10 times (the schema's default): the recommendation's inputs are the same
    assert (tasks["permutation_share"] == 1.0).all() and "## Row order" in md
    assert "No permutation changed any task's answer." in md
    policy = json.loads((out / "policy.json").read_text())
    assert policy["default_adapter"] == "NA" and policy["provenance"]["git_commit"]
    assert "## Label-free recommendation" in (test_run / "results/leaderboard/verdict.md").read_text()
    # the wine pair's recommendation: a candidate ranker, a number of the grid, the kept features by name
    rec = json.loads((out / "wine/red-white/recommendation.json").read_text())
    assert rec["ranker"] in ("ot", "ks") and rec["k"] in (1, 5, 11)  # the test grid on wine's 11 features
    assert len(rec["features"]) == rec["k"] and all(isinstance(f, str) for f in rec["features"])
    assert (out / "wine/red-white/scores.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "wine/red-white/recommendation.md").read_text().startswith("# Recommendation for wine, red-white")
