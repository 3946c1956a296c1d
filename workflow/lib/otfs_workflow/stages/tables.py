"""Stage ``tables``: the paper's tables with their published-versus-reproduced comparison.

Each builder reads aggregates (``per_pair.tsv`` and ``summary.tsv`` of one
feature set, selection, adapter and grid), writes the tidy CSV, the LaTeX
and Markdown renderings, and the comparison with ``data/paper/<table>.csv``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from otfs_workflow.io import read_tsv, write_csv, write_text
from otfs_workflow.tables import (
    ARROWS,
    FEATURE_SET_NAMES,
    cell_label,
    compare,
    pair_label,
    points,
    render_latex,
    render_markdown,
    wide,
)

#: Table 5's column names: the OT rankers by their sample-selection strategy.
RANKER_NAMES = {"ot": "OT", "ot-1nn": "1NN", "ot-random": "Random"}


def _aggregate(prefix: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per_pair, summary)`` of an aggregate folder."""
    return read_tsv(f"{prefix}/per_pair.tsv"), read_tsv(f"{prefix}/summary.tsv")


def _write(tidy: pd.DataFrame, table: pd.DataFrame, index_name: str, caption: str,
           published_path, outputs: Mapping[str, str]) -> pd.DataFrame:
    write_csv(tidy, outputs["csv"], float_format="%.4f")
    write_text(outputs["md"], f"{caption}\n\n" + render_markdown(table, index_name))
    write_text(outputs["tex"], render_latex(table, index_name, caption))
    published = pd.read_csv(published_path, keep_default_na=False, na_values=[""])
    comparison = compare(tidy, published)
    write_csv(comparison, outputs["comparison"], float_format="%.4f")
    return comparison


def _fs(name: str) -> str:
    return FEATURE_SET_NAMES.get(name, name)


def table1(aggregates: Mapping[str, str] | str, n_features: int, published, outputs,
           caption: str) -> pd.DataFrame:
    """Per pair: ↘n, ↗n and all features, for one or more adapters (Table 1).

    ``aggregates`` maps an adapter to its aggregate folder (or is one folder).
    With several adapters each column label starts with the adapter's name;
    the paper's Table 1 is the ``NA`` columns.
    """
    if isinstance(aggregates, str):
        aggregates = {"NA": aggregates}
    frames = []
    for prefix in aggregates.values():
        per_pair, summary = _aggregate(prefix)
        frames.append(points(per_pair, summary, [n_features]))
    many = len(aggregates) > 1

    def column(r):
        label = cell_label(r["order"], r["n_features"])
        return f"{r['adapter']} {label}" if many else label

    return _per_pair_table(pd.concat(frames, ignore_index=True), column, caption, published, outputs)


def _per_pair_table(tidy: pd.DataFrame, column, caption: str, published, outputs) -> pd.DataFrame:
    """Rows: pairs in alphabetical order, then Mean; columns in the order of ``tidy``
    (one aggregate after the other), whichever pairs each aggregate has."""
    columns = list(dict.fromkeys(column(r) for _, r in tidy.iterrows()))
    order = {p: i for i, p in enumerate(sorted(set(tidy["pair"]) - {"Mean"}) + ["Mean"])}
    tidy = tidy.sort_values("pair", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    table = wide(tidy, lambda r: pair_label(r["pair"]), column)[columns]
    return _write(tidy, table, "DA pairs", caption, published, outputs)


def table2(aggregates: Mapping[str, str], counts: Mapping[str, Sequence[tuple[str, int]]],
           published, outputs, caption: str) -> pd.DataFrame:
    """Mean over pairs at d/32, d/8, d/2 and d, one column per feature set."""
    frames, labels = [], {}
    for fs, prefix in aggregates.items():
        per_pair, summary = _aggregate(prefix)
        tidy = points(per_pair, summary, [n for _, n in counts[fs]], with_pairs=False)
        frames.append(tidy)
        for spec, n in counts[fs]:
            labels[(fs, n)] = spec
        labels[(fs, int(summary["n_features"].max()))] = "d"
    tidy = pd.concat(frames, ignore_index=True)

    def row(r):
        spec = labels[(r["feature_set"], r["n_features"])]
        return ARROWS[r["order"]] + spec

    table = wide(tidy, row, lambda r: _fs(r["feature_set"]))
    return _write(tidy, table, "#features", caption, published, outputs)


def table3(aggregates: Mapping[str, str], counts: Sequence[int], published, outputs,
           caption: str) -> pd.DataFrame:
    """Adapters after Descending selection: mean accuracy and summed adaptation time."""
    frames = []
    for prefix in aggregates.values():
        per_pair, summary = _aggregate(prefix)
        d = int(summary["n_features"].max())
        ordered = [n for n in counts if n != d]
        frames.append(points(per_pair, summary, ordered, orders=("Descending",), with_pairs=False))
    tidy = pd.concat(frames, ignore_index=True)
    table = wide(tidy, lambda r: r["adapter"], lambda r: cell_label(r["order"], r["n_features"]),
                 with_seconds=True)
    return _write(tidy, table, "Method", caption, published, outputs)


def table5(aggregates: Mapping[str, str], counts: Sequence[int], published, outputs,
           caption: str) -> pd.DataFrame:
    """Sample-selection strategies of Algorithm 1: mean over pairs, ↘/↗ and all features."""
    frames = []
    for prefix in aggregates.values():
        per_pair, summary = _aggregate(prefix)
        frames.append(points(per_pair, summary, counts, with_pairs=False))
    tidy = pd.concat(frames, ignore_index=True)
    table = wide(tidy, lambda r: cell_label(r["order"], r["n_features"]),
                 lambda r: RANKER_NAMES.get(r["ranker"], r["ranker"]))
    return _write(tidy, table, "#features", caption, published, outputs)


def table6(aggregates: Mapping[str, str], n_features: Mapping[str, int], published, outputs,
           caption: str) -> pd.DataFrame:
    """Per pair for several feature sets: ↘n, ↗n and all features of each."""
    frames = []
    for fs, prefix in aggregates.items():
        per_pair, summary = _aggregate(prefix)
        frames.append(points(per_pair, summary, [n_features[fs]]))
    return _per_pair_table(
        pd.concat(frames, ignore_index=True),
        lambda r: f"{_fs(r['feature_set'])} {cell_label(r['order'], r['n_features'])}",
        caption, published, outputs,
    )


def figure2(aggregates: Mapping[str, str], published, outputs) -> pd.DataFrame:
    """The all-features accuracies quoted with Figure 2, per adapter, against the paper (``outputs["comparison"]``)."""
    frames = []
    for prefix in aggregates.values():
        per_pair, summary_ = _aggregate(prefix)
        frames.append(points(per_pair, summary_, [], with_pairs=False))
    tidy = pd.concat(frames, ignore_index=True)
    comparison = compare(tidy, pd.read_csv(published, keep_default_na=False, na_values=[""]))
    write_csv(comparison, outputs["comparison"], float_format="%.4f")
    return comparison


def summary(comparisons: Sequence[str], outputs) -> pd.DataFrame:
    """All comparisons in one table, with the largest gap of each table."""
    frames = []
    for path in comparisons:
        df = pd.read_csv(path, keep_default_na=False, na_values=[""])
        df.insert(0, "table", Path(path).parent.name)
        df.insert(1, "file", str(path))
        frames.append(df)
    allc = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    write_csv(allc, outputs["csv"], float_format="%.4f")
    lines = [
        "# Published versus reproduced", "",
        "Comparable cells: per-pair cells, and means over the paper's 12 pairs; a mean",
        "over fewer pairs (data missing here) is listed in the CSV but not counted.", "",
        "| file | cells | comparable | mean abs. difference | max abs. difference | within 1.0 | within 2.5 |",
        "|---|---|---|---|---|---|---|",
    ]
    for path, g in allc.groupby("file", sort=False) if not allc.empty else []:
        diff = g.loc[g["comparable"].astype(str) == "True", "difference"].abs()
        stats = (f"{diff.mean():.2f} | {diff.max():.2f} | {(diff <= 1.0).sum()} | {(diff <= 2.5).sum()}"
                 if len(diff) else "- | - | - | -")
        lines.append(f"| {path} | {len(g)} | {len(diff)} | {stats} |")
    write_text(outputs["md"], "\n".join(lines) + "\n")
    return allc
