"""The shift data families' readers (otfs.datasets: amazon-reviews-400, amazon-reviews-5000, 20newsgroups,
wine-quality, heart-disease, landmine, wifi, corn-nir) on the mirror: the documented shapes and class
balances; and for each, a missing file, a file that fails its hash and a truncated file, each named."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from otfs.datasets import get_reader
from otfs.datasets._shift import ShiftFileError

from .conftest import REPO, shift_mirror_dir

#: (reader, parameters, domain, shape, samples per class) as docs/data-families.md states them.
EXPECTED = [
    ("amazon-reviews-400", {}, "books", (2000, 400), [1000, 1000]),
    ("amazon-reviews-400", {}, "dvd", (1999, 400), [1000, 999]),
    ("amazon-reviews-400", {}, "elec", (1998, 400), [1000, 998]),
    ("amazon-reviews-400", {}, "kitchen", (1999, 400), [1000, 999]),
    ("wine-quality", {}, "red", (1599, 11), [744, 855]),
    ("wine-quality", {}, "white", (4898, 11), [1640, 3258]),
    ("heart-disease", {}, "cleveland", (303, 13), [164, 139]),
    ("heart-disease", {}, "hungarian", (294, 13), [188, 106]),
    ("heart-disease", {}, "switzerland", (123, 13), [8, 115]),
    ("heart-disease", {}, "va", (200, 13), [51, 149]),
    ("landmine", {}, "foliated", (8535, 9), [8089, 446]),
    ("landmine", {}, "bare", (6285, 9), [5827, 458]),
    ("wifi", {"file": "t1t2"}, "t1", (1140, 67), [60] * 19),
    ("wifi", {"file": "t1t2"}, "t2", (1140, 67), [60] * 19),
    ("wifi", {"file": "t2t3"}, "t3", (1140, 67), [60] * 19),
    ("amazon-reviews-5000", {}, "books", (2000, 5000), [1000, 1000]),
    ("amazon-reviews-5000", {}, "dvd", (2000, 5000), [1000, 1000]),
    ("amazon-reviews-5000", {}, "electronics", (2000, 5000), [1000, 1000]),
    ("amazon-reviews-5000", {}, "kitchen", (2000, 5000), [1000, 1000]),
    ("20newsgroups", {"task": "comp-vs-rec"}, "source", (2950, 1000), [1752, 1198]),
    ("20newsgroups", {"task": "comp-vs-rec"}, "target", (2375, 1000), [1184, 1191]),
    ("20newsgroups", {"task": "comp-vs-sci"}, "source", (2361, 1000), [1175, 1186]),
    ("20newsgroups", {"task": "comp-vs-sci"}, "target", (2948, 1000), [1761, 1187]),
    ("20newsgroups", {"task": "comp-vs-talk"}, "source", (2696, 1000), [1755, 941]),
    ("20newsgroups", {"task": "comp-vs-talk"}, "target", (2192, 1000), [1181, 1011]),
    ("20newsgroups", {"task": "rec-vs-sci"}, "source", (2378, 1000), [1191, 1187]),
    ("20newsgroups", {"task": "rec-vs-sci"}, "target", (2384, 1000), [1198, 1186]),
    ("20newsgroups", {"task": "rec-vs-talk"}, "source", (2203, 1000), [1192, 1011]),
    ("20newsgroups", {"task": "rec-vs-talk"}, "target", (2138, 1000), [1197, 941]),
    ("20newsgroups", {"task": "sci-vs-talk"}, "source", (2027, 1000), [1185, 842]),
    ("20newsgroups", {"task": "sci-vs-talk"}, "target", (2298, 1000), [1188, 1110]),
]


def _read(name, params, domain, root):
    reader = get_reader(name, params)
    return reader, reader.read(domain, {p: root / p for p in reader.files(domain)}, None)


@pytest.mark.parametrize("name, params, domain, shape, counts", EXPECTED)
def test_each_family_reads_to_its_documented_shape_and_class_balance(name, params, domain, shape, counts):
    reader, features = _read(name, params, domain, shift_mirror_dir())
    checked = features.check(f"{name} {domain}")  # finite, labels 1..K
    assert checked.X.shape == shape and reader.count_features([domain], None) == shape[1]
    assert np.bincount(checked.y, minlength=len(counts) + 1)[1:].tolist() == counts
    assert len(checked.class_names) == len(counts)


@pytest.mark.subprocess
def test_every_family_file_is_in_the_manifest_with_the_mirrors_hashes():
    import subprocess

    from otfs_workflow.data.manifest import read_manifest

    manifest = read_manifest(REPO / "data" / "manifests" / "shift.tsv")
    mirror = shift_mirror_dir()
    for name, params, domain, _, _ in EXPECTED:
        for rel in get_reader(name, params).files(domain):
            entry = manifest.entry(rel)
            blob = subprocess.run(["git", "hash-object", str(mirror / rel)], capture_output=True, text=True,
                                  check=True).stdout.strip()
            assert blob == entry.git_blob_sha1, rel


def test_heart_disease_imputes_per_hospital_without_labels_and_says_so():
    reader, features = _read("heart-disease", {}, "switzerland", shift_mirror_dir())
    imputed = features.info["imputation"]
    assert features.info["imputed"]["chol"] == 123 and features.info["missing"] == "median"
    # every cholesterol of Switzerland is written 0 (missing): never observed there, so 0 throughout
    assert imputed["chol"] == {"imputed": 123, "value": 0.0, "observed": 0}
    assert np.all(features.X[:, 4] == 0.0)
    # a feature observed in some patients gets the median of those (no label is read)
    ca = imputed["ca"]
    assert ca["imputed"] == 118 and ca["observed"] == 5
    _, kept = _read("heart-disease", {"features": ["age", "sex", "cp"]}, "switzerland", shift_mirror_dir())
    assert kept.X.shape == (123, 3) and list(kept.feature_names) == ["age", "sex", "cp"]
    with pytest.raises(ValueError, match=r"features: unknown feature\(s\) \['cholesterol'\]"):
        get_reader("heart-disease", {"features": ["cholesterol"]})


FAMILY_FILES = [(n, p, d) for n, p, d, _, _ in EXPECTED
                if d in ("books", "red", "cleveland", "foliated", "t1")
                or (n, d, p.get("task")) == ("20newsgroups", "source", "comp-vs-rec")] + [("corn-nir", {}, "m5")]


@pytest.mark.parametrize("name, params, domain", FAMILY_FILES)
def test_a_missing_or_truncated_file_is_named(tmp_path, name, params, domain):
    reader = get_reader(name, params)
    (rel,) = reader.files(domain)
    with pytest.raises(ShiftFileError, match=rf"{tmp_path / rel}: file not found"):
        reader.read(domain, {rel: tmp_path / rel}, None)
    source = shift_mirror_dir() / rel
    cut = tmp_path / rel
    cut.parent.mkdir(parents=True, exist_ok=True)
    data = source.read_bytes()
    cut.write_bytes(data[: len(data) // 2 + 7])  # cut inside a line or a MATLAB variable
    with pytest.raises(ShiftFileError, match=rf"{cut}: .*(truncated|fields, expected|cut short)"):
        reader.read(domain, {rel: cut}, None)


@pytest.mark.parametrize("name, params, domain", FAMILY_FILES)
def test_a_file_that_fails_its_hash_is_refused_naming_it(tmp_path, name, params, domain):
    from otfs_workflow.data.acquisition import HashMismatchError, verify_file
    from otfs_workflow.data.manifest import read_manifest

    manifest = read_manifest(REPO / "data" / "manifests" / "shift.tsv")
    (rel,) = get_reader(name, params).files(domain)
    copy = tmp_path / Path(rel).name
    shutil.copyfile(shift_mirror_dir() / rel, copy)
    verify_file(copy, manifest.entry(rel))  # the mirror's copy passes
    with open(copy, "ab") as fh:
        fh.write(b"\n")
    with pytest.raises(HashMismatchError, match=rf"{copy}"):
        verify_file(copy, manifest.entry(rel))


def test_amazon_5000_is_read_sparse_and_matches_the_files_own_lines():
    """The svmlight counts, checked against the file's first and last lines parsed here by hand."""
    from otfs.datasets.amazon_reviews_5000 import read_svmlight

    path = shift_mirror_dir() / "amazon-reviews-5000" / "kitchen_train.svmlight"
    X, labels = read_svmlight(path, 5000)
    assert X.format == "csr" and X.shape == (2000, 5000) and X.nnz == 126363
    lines = path.read_text().splitlines()
    for row, line in ((0, lines[0]), (1999, lines[-1])):
        label, *pairs = line.split()
        expected = np.zeros(5000)
        for pair in pairs:
            index, value = pair.split(":")
            expected[int(index)] = float(value)
        assert labels[row] == float(label)
        np.testing.assert_array_equal(X[row].toarray().ravel(), expected)
    _, dense = _read("amazon-reviews-5000", {}, "kitchen", shift_mirror_dir())
    np.testing.assert_array_equal(dense.X, X.toarray())
    assert dense.class_names == ["-1", "+1"] and np.all((dense.y == 2) == (labels > 0))
    _, test = _read("amazon-reviews-5000", {"split": "test"}, "dvd", shift_mirror_dir())
    assert test.X.shape == (3586, 5000) and np.bincount(test.y)[1:].tolist() == [1779, 1807]


def test_newsgroups_tasks_follow_the_split_without_headers_or_target_labels():
    from sklearn.feature_extraction.text import TfidfVectorizer

    from otfs.datasets.newsgroups import TASKS, read_messages

    root = shift_mirror_dir()
    for task, (classes, domains) in TASKS.items():
        # each domain holds subcategories of both top-level groups, and no subcategory is in both domains
        subcats = {d: {s for group in domains[d] for s in group} for d in domains}
        assert not subcats["source"] & subcats["target"], task
        for d in domains:
            for cls, group in zip(classes, domains[d], strict=True):
                assert group and all(s.startswith(cls + ".") for s in group), (task, d)
    messages = read_messages(root / "20newsgroups" / "20news-bydate.tar.gz", ("20news-bydate-train",))
    assert len(messages) == 20 and sum(len(m) for m in messages.values()) == 11314
    # every raw message starts with a header naming its newsgroup; what is left of a few (forwarded mail,
    # a header with a blank line inside: sklearn's strip_newsgroup_header keeps them too) is under 1 %
    headed = sum("Newsgroups:" in text.split("\n\n")[0] for m in messages.values() for _, text in m)
    assert headed < 0.01 * 11314
    reader = get_reader("20newsgroups", {"task": "rec-vs-sci", "max_features": 300})
    read = {d: reader.read(d, {p: root / p for p in reader.files(d)}, None) for d in ("source", "target")}
    assert read["source"].feature_names == read["target"].feature_names
    for d, features in read.items():  # each label is the top-level group of the message's own folder
        groups = [ident.split("/")[1].split(".")[0] for ident in features.sample_ids]
        assert [features.class_names[y - 1] for y in features.y] == groups
    # the reference: scikit-learn's vectoriser fitted on the two domains' texts, with no label at all
    texts = {d: [t for s in sum(TASKS["rec-vs-sci"][1][d], ()) for _, t in messages[s]] for d in ("source", "target")}
    ref = TfidfVectorizer(token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z]+\b", stop_words="english", sublinear_tf=True,
                          min_df=3, max_features=300).fit(texts["source"] + texts["target"])
    assert list(read["source"].feature_names) == ref.get_feature_names_out().tolist()
    order = np.argsort(read["target"].sample_ids, kind="stable")
    ref_order = np.argsort([i for s in sum(TASKS["rec-vs-sci"][1]["target"], ()) for i, _ in messages[s]],
                           kind="stable")
    np.testing.assert_allclose(read["target"].X[order], ref.transform(texts["target"]).toarray()[ref_order],
                               rtol=1e-12, atol=0)


def test_corn_nir_is_a_regression_on_three_instruments_and_the_grid_refuses_it(tmp_path):
    from otfs.datasets.corn_nir import RESPONSES

    root = shift_mirror_dir()
    for response in RESPONSES:
        reader = get_reader("corn-nir", {"response": response})
        read = [reader.read(d, {p: root / p for p in reader.files(d)}, None).check(d) for d in ("m5", "mp5", "mp6")]
        assert all(r.X.shape == (80, 700) for r in read) and read[0].feature_names[0] == "1100nm"
        assert read[0].feature_names[-1] == "2498nm"
        np.testing.assert_array_equal(read[0].y, read[2].y)  # the same 80 samples on every instrument
        assert not np.array_equal(read[0].X, read[1].X)     # ... measured differently
    ranges = {"moisture": (9.377, 10.993), "oil": (3.088, 3.832), "protein": (7.654, 9.711),
              "starch": (62.826, 66.472)}
    for response, (low, high) in ranges.items():
        _, r = _read("corn-nir", {"response": response}, "mp6", root)
        assert (r.y.min(), r.y.max()) == (low, high)
    with pytest.raises(ValueError, match=r"response: one of \['moisture', 'oil', 'protein', 'starch'\]"):
        get_reader("corn-nir", {"response": "fat"})
    from otfs_workflow.stages import cache

    rel = "corn-nir/cornData.mat"
    with pytest.raises(ValueError, match=r"corn/m5: the corn-nir reader reads a regression problem"):
        cache.run("corn", "m5", {"dataset": "corn-nir", "reader": {"name": "corn-nir"}, "preprocessing": []},
                  REPO / "data" / "manifests" / "shift.tsv", {rel: str(root / rel)}, tmp_path / "c.h5")
    assert not (tmp_path / "c.h5").exists()


def test_an_unknown_domain_or_parameter_is_named():
    with pytest.raises(ValueError, match=r"wine-quality: unknown domain 'rose'; its domains: \['red', 'white'\]"):
        get_reader("wine-quality").files("rose")
    with pytest.raises(ValueError, match=r"file: one of \['t1t2', 't1t3', 't2t3'\], got 't1t4'"):
        get_reader("wifi", {"file": "t1t4"})
    with pytest.raises(ValueError, match=r"threshold: 11 must be <= 10"):
        get_reader("wine-quality", {"threshold": 11})


def test_the_documented_table_is_what_the_readers_return():
    """docs/data-families.md's table states the shapes and class counts checked above."""
    text = (REPO / "docs" / "data-families.md").read_text(encoding="utf-8")
    for name, _, domain, (n, d), counts in EXPECTED:
        if name == "wifi":
            assert f"| t1, t2, t3 | {n} × {d} | 60 for each of {len(counts)} locations |" in text
            continue
        assert f"| {domain} | {n} × {d} | {', '.join(map(str, counts))} |" in text, (name, domain)


def test_the_documented_split_of_the_pairs_is_the_shipped_one():
    """docs/data-families.md's `shift.rankers_per_job` is the schema's default, which config.yaml keeps."""
    import yaml

    from otfs_workflow.config import experiment_schemas, load_yaml

    from .conftest import docs_block

    documented = yaml.safe_load(docs_block("data-families.md", "shift:", "yaml"))["shift"]["rankers_per_job"]
    schema = load_yaml(experiment_schemas(REPO / "workflow" / "schemas" / "experiments")["shift"])
    default = schema["properties"]["rankers_per_job"]["default"]
    assert documented == default and default["amazon5000"] == 2
    # the pairs of WiFi in two jobs of 7 of the 14 rankers; the other families' in one
    assert {fs: n for fs, n in default.items() if fs != "amazon5000"} == {
        fs: 7 for fs in ("wifi_t1t2", "wifi_t1t3", "wifi_t2t3")}
    assert "rankers_per_job" not in (load_yaml(REPO / "config.yaml").get("shift") or {})


@pytest.mark.pipeline
def test_a_pair_split_by_rankers_writes_what_one_job_writes(test_run, tmp_path):
    """config/test.yaml runs Amazon 5,000's pair in two jobs (shift.rankers_per_job: [ot, ks], [random]), which
    read the pair's points of all features computed once (rules classify_family_all_features and
    score_model_selection_all_features); the same pair in one job, from the same caches, computes them itself
    and writes every ranker's ranking, curves and label-free scores with the same values (all but the columns
    of seconds)."""
    import json

    import pandas as pd

    from .conftest import copy_workflow, planned_jobs, snakemake

    runs = test_run / "results" / "runs" / "amazon5000"
    # the pair job's outputs: not the files' hash records, the recommendation's task summaries (recommend_task
    # reads the pair's outputs) nor the points of all features the two jobs read
    targets = sorted(p.relative_to(test_run).as_posix() for p in runs.rglob("*")
                     if p.is_file() and not p.name.startswith(".") and p.parent.name != "recommend"
                     and "all_features" not in p.parts)
    ends = {p.relative_to(runs).as_posix() for p in runs.rglob("all_features/*/*") if not p.name.startswith(".")}
    assert {Path(e).name.split(".", 1)[1] for e in ends} == {"families.json", "model_selection.tsv"}, ends
    assert {Path(t).parts[4] for t in targets if "/ranking/" in t} == {"ot", "ks", "random"}, targets
    work = copy_workflow(tmp_path / "whole")
    shutil.copytree(test_run / "data" / "cache" / "amazon5000", work / "data" / "cache" / "amazon5000")
    whole = tmp_path / "whole.yaml"
    whole.write_text("shift: {rankers_per_job: {amazon5000: 3}}\n")
    args = ("--configfile", "config/test.yaml", str(whole), "--allowed-rules", "run_family_pair")
    assert planned_jobs(snakemake(work, *args, "--dry-run", *targets)) == {"run_family_pair": 1}
    snakemake(work, *args, "--cores", "1", *targets)
    def timed(key):
        return key == "seconds" or key.endswith(("_seconds", "_time_s"))

    def untimed(value):
        if isinstance(value, dict):
            return {k: untimed(v) for k, v in value.items() if not timed(k)}
        return [untimed(v) for v in value] if isinstance(value, list) else value

    for target in targets:
        split, one = test_run / target, work / target
        if target.endswith(".json"):
            assert untimed(json.loads(one.read_text())) == untimed(json.loads(split.read_text())), target
            continue
        a, b = (pd.read_csv(p, sep="\t", keep_default_na=False) for p in (split, one))
        timing = [c for c in a.columns if timed(c)]
        assert len(a) > 0 and list(a.columns) == list(b.columns), target
        pd.testing.assert_frame_equal(a.drop(columns=timing), b.drop(columns=timing), check_exact=True, obj=target)


@pytest.mark.pipeline
def test_shift_builds_each_familys_leaderboard(test_run, tmp_path):
    """config/test.yaml: one pair of six families; `available` (the test run) builds results/shift/<family>/ for
    each, with the leaderboard's rankers and adapters on the family's feature sets only, the grid's metrics,
    the label-free choice of k, and the verdict over the families; `shift` then has nothing left to do."""
    import json

    import pandas as pd

    from .conftest import planned_jobs, snakemake

    shift_mirror_dir()
    families = {"amazon5000": {"amazon5000"}, "news": {"news_rec_sci"}, "wine": {"wine"}, "heart": {"heart"},
                "landmine": {"landmine"}, "wifi": {"wifi_t1t2"}}
    for family, feature_sets in families.items():
        out = test_run / "results" / "shift" / family
        table = pd.read_csv(out / "table.csv", keep_default_na=False)  # the adapter NA
        assert set(table["dataset"]) == feature_sets, family
        assert set(table["ranker"]) == {"ot", "ks", "random"} and set(table["adapter"]) == {"NA", "CORAL"}
        assert table["nauc"].between(0, 100).all() and table["nauc"].notna().all()
        versus = pd.read_csv(out / "versus.csv", keep_default_na=False)
        assert {r: set(g["ranker"]) for r, g in versus.groupby("reference")} == {"ot": {"ks", "random"},
                                                                                 "ks": {"ot", "random"}}
        assert (versus["tasks"] == 1).all()
        long = pd.read_parquet(out / "results_long.parquet")
        assert set(long["dataset"]) == feature_sets and long["git_commit"].nunique() == 1
        for metric in ("balanced_accuracy", "second_accuracy", "second_balanced_accuracy", "second_auc"):
            assert long[metric].between(0, 100).all(), (family, metric)
        provenance = json.loads((out / "provenance.json").read_text())
        assert provenance["config"]["shift"]["families"][family] == sorted(feature_sets)
        k = pd.read_csv(out / "k_selection" / "table.csv", keep_default_na=False)
        assert set(k["dataset"]) == feature_sets | {"all"} and (k["regret"] >= 0).all()
    # the caches of the sliced families hold at most max_samples per domain, stratified
    from otfs_workflow.data.cache import read_cache

    white = read_cache(test_run / "data" / "cache" / "wine" / "white.h5").domain("white")
    assert white.X.shape[0] == 300 and np.bincount(white.y)[1:].tolist() == [100, 200]
    # one pair per family: no rank test, said in empty ranks (the header only)
    assert pd.read_csv(test_run / "results" / "shift" / "wine" / "ranks.csv").empty
    verdict = (test_run / "results" / "leaderboard" / "verdict.md").read_text()
    for family in families:
        assert f"## {family} (1 task;" in verdict
    assert "## all families (6 tasks" in verdict and "too few tasks" in verdict
    corn = pd.read_parquet(test_run / "results" / "shift" / "corn" / "oil" / "results_long.parquet")
    assert set(corn["ranker"]) == {"ot", "ks", "random", "source-correlation"} and set(corn["adapter"]) == {"NA",
                                                                                                       "CORAL"}
    assert (corn["rmse"] > 0).all() and corn["pair"].nunique() == 6
    assert "## corn (6 tasks; corn_oil)" in verdict and "Judged by the 1-NN RMSE" in verdict
    rows = pd.read_csv(test_run / "results" / "leaderboard" / "verdict.csv")
    assert set(rows["family"]) == set(families) | {"corn", "all families"}
    assert set(rows["metric"]) >= {"accuracy", "balanced_accuracy", "second_auc"}
    # every family's own target and `shift` are built by then: nothing to do
    proc = snakemake(test_run, "--configfile", "config/test.yaml", "--dry-run", "shift_wine", "shift")
    assert not {k: v for k, v in planned_jobs(proc).items() if not k.startswith("shift")}, planned_jobs(proc)
    # one job per (feature set, pair) ranks with each of the 3 rankers, runs both adapters' curves (NA, CORAL: they
    # apply to every family) and scores the choice of k: no ranking, classify or scoring job of its own
    # (the families' own targets: `shift` adds the verdict, which reads the recommendation's evaluation over the
    # image feature sets' choice of k too)
    family_targets = [f"shift_{f}" for f in families]
    jobs = planned_jobs(snakemake(test_run, "--configfile", "config/test.yaml", "--dry-run", "--forceall", *family_targets))
    # (Amazon 5,000's pair in two jobs, shift.rankers_per_job)
    assert jobs["run_family_pair"] == 5 and jobs["aggregate_family"] == 6, jobs
    assert jobs["run_family_pair_part1of2"] == jobs["run_family_pair_part2of2"] == 1, jobs
    assert not {"rank_features", "classify", "score_model_selection", "aggregate"} & set(jobs), jobs
    # with OT3 among the adapters, the families it applies to (wine, landmine, WiFi) get the pair rule that runs
    # it too (its curves and its choice-of-k scores adapt each point once), the others keep run_family_pair
    more = tmp_path / "ot3.yaml"
    more.write_text("leaderboard: {adapters: [NA, CORAL, OT3]}\n")
    jobs = planned_jobs(snakemake(test_run, "--configfile", "config/test.yaml", str(more), "--dry-run", "--forceall",
                                  *family_targets))
    assert jobs["run_family_pair"] == 2 and jobs["run_family_pair_with_ot3"] == 3, jobs
    assert not {"rank_features", "classify", "score_model_selection"} & set(jobs), jobs
    assert jobs["aggregate"] == 3 * 3  # OT3's aggregates, 3 rankers of 3 feature sets
    # the regression family leaves out the rankers that read class labels, as each says with its parameters
    labels = tmp_path / "labels.yaml"
    labels.write_text("leaderboard: {rankers: [ot, ks, random, source-anova, relevance-over-shift, hsic-lasso]}\n"
                      "rankers: {hsic-lasso: {output: label}}\n")
    proc = snakemake(test_run, "--configfile", "config/test.yaml", str(labels), "--dry-run", "--forceall", "shift")
    manifest = re.search(r"regression\.py@(\S+)\.json", proc.stdout).group(1)
    assert [m for m in manifest.split("+") if ".rankers." in m] == ["otfs.rankers.ks", "otfs.rankers.ot",
                                                                     "otfs.rankers.random"], manifest
    # a family's aggregate job writes, for each (ranker, adapter), what rule aggregate's stage writes
    from otfs_workflow.io import read_tsv
    from otfs_workflow.stages import aggregation

    folder = test_run / "results" / "aggregate" / "heart" / "all" / "ks" / "CORAL" / "families"
    tables = sorted(str(p) for p in (test_run / "results" / "runs" / "heart" / "classification" / "ks" / "CORAL"
                                     / "families").glob("*.tsv"))
    again = {k: str(tmp_path / f"again_{k}.tsv") for k in ("long", "per_pair", "summary")}
    aggregation.run(tables, [], {**again, "provenance": str(tmp_path / "again.json")}, {}, {})
    for kind in ("long", "per_pair", "summary"):
        pd.testing.assert_frame_equal(read_tsv(folder / f"{kind}.tsv"), read_tsv(again[kind]))
    log = (test_run / "logs" / "shift" / "pairs" / "heart" / "hungarian-cleveland.log").read_text()
    assert "done in" in log and "job failed" not in log
    for ranker in ("ot", "ks", "random"):
        assert (test_run / "results" / "runs" / "heart" / "model_selection" / ranker / "leaderboard"
                / "hungarian-cleveland.tsv").is_file()


@pytest.mark.pipeline
def test_a_family_naming_an_unknown_feature_set_is_refused_before_any_job(tmp_path):
    from .conftest import copy_workflow, snakemake

    work = copy_workflow(tmp_path)
    (work / "config" / "mine.yaml").write_text("shift:\n  families:\n    wine: [wine, wine2]\n")
    proc = snakemake(work, "--configfile", "config/test.yaml", "config/mine.yaml", "--dry-run", "shift", check=False)
    assert proc.returncode != 0
    assert "shift.families.wine[1]: unknown feature set 'wine2'" in proc.stdout + proc.stderr


def test_max_samples_cuts_a_domain_once_stratified_and_the_cache_says_so(tmp_path):
    import json

    from otfs_workflow.data.cache import read_cache
    from otfs_workflow.stages import cache

    root = shift_mirror_dir()
    rel = "wine-quality/winequality-white.csv"
    fs = {"dataset": "wine-quality", "reader": {"name": "wine-quality"}, "preprocessing": ["zscore"],
          "max_samples": 1000}
    paths = []
    for name in ("a.h5", "b.h5"):
        cache.run("wine", "white", fs, REPO / "data" / "manifests" / "shift.tsv", {rel: str(root / rel)},
                  tmp_path / name)
        paths.append(tmp_path / name)
    a, b = (read_cache(p).domain("white") for p in paths)
    assert a.X.shape == (1000, 11) and np.bincount(a.y)[1:].tolist() == [335, 665]  # 1640 : 3258 of 4898
    np.testing.assert_array_equal(a.X, b.X)  # the same draw every time (seed from feature set and domain)
    info = json.loads(read_cache(paths[0]).attrs.get("read_info", "{}") or "{}") or a.read_info
    assert info["subsample"]["max_samples"] == 1000 and info["subsample"]["of"] == 4898


def test_corn_regression_stage_against_scikit_learn(tmp_path):
    """The regression family's stage: disjoint halves, the rankers without labels, source-correlation as the
    |Pearson r| of each wavelength, and each RMSE equal to scikit-learn's 1-NN and ridge regressors'."""
    import pandas as pd
    from sklearn.linear_model import RidgeCV
    from sklearn.neighbors import KNeighborsRegressor

    from otfs.datasets import get_reader
    from otfs.preprocessing import zscore
    from otfs_workflow.protocol import derive_seed
    from otfs_workflow.stages import regression

    mat = shift_mirror_dir() / "corn-nir" / "cornData.mat"
    out = {"parquet": str(tmp_path / "r.parquet"), "table_csv": str(tmp_path / "t.csv"),
           "provenance": str(tmp_path / "p.json")}
    long = regression.run(mat, ["oil"], {"wasserstein1d": {}, regression.RELEVANCE: {}}, {"NA": None, "CORAL": None},
                          ["d/32", "d"], 1, "corn", {"versions": {}}, out)
    assert len(long) == 6 * 2 * 2 * 2 and set(long["pair"]) >= {"m5-mp5", "mp6-m5"}
    assert (long["neg_rmse"] == -long["rmse"]).all() and pd.read_parquet(out["parquet"]).shape == long.shape
    reader = get_reader("corn-nir", {"response": "oil"})
    X = {d: reader.read(d, {"corn-nir/cornData.mat": mat}, None).X for d in ("m5", "mp6")}
    y = reader.read("m5", {"corn-nir/cornData.mat": mat}, None).y
    perm = np.random.RandomState(derive_seed("corn_oil", "oil", "mp6-m5", 0, "halves")).permutation(80)
    a, b = np.sort(perm[:40]), np.sort(perm[40:])
    assert not set(a) & set(b)
    Xs, Xt = zscore(X["mp6"][a]), zscore(X["m5"][b])
    r = np.abs([np.corrcoef(Xs[:, j], y[a])[0, 1] for j in range(700)])
    order = np.lexsort((np.arange(700), -r))[:21]  # d/32 of 700
    row = long[(long["pair"] == "mp6-m5") & (long["ranker"] == regression.RELEVANCE) & (long["adapter"] == "NA")
               & (long["n_features"] == 21)].iloc[0]
    nn = KNeighborsRegressor(1, algorithm="brute").fit(Xs[:, order], y[a]).predict(Xt[:, order])
    ridge = RidgeCV().fit(Xs[:, order], y[a]).predict(Xt[:, order])
    assert row["rmse"] == pytest.approx(np.sqrt(np.mean((nn - y[b]) ** 2)), rel=1e-12)
    assert row["second_rmse"] == pytest.approx(np.sqrt(np.mean((ridge - y[b]) ** 2)), rel=1e-9)
    with pytest.raises(ValueError, match=r"adapters \['OT3'\] need class labels"):
        regression.run(mat, ["oil"], {"random": {}}, {"OT3": None}, ["d"], 1, "corn", {}, out)


def test_corn_label_free_k_is_the_shift_test_with_its_regret_in_rmse(tmp_path):
    """The regression family's choice of k: the shift test's k* of each (pair, repetition) on its rows, equal to
    SciPy's KS and statsmodels' Benjamini-Hochberg on the two halves; the regret of each rule against the lowest
    RMSE in hindsight, and the verdict's sentence in RMSE."""
    from scipy.stats import ks_2samp
    from statsmodels.stats.multitest import multipletests

    from otfs.datasets import get_reader
    from otfs.preprocessing import zscore
    from otfs_workflow.protocol import derive_seed
    from otfs_workflow.stages import regression

    mat = shift_mirror_dir() / "corn-nir" / "cornData.mat"
    out = {"parquet": str(tmp_path / "r.parquet"), "table_csv": str(tmp_path / "t.csv"),
           "provenance": str(tmp_path / "p.json")}
    rules = {"shift-test": {"q": 0.05}, "IW": {}, "oracle": {}, "all-features": {}}  # only the data rule runs
    long = regression.run(mat, ["oil"], {"random": {}, regression.RELEVANCE: {}}, {"NA": None},
                          ["d/32", "d/8", "d/2", "d"], 1, "corn", {"versions": {}}, out, data_rules=rules)
    assert "shift-test:k" in long and "IW:k" not in long
    reader = get_reader("corn-nir", {"response": "oil"})
    X = {d: reader.read(d, {"corn-nir/cornData.mat": mat}, None).X for d in ("m5", "mp6")}
    perm = np.random.RandomState(derive_seed("corn_oil", "oil", "m5-mp6", 0, "halves")).permutation(80)
    Xs, Xt = zscore(X["m5"][np.sort(perm[:40])]), zscore(X["mp6"][np.sort(perm[40:])])
    p = [ks_2samp(Xs[:, j], Xt[:, j], method="asymp").pvalue for j in range(700)]
    unshifted = int(np.sum(~multipletests(p, alpha=0.05, method="fdr_bh")[0]))
    counts = [21, 87, 350, 700]
    expected = max([c for c in counts if c <= unshifted], default=21)
    rows = long[long["pair"] == "m5-mp6"]
    assert (rows["shift-test:k"] == expected).all() and (rows["shift-test:unshifted"] == unshifted).all()

    chosen = regression.choices(long)
    assert set(chosen["rule"]) == {"shift-test", "oracle", "all-features"}
    for (pair, ranker), g in long.groupby(["pair", "ranker"]):
        by_k = dict(zip(g["n_features"], g["rmse"]))
        c = chosen[(chosen["pair"] == pair) & (chosen["ranker"] == ranker)].set_index("rule")
        assert c.loc["oracle", "rmse"] == min(by_k.values()) and c.loc["oracle", "regret"] == 0
        k = int(g["shift-test:k"].iloc[0])
        assert c.loc["shift-test", "k"] == k
        assert c.loc["shift-test", "regret"] == pytest.approx(by_k[k] - min(by_k.values()), abs=1e-15)
        assert c.loc["all-features", "gain"] == 0 and c.loc["all-features", "k"] == 700
    assert not chosen.loc[chosen["rule"] != "oracle", "reads_target_labels"].any()

    from otfs_workflow.stages.verdict import k_regrets

    k = k_regrets(chosen, "corn", unit="RMSE")
    assert set(k["rule"]) == {"shift-test", "all-features"} and (k["unit"] == "RMSE").all()
    assert k.set_index("rule").loc["shift-test", "regret"] == pytest.approx(
        chosen.loc[chosen["rule"] == "shift-test", "regret"].mean())
