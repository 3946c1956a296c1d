"""The paper's tables, built from aggregated results, and their comparison with it.

Every table exists in three forms: a tidy CSV (one row per published cell:
feature set, ranker, adapter, pair or ``Mean``, order, number of
features, accuracy, standard deviation, summed adaptation time), and wide
LaTeX and Markdown renderings laid out like the paper. The comparison joins
the tidy table with the numbers transcribed from the paper
(``data/paper/*.csv``) on those keys.

Orders are ``Descending`` (↘, the method), ``Ascending`` (↗) and ``All``
(every feature; the order is then irrelevant).

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.formatting import FEATURE_SET_NAMES

__all__ = [
    "FEATURE_SET_NAMES",
    "KEYS",
    "compare",
    "points",
    "render_latex",
    "render_markdown",
    "wide",
]

#: Columns identifying a cell of a table.
KEYS = ["feature_set", "ranker", "adapter", "pair", "order", "n_features"]
#: Adaptation pairs behind every "Mean" the paper publishes.
PAPER_PAIRS = 12
ARROWS = {"Descending": "↘", "Ascending": "↗", "All": ""}
SHORT = {"amazon": "A", "caltech10": "C", "dslr": "D", "webcam": "W"}
LATEX = {"↘": r"$\searrow$", "↗": r"$\nearrow$", "±": r"$\pm$", "→": r"$\rightarrow$",
         "%": r"\%", "_": r"\_", "&": r"\&"}


def pair_label(pair: str) -> str:
    """``amazon-caltech10`` as the paper writes it, ``A→C``; other names unchanged."""
    if pair == "Mean":
        return "Mean"
    s, t = pair.split("-")
    return f"{SHORT.get(s, s)}→{SHORT.get(t, t)}"


def points(
    per_pair: pd.DataFrame,
    summary: pd.DataFrame,
    counts: Sequence[int],
    orders: Sequence[str] = ("Descending", "Ascending"),
    with_pairs: bool = True,
    with_all: bool = True,
) -> pd.DataFrame:
    """Tidy table cells from one aggregate (a feature set, ranker, adapter, grid).

    Parameters
    ----------
    per_pair, summary : DataFrame
        Outputs of :func:`otfs_workflow.aggregation.per_pair_summary` and
        :func:`otfs_workflow.aggregation.mean_over_pairs`.
    counts : numbers of features of the ordered cells
    orders : orders of those cells
    with_pairs : include one row per pair (else only the ``Mean`` rows)
    with_all : add the all-features cell (``order="All"``, ``n_features=d``)

    Returns
    -------
    DataFrame with :data:`KEYS` and ``accuracy``, ``std``, ``seconds``,
    ``pairs`` (pairs in the mean) and ``iterations``.
    """
    d = int(summary["n_features"].max())
    wanted = [(o, int(n)) for n in counts for o in orders]
    if with_all:
        wanted.append(("All", d))
    frames = []
    sources = [("Mean", summary)] + ([("pair", per_pair)] if with_pairs else [])
    for kind, df in sources:
        for order, n in wanted:
            # all features: any order gives the same accuracy; take Ascending
            # as the released code does, else whatever order was evaluated
            pick_order = order
            if order == "All":
                present = set(df["order"])
                pick_order = "Ascending" if "Ascending" in present else sorted(present)[0]
            part = df[(df["order"] == pick_order) & (df["n_features"] == n)]
            if part.empty:
                raise ValueError(f"no result for order {pick_order} at {n} features")
            part = part.copy()
            part["order"] = order
            if kind == "Mean":
                part = part.assign(pair="Mean", iterations=np.nan).rename(
                    columns={"seconds_total": "seconds"}
                )
            else:
                part = part.rename(columns={"mean": "accuracy", "seconds_total": "seconds"})
                part["pairs"] = 1
            frames.append(part[[*KEYS, "accuracy", "std", "seconds", "pairs", "iterations"]])
    out = pd.concat(frames, ignore_index=True)
    pair_rank = {p: i for i, p in enumerate(sorted(set(out["pair"]) - {"Mean"}))}
    out["_pair"] = out["pair"].map(lambda p: pair_rank.get(p, len(pair_rank)))
    return out.sort_values(["_pair"], kind="stable").drop(columns="_pair").reset_index(drop=True)


def cell_label(order: str, n: int) -> str:
    """Column label of a cell: ``↘512``, ``↗512`` or ``4096``."""
    return f"{ARROWS[order]}{n}"


def wide(
    tidy: pd.DataFrame,
    row: Callable[[pd.Series], str],
    column: Callable[[pd.Series], str],
    with_seconds: bool = False,
) -> pd.DataFrame:
    """Lay tidy cells out as the paper does, each cell ``mean ± std``.

    ``row`` and ``column`` give each tidy row its row and column labels;
    with ``with_seconds`` every column gets a companion ``time (s)`` column.
    """
    records: dict[str, dict[str, str]] = {}
    columns: list[str] = []
    rows: list[str] = []
    for _, r in tidy.iterrows():
        rl, cl = row(r), column(r)
        if rl not in records:
            records[rl] = {}
            rows.append(rl)
        text = f"{r['accuracy']:.1f} ± {r['std']:.1f}" if np.isfinite(r["std"]) else f"{r['accuracy']:.1f}"
        cols = [(cl, text)]
        if with_seconds:
            cols.append((f"{cl} time (s)", f"{r['seconds']:.2f}"))
        for name, value in cols:
            if name not in columns:
                columns.append(name)
            records[rl][name] = value
    return pd.DataFrame([records[r] for r in rows], index=rows, columns=columns).fillna("")


def render_markdown(df: pd.DataFrame, index_name: str = "") -> str:
    """A GitHub-flavoured Markdown table."""
    header = [index_name, *map(str, df.columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, values in df.iterrows():
        lines.append("| " + " | ".join([str(label), *map(str, values)]) + " |")
    return "\n".join(lines) + "\n"


def _latex(text: str) -> str:
    for k, v in LATEX.items():
        text = text.replace(k, v)
    return text


def render_latex(df: pd.DataFrame, index_name: str = "", caption: str | None = None) -> str:
    """A LaTeX ``tabular`` (wrapped in ``table`` with a caption if given)."""
    spec = "l|" + "c" * len(df.columns)
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\hline"]
    lines.append(" & ".join(_latex(str(c)) for c in [index_name, *df.columns]) + r" \\")
    lines.append(r"\hline")
    for label, values in df.iterrows():
        if label == "Mean":
            lines.append(r"\hline")
        lines.append(" & ".join(_latex(str(c)) for c in [label, *values]) + r" \\")
    lines += [r"\hline", r"\end{tabular}"]
    body = "\n".join(lines)
    if caption:
        body = "\\begin{table}\n\\centering\n" + body + f"\n\\caption{{{_latex(caption)}}}\n\\end{{table}}"
    return body + "\n"


def render_blocks(blocks, caption: str, index_name: str = "") -> tuple[str, str]:
    """Markdown and LaTeX of several titled tables under one caption.

    ``blocks`` holds ``(title, table)`` pairs. The Markdown gives the caption
    once, then each title in bold above its table; the LaTeX gives each table
    its own ``table`` environment captioned ``"<title>. <caption>"``.
    """
    md = [caption, ""]
    tex = []
    for title, table in blocks:
        md += [f"**{title}**", "", render_markdown(table, index_name), ""]
        tex.append(render_latex(table, index_name, f"{title}. {caption}"))
    return "\n".join(md), "\n\n".join(tex)


def compare(reproduced: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Published beside reproduced numbers, for every cell present in both.

    Returns one row per cell with ``published``, ``reproduced``,
    ``difference`` (reproduced minus published), both standard deviations,
    both summed times when published, ``pairs``: how many pairs the
    reproduced number averages, and ``comparable``: False for a ``Mean``
    over fewer pairs than the paper's 12, which is not the same quantity.
    """
    pub = published.rename(
        columns={"accuracy": "published", "std": "published_std", "seconds": "published_seconds"}
    )
    rep = reproduced.rename(
        columns={"accuracy": "reproduced", "std": "reproduced_std", "seconds": "reproduced_seconds"}
    )
    pub = pub.assign(n_features=pub["n_features"].astype(int))
    rep = rep.assign(n_features=rep["n_features"].astype(int))
    merged = rep.merge(pub.drop(columns=["table"], errors="ignore"), on=KEYS, how="inner")
    merged["difference"] = merged["reproduced"] - merged["published"]
    merged["comparable"] = (merged["pair"] != "Mean") | (merged["pairs"] == PAPER_PAIRS)
    cols = [*KEYS, "published", "reproduced", "difference", "published_std", "reproduced_std",
            "pairs", "comparable"]
    if merged["published_seconds"].notna().any():
        cols += ["published_seconds", "reproduced_seconds"]
    return merged[cols].reset_index(drop=True)
