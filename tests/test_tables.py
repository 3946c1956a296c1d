"""Building the paper's tables from aggregates, and comparing with published numbers."""

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
