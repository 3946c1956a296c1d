"""What the documentation shows, run as written: the README's library example, the two Pipeline idioms it
names, and every block of code and every command of docs/your-dataset.md (the commands' leading
`snakemake` is this interpreter's Snakemake on a copy of the workflow; nothing else is changed)."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest

from .conftest import REPO, SNAKEMAKE, copy_workflow, mirror_dir, require_module, uci_mirror_dir


def code_blocks(path, language: str) -> list[str]:
    """The fenced blocks of ``language`` in a Markdown file, in order."""
    return re.findall(rf"```{language}\n(.*?)```", (REPO / path).read_text(encoding="utf-8"), re.S)


def commands(block: str) -> list[list[str]]:
    """The shell commands of a block: lines joined where they end in a backslash, split as a shell would."""
    return [shlex.split(line) for line in block.replace("\\\n", " ").splitlines() if line.strip()
            and not line.lstrip().startswith("#")]


def report_captions(html: str) -> list[str]:
    """The paragraphs of a Snakemake report's captions (rendered from workflow/report/*.rst), each checked
    to have no empty ("") or unresolved ({{ }}) field and no Python None."""
    paragraphs = re.findall(r"<p>(.*?)</p>", html.replace("\\n", "\n"), re.S)
    captions = [p for p in paragraphs if "Run:" in p or "Feature set" in p or re.match(r"(Table|Figure) \d", p)]
    for caption in captions:
        assert '""' not in caption and "''" not in caption and "{{" not in caption and "None" not in caption, caption
    return captions


def _run_python(code: str, cwd) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    proc = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.mark.subprocess
def test_the_readmes_library_example_runs_as_written(tmp_path):
    # real-shaped data (a DataFrame with named columns), per-domain z-scores, a fractional number of features,
    # skada's pipeline; any UserWarning (e.g. "fitted without feature names") fails it
    require_module("skada", "skada")
    section = (REPO / "README.md").read_text(encoding="utf-8").split("## The library in ten lines")[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len([line for line in code.splitlines() if line.strip() and not line.startswith(("import", "from"))]) <= 10
    out = _run_python(code, tmp_path).stdout.splitlines()
    accuracy = float(out[0])
    assert 0.8 < accuracy <= 1.0  # a fraction, as the comment says
    kept = re.findall(r"'([^']+)'", " ".join(out[1:]))
    assert len(kept) == 6 and "hue" not in kept  # half of 13 features, by name; the drifted one is not kept


_IDIOMS = """
import numpy as np, pandas as pd
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from otfs import OTFeatureRanker
rng = np.random.RandomState(0)
cols = [f"f{i}" for i in range(8)]
Xs, Xt = pd.DataFrame(rng.randn(40, 8), columns=cols), pd.DataFrame(rng.randn(50, 8), columns=cols)
Xt["f3"] += 10
ys = rng.randint(3, size=40)
pipe = Pipeline([("rank", OTFeatureRanker(n_features_to_select=0.5)), ("knn", KNeighborsClassifier(1))])
off = list(pipe.fit(Xs, ys, rank__X_target=Xt)[0].get_feature_names_out())   # routing off: step__param
import skada  # noqa: F401  turns scikit-learn's metadata routing on for the whole process
import sklearn
assert sklearn.get_config()["enable_metadata_routing"]
on = list(pipe.fit(Xs, ys, X_target=Xt)[0].get_feature_names_out())          # routing on: X_target=Xt
try:
    pipe.fit(Xs, ys, rank__X_target=Xt)
    raise SystemExit("rank__X_target worked with routing on: update the README")
except TypeError:
    pass
print(off == on, off)
"""


@pytest.mark.subprocess
def test_the_two_pipeline_idioms_the_readme_names_select_the_same_features(tmp_path):
    require_module("skada", "skada")
    out = _run_python(_IDIOMS, tmp_path).stdout.split(" ", 1)
    assert out[0] == "True" and "'f3'" not in out[1]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`pipe.fit(Xs, ys, rank__X_target=Xt)` while scikit-learn's\nmetadata routing is off" in readme
    assert "`pipe.fit(Xs, ys, X_target=Xt)`\nonce it is on (importing skada turns it on" in readme


@pytest.mark.pipeline
def test_your_dataset_page_runs_as_written(tmp_path):
    # docs/your-dataset.md, top to bottom: its Python block writes the data, its first YAML block is mine.yaml,
    # and every command of its bash blocks runs as written (the data mirrors set as in CI)
    work = copy_workflow(tmp_path / "wf")
    _run_python(code_blocks("docs/your-dataset.md", "python")[0], work)
    (work / "mine.yaml").write_text(code_blocks("docs/your-dataset.md", "yaml")[0])
    env = {**os.environ, "OTFS_DATA_MIRROR": str(mirror_dir()), "OTFS_UCI_MIRROR": str(uci_mirror_dir()),
           "MPLBACKEND": "Agg"}
    env.pop("PYTHONPATH", None)
    outputs = []
    for block in code_blocks("docs/your-dataset.md", "bash"):
        for argv in commands(block):
            if argv[0] == "snakemake":
                argv = [*SNAKEMAKE, "--snakefile", str(work / "Snakefile"), "--directory", str(work), *argv[1:]]
            proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=1200)
            assert proc.returncode == 0, f"{' '.join(argv)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
            outputs.append(proc.stdout)
    from otfs_workflow.data import read_cache
    from otfs_workflow.io import read_tsv

    for ranker in ("ot", "ks"):
        summary = read_tsv(work / f"results/aggregate/wine2/all/{ranker}/NA/curves/summary.tsv")
        assert set(summary["n_features"]) == set(range(1, 14))  # 'paper' below 32 features: every count
        assert summary["accuracy"].between(0, 100).all()
    ks = json.loads((work / "results/runs/wine2/ranking/ks/a-b.json").read_text())
    names = ks["feature_names"]
    # the two drifted features rank last by KS in every iteration, named as in the files
    assert all({names[i] for i in it["orders"]["Descending"][-2:]} == {"color_intensity", "hue"}
               for it in ks["iterations"])
    features = read_tsv(work / "results/aggregate/wine2/all/ot/features.tsv")
    assert sorted(features["feature"]) == sorted(names) and list(features["rank"]) == list(range(1, 14))
    assert any("rank\tfeature\tindex\tmean_rank" in o for o in outputs)  # `head` shows the features by name
    # the recommendation: a ranker of the benchmark, k of the grid, the kept features by name
    rec = json.loads((work / "results/recommend/wine2/a-b/recommendation.json").read_text())
    assert rec["ranker"] in ("ot", "wasserstein1d", "ks", "mmd", "domain-auc", "source-anova", "random")
    assert rec["k"] in (1, 3, 6, 13) and len(rec["features"]) == rec["k"] and set(rec["features"]) <= set(names)
    assert sum(c["chosen"] for c in rec["candidates"]) == 1
    assert any(o.startswith("# Recommendation for wine2, a-b") for o in outputs)
    # columns were taken by name: b's file has them in reverse order, its cache in a's order
    a, b = read_cache(work / "data/cache/wine2/a.h5"), read_cache(work / "data/cache/wine2/b.h5")
    assert a.feature_names == b.feature_names == names and b.class_names == ["class_0", "class_1", "class_2"]
    assert b.domain("b").source_path.endswith("data/local/wine/b.parquet")
    import pandas as pd

    raw = pd.read_parquet(work / "data/local/wine/b.parquet")
    z = (raw[names] - raw[names].mean()) / raw[names].std(ddof=0)
    np.testing.assert_allclose(b.domain("b").X, z.to_numpy(), rtol=1e-12, atol=1e-12)
    # the report's captions describe this dataset, with no empty or unresolved field
    html = (work / "report.html").read_text(errors="replace")
    captions = report_captions(html)
    assert len(captions) >= 4  # Table 1 and Figure 1: what they show, the feature set, the run
    text = " ".join(captions)
    for expected in ("Feature set <strong>wine2</strong> (dataset wine2; domains a, b; d = 13)",
                     "read by the tabular reader from data/local/wine/a.csv, data/local/wine/b.parquet, "
                     "label column 'cultivar'; preprocessing zscore",
                     "Algorithm 1: exact OT sample selection (ties: lowest"):
        assert expected in text, expected
    assert "CaffeNet" not in text and "dslr" not in text  # the paper's data are not this run's
    assert "Feature set wine2 (dataset wine2)" in html and "5.1 Office/Caltech" not in html  # its own section


    # editing a domain's file reruns its cache and what depends on it
    csv = work / "data/local/wine/a.csv"
    csv.write_text(csv.read_text() + "\n")
    later = os.stat(csv).st_mtime + 5
    os.utime(csv, (later, later))
    dry = subprocess.run([*SNAKEMAKE, "--snakefile", str(work / "Snakefile"), "--directory", str(work), "--dry-run",
                          "--cores", "2", "results/aggregate/wine2/all/ot/NA/curves/summary.tsv", "--configfile",
                          "mine.yaml"], cwd=work, env=env, capture_output=True, text=True)
    assert "build_cache" in dry.stdout and "rank_features" in dry.stdout, dry.stdout + dry.stderr


@pytest.mark.subprocess
def test_the_recommendation_pages_example_runs_as_written(tmp_path):
    # docs/recommend.md's library block: the shipped policy on a drifted wine, every candidate printed
    require_module("skada", "skada")
    out = _run_python(code_blocks("docs/recommend.md", "python")[0], tmp_path).stdout.splitlines()
    ranker, k = out[0].split()[:2]
    assert ranker in ("ot", "wasserstein1d", "ks", "mmd", "domain-auc", "source-anova", "random")
    assert int(k) in (1, 3, 6, 13) and len(re.findall(r"'([^']+)'", out[0])) == int(k)
    assert "IW:score" in out[1] and "chosen" in out[1]
    from otfs.k_selection._label_free import read_policy_file, shipped_policy_file

    assert out[-1] in read_policy_file(shipped_policy_file())["learned"]["NA"]["by_family"]


@pytest.mark.subprocess
def test_learning_a_policy_on_your_own_tasks_runs_as_written(tmp_path):
    # docs/recommend.md's last Python block: a policy learned on three families of labelled tasks, by the nested
    # leave one family out; its regrets are points of accuracy lost, none below 0, and the simplest rule in
    # hindsight loses no more than any fixed policy
    require_module("skada", "skada")
    out = _run_python(code_blocks("docs/recommend.md", "python")[2], tmp_path).stdout.splitlines()
    name, procedure = out[0].split(" ", 1)
    assert procedure in ("all-features", "best fixed", "switch", "least regret") or procedure.startswith("fixed:")
    regret = ast.literal_eval(out[1])
    assert {"recommendation", "always OT", "always source-ANOVA", "all features", "best fixed policy"} <= set(regret)
    assert min(regret.values()) >= 0
    fixed = [v for k, v in regret.items() if k.startswith("fixed:") or k == "all-features"]
    assert regret["best fixed policy"] == min(fixed)
    ranker, k = out[2].split()
    assert ranker in ("ot", "source-anova", "random") and 1 <= int(k) <= 64


@pytest.mark.pipeline
def test_a_recommendation_on_your_unlabelled_target_runs_as_written(tmp_path):
    # docs/recommend.md's section on a target without labels: its Python block writes the tables (the target's
    # file has no label column), its YAML block is unlabelled.yaml, and its commands run as written on a machine
    # without the benchmark's data (no mirror): the recommendation is built, the evaluation skipped and said so
    work = copy_workflow(tmp_path / "wf")
    _run_python(code_blocks("docs/recommend.md", "python")[1], work)
    (work / "unlabelled.yaml").write_text(code_blocks("docs/recommend.md", "yaml")[0])
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTFS_") and k != "PYTHONPATH"}
    env["MPLBACKEND"] = "Agg"
    outputs = []
    for argv in commands(code_blocks("docs/recommend.md", "bash")[1]):
        if argv[0] == "snakemake":
            argv = [*SNAKEMAKE, "--snakefile", str(work / "Snakefile"), "--directory", str(work), *argv[1:]]
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, f"{' '.join(argv)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
        outputs.append(proc.stdout + proc.stderr)
    out = work / "results/recommend/mine/labelled-unlabelled"
    rec = json.loads((out / "recommendation.json").read_text())
    assert rec["ranker"] in ("ot", "wasserstein1d", "ks", "mmd", "domain-auc", "source-anova", "random")
    assert rec["k"] in (1, 3, 6, 13) and rec["target_samples"] == 89 and rec["evaluated"] is False
    assert outputs[1].startswith("# Recommendation for mine, labelled-unlabelled")
    page = (out / "recommendation.md").read_text()
    assert "evaluation" in page and "benchmark's data" in page
    assert not (work / "results/recommend/evaluation.md").exists()
    from otfs_workflow.data import read_cache

    cache = read_cache(work / "data/cache/mine/unlabelled.h5")
    assert not cache.domains["unlabelled"].labelled and set(cache.domains["unlabelled"].y) == {0}
    # a target that measures accuracies on the target stops with an error naming the domain
    proc = subprocess.run([*SNAKEMAKE, "--snakefile", str(work / "Snakefile"), "--directory", str(work), "--cores",
                           "1", "results/aggregate/mine/all/ot/NA/curves/summary.tsv", "--configfile",
                           "unlabelled.yaml"], cwd=work, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode != 0
    logs = "".join(p.read_text() for p in (work / "logs").rglob("*.log"))
    assert "the domain 'unlabelled' has no labels" in proc.stdout + proc.stderr + logs
