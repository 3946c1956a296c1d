"""Building the paper's tables from aggregates, and comparing with published numbers."""

import json

import numpy as np
import pandas as pd
import pytest

from otfs_workflow.aggregation import mean_over_pairs, per_pair_summary
from otfs_workflow.tables import cell_label, compare, pair_label, points, render_latex, render_markdown, wide


@pytest.fixture()
def long():
    rows = []
    rng = np.random.RandomState(0)
    for pair in ("amazon-dslr", "dslr-webcam"):
        for it in range(3):
            for order in ("Descending", "Ascending"):
                for n in (10, 40):
                    acc = (60 if order == "Descending" else 30) + (n == 40) * 5 + rng.rand()
                    if n == 40:
                        acc = 70.0 + it  # all features: same for both orders
                    rows.append(dict(feature_set="fs", pair=pair, source=pair.split("-")[0],
                                     target=pair.split("-")[1], iteration=it, ranker="ot",
                                     adapter="NA", grid="curves", order=order, n_features=n,
                                     accuracy=acc, seconds=0.5))
    return pd.DataFrame(rows)


def test_points_means_and_stds(long):
    pp, sm = per_pair_summary(long), mean_over_pairs(long)
    tidy = points(pp, sm, [10])
    mean_all = tidy[(tidy["pair"] == "Mean") & (tidy["order"] == "All")].iloc[0]
    assert mean_all["n_features"] == 40 and mean_all["accuracy"] == pytest.approx(71.0)
    # the paper's "±": mean over pairs of the per-pair population std
    assert mean_all["std"] == pytest.approx(np.std([70, 71, 72]))
    assert mean_all["pairs"] == 2 and mean_all["seconds"] == pytest.approx(2 * 3 * 0.5)
    per = tidy[(tidy["pair"] == "amazon-dslr") & (tidy["order"] == "Descending")].iloc[0]
    ref = long[(long["pair"] == "amazon-dslr") & (long["order"] == "Descending") & (long["n_features"] == 10)]
    assert per["accuracy"] == pytest.approx(ref["accuracy"].mean())
    assert set(tidy["pair"]) == {"amazon-dslr", "dslr-webcam", "Mean"}
    with pytest.raises(ValueError, match="no result"):
        points(pp, sm, [20])


def test_wide_and_renderings(long):
    tidy = points(per_pair_summary(long), mean_over_pairs(long), [10])
    table = wide(tidy, lambda r: pair_label(r["pair"]), lambda r: cell_label(r["order"], r["n_features"]))
    assert list(table.columns) == ["↘10", "↗10", "40"]
    assert list(table.index) == ["A→D", "D→W", "Mean"]
    assert table.loc["Mean", "40"] == "71.0 ± 0.8"
    md = render_markdown(table, "DA pairs")
    assert md.splitlines()[0] == "| DA pairs | ↘10 | ↗10 | 40 |"
    tex = render_latex(table, "DA pairs", caption="Table 1: 50% done")
    assert r"$\searrow$10" in tex and r"$\pm$" in tex and r"A$\rightarrow$D" in tex
    assert r"50\% done" in tex and tex.count(r"\hline") == 4


def test_compare_with_published(long):
    tidy = points(per_pair_summary(long), mean_over_pairs(long), [10])
    published = pd.DataFrame([
        dict(table="t", feature_set="fs", ranker="ot", adapter="NA", pair="Mean", order="All",
             n_features=40, accuracy=70.0, std=1.0, seconds=np.nan),
        dict(table="t", feature_set="fs", ranker="ot", adapter="NA", pair="amazon-dslr",
             order="All", n_features=40, accuracy=72.5, std=1.0, seconds=np.nan),
        dict(table="t", feature_set="other", ranker="ot", adapter="NA", pair="Mean", order="All",
             n_features=40, accuracy=1.0, std=1.0, seconds=np.nan),
    ])
    c = compare(tidy, published)
    assert len(c) == 2  # the other feature set has no reproduced number
    mean = c[c["pair"] == "Mean"].iloc[0]
    assert mean["difference"] == pytest.approx(1.0)
    assert not mean["comparable"]  # a mean over 2 pairs is not the paper's 12-pair mean
    pair = c[c["pair"] == "amazon-dslr"].iloc[0]
    assert pair["difference"] == pytest.approx(71.0 - 72.5) and pair["comparable"]


def test_empty_collections_write_headers(tmp_path):
    from otfs_workflow.stages import aggregation, tables

    aggregation.collect([], tmp_path / "long.tsv")
    assert (tmp_path / "long.tsv").read_text().startswith("feature_set\tpair")
    tables.summary([], {"csv": tmp_path / "s.csv", "md": tmp_path / "s.md"})
    assert "# Published versus reproduced" in (tmp_path / "s.md").read_text()


def test_an_aggregates_provenance_reads_each_cache_once_and_again_when_it_changes(tmp_path, monkeypatch):
    # every (ranker, adapter) of a batch job records the same caches: their SHA-256 and raw files are read once
    # in the process, equal to what provenance_record and read_cache give, and read again once a cache changes
    import os

    from otfs_workflow.data import cache as cache_module
    from otfs_workflow.protocol import COLUMNS
    from otfs_workflow.provenance import file_sha256
    from otfs_workflow.stages import aggregation

    from .conftest import toy_caches

    caches, _ = toy_caches(tmp_path, seed=0)
    table = tmp_path / "run.tsv"
    pd.DataFrame([dict(zip(COLUMNS, ["toy", "src-tgt", "src", "tgt", 0, "ot", "NA", "g", "Descending", 2, 50.0,
                                     0.1]))]).to_csv(table, sep="\t", index=False)
    from otfs_workflow import provenance as provenance_module

    monkeypatch.setattr(provenance_module, "git_commit", lambda *a: "test")  # no git process
    reads = []
    real = cache_module.read_cache
    monkeypatch.setattr(aggregation, "read_cache", lambda path, *a: reads.append(str(path)) or real(path, *a))

    def provenance(i):
        outputs = {k: str(tmp_path / f"{i}.{k}") for k in ("long", "per_pair", "summary", "provenance")}
        aggregation.run([str(table)], list(caches.values()), outputs, {"i": i}, {})
        return json.loads(open(outputs["provenance"]).read())

    first, second = provenance(0), provenance(1)
    assert sorted(reads) == sorted(caches.values())  # once each, for both runs
    expected = {p: file_sha256(p) for p in caches.values()}
    assert first["inputs"] == second["inputs"] == expected
    assert first["raw_files"] == {d: {"path": "", "git_blob_sha1": ""} for d in caches}
    cache_module.write_cache(caches["src"], feature_set="toy", dataset="toy",
                             domains={"src": cache_module.DomainData("src", np.arange(36.0).reshape(3, 12), np.array([1, 2, 3]),
                                                                     source_path="raw/src.csv")},
                             class_names=["a", "b", "c"], preprocessing=[])
    os.utime(caches["src"], ns=(1, 1))  # another state of the file, whatever the clock's resolution
    third = provenance(2)
    assert third["inputs"][caches["src"]] == file_sha256(caches["src"]) != first["inputs"][caches["src"]]
    assert third["raw_files"]["src"]["path"] == "raw/src.csv"
