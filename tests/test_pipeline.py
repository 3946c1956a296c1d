"""The Snakemake pipeline, run for real on the tiny test configuration.

The workflow is copied into a temporary folder (Snakefile, config, workflow/,
src/, data/manifests) so tests can run it, and edit its code, without
touching the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from otfs.io import read_tsv

from .conftest import REPO, mirror_dir

pytestmark = pytest.mark.pipeline

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
COPIED = ["Snakefile", "config.yaml", "config", "envs", "profiles", "workflow", "src", "data/manifests"]
ROWS_PER_PAIR_ITERATION = 3 * 17  # orders x feature counts (SURF, d = 800)


def copy_workflow(dest: Path) -> Path:
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "OTFS_DATA_MIRROR": str(mirror_dir())}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [*SNAKEMAKE, "--snakefile", str(workdir / "Snakefile"), "--directory", str(workdir), *args],
        capture_output=True, text=True, env=env, cwd=workdir,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Job counts from the 'Job stats' table of a dry run."""
    counts, in_table = {}, False
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("job") and "count" in line:
            in_table = True
            continue
        if in_table:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                if parts[0] == "total":
                    break
                counts[parts[0]] = int(parts[1])
    return counts


@pytest.fixture(scope="module")
def test_run(tmp_path_factory):
    """The test configuration, built once with 2 cores."""
    work = copy_workflow(tmp_path_factory.mktemp("run_cores2"))
    snakemake(work, "--configfile", "config/test.yaml", "--cores", "2", "all")
    return work


def test_dry_run_of_all_plans_the_paper_grid(tmp_path):
    work = copy_workflow(tmp_path)
    jobs = planned_jobs(snakemake(work, "--dry-run", "--cores", "16", "all"))
    assert jobs["acquire"] == 4 and jobs["build_cache"] == 4  # one cache per domain
    for rule in ("select_samples", "rank_features", "classify"):
        assert jobs[rule] == 12, jobs  # one job per pair, 19 iterations inside
    assert jobs["aggregate"] == 1 and jobs["plot_figure7"] == 1


def test_end_to_end_table_and_figure(test_run):
    long = read_tsv(test_run / "results" / "results_long.tsv")
    assert set(long["pair"]) == {"dslr-webcam", "webcam-dslr", "amazon-dslr"}
    assert len(long) == 3 * 2 * ROWS_PER_PAIR_ITERATION
    assert set(long["adapter"]) == {"NA"} and set(long["selection"]) == {"ot"}
    assert long["accuracy"].between(0, 100).all()
    assert not long.duplicated(["pair", "iteration", "order", "n_features"]).any()
    at_d = long[long["n_features"] == 800].groupby(["pair", "iteration"])["accuracy"].nunique()
    assert (at_d == 1).all()  # all features: the order cannot matter

    summary = read_tsv(test_run / "results" / "tables" / "surf" / "ot" / "NA" / "summary.tsv")
    assert len(summary) == 3 * 17 and (summary["pairs"] == 3).all()
    pick = summary.set_index(["order", "n_features"])["accuracy"]
    # the method's signal on real data: most similar features beat least similar
    assert pick[("Descending", 100)] > pick[("Ascending", 100)] + 10

    fig = test_run / "results" / "figures" / "figure7"
    assert (fig / "surf.pdf").read_bytes().startswith(b"%PDF")
    assert (fig / "surf.png").read_bytes().startswith(b"\x89PNG")
    plotted = pd.read_csv(fig / "surf.csv")
    assert len(plotted) == 51

    prov = json.loads((test_run / "results/tables/surf/ot/NA/provenance.json").read_text())
    assert prov["versions"]["POT"] and prov["versions"]["numpy"]
    assert prov["config"]["protocol"]["iterations"] == 2
    assert prov["raw_files"]["dslr"]["git_blob_sha1"] == "944902f10891e355beed167f54d14c345453e38b"
    assert sorted(k.rsplit("/", 1)[-1] for k in prov["inputs"]) == ["amazon.h5", "dslr.h5", "webcam.h5"]

    sel = json.loads((test_run / "results/runs/surf/selection/ot/amazon-dslr.json").read_text())
    assert [it["flipped"] for it in sel["iterations"]] == [True, True]  # 200 > 157 samples
    assert len(sel["iterations"][0]["matched_source"]) == 157


def test_results_do_not_depend_on_cores(test_run, tmp_path):
    work = copy_workflow(tmp_path)
    snakemake(work, "--configfile", "config/test.yaml", "--cores", "1", "all")
    a = read_tsv(test_run / "results" / "results_long.tsv")
    b = read_tsv(work / "results" / "results_long.tsv")
    # "seconds" is a measured wall time, not a result
    pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))
    for stage in ("selection", "ranking"):
        f = f"results/runs/surf/{stage}/ot/amazon-dslr.json"
        assert (test_run / f).read_bytes() == (work / f).read_bytes()


def test_rebuilding_a_figure_runs_only_what_it_needs(test_run):
    # A change to the plotting code reruns the plot and nothing upstream.
    plotting = test_run / "src" / "otfs" / "plotting.py"
    plotting.write_text(plotting.read_text() + "\n# edited\n")
    jobs = planned_jobs(
        snakemake(test_run, "--configfile", "config/test.yaml", "--dry-run", "--cores", "2", "figure7")
    )
    assert jobs == {"plot_figure7": 1, "figure7": 1}
    # Deleting the figure alone also rebuilds only the figure.
    (test_run / "results" / "figures" / "figure7" / "surf.pdf").unlink()
    snakemake(test_run, "--configfile", "config/test.yaml", "--cores", "2", "figure7")
    assert (test_run / "results" / "figures" / "figure7" / "surf.pdf").is_file()


def test_config_typo_stops_the_pipeline(tmp_path):
    work = copy_workflow(tmp_path)
    bad = work / "config" / "typo.yaml"
    bad.write_text("protocol:\n  iteratons: 3\n")
    proc = snakemake(work, "--configfile", "config/typo.yaml", "--dry-run", check=False)
    assert proc.returncode != 0
    assert "unknown key 'protocol.iteratons' (did you mean 'iterations'?)" in proc.stdout + proc.stderr


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
    log = (work / "logs" / "acquisition" / "office-caltech" / "CaffeNet4096" / "amazon.log").read_text()
    assert "CaffeNet4096/amazon.mat: no source has this file" in log
    assert "data/local/office-caltech/CaffeNet4096/amazon.mat" in log
