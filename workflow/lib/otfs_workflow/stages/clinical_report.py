"""Stage ``clinical`` reports: Table 4 and Figures 3 and 4 of the paper's section 5.2.

They read the voxel table and the runs of :mod:`otfs_workflow.stages.clinical`
only, so editing a table or a plot reruns no ranking or classification.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from otfs.datasets._clinical import (
    CLASS_NAMES,
    read_voxel_table,
    shifted_detection,
    summarise_counts,
)
from otfs_workflow.io import read_json, read_tsv, write_csv, write_text
from otfs_workflow.plotting import plot_accuracy_curves, plot_feature_distributions, plot_feature_similarity, save_outputs
from otfs_workflow.tables import render_latex, render_markdown


def table4(voxels, cfg: Mapping, outputs: Mapping, caption: str) -> pd.DataFrame:
    """Voxels per class and domain (Table 4), beside the paper's counts."""
    table = read_voxel_table(voxels)
    counts = summarise_counts(table)
    write_csv(counts, outputs["csv"])
    wide = pd.DataFrame(index=[*CLASS_NAMES, "Total"])
    for dom in dict.fromkeys(counts["domain"]):
        part = counts[counts["domain"] == dom].set_index("class")
        here = [int(part.loc[c, "voxels"]) for c in CLASS_NAMES]
        paper = [part.loc[c, "paper_voxels"] for c in CLASS_NAMES]
        wide[f"#voxels {dom}"] = [f"{v:,}" for v in [*here, sum(here)]]
        if not any(pd.isna(paper)):
            wide[f"paper {dom}"] = [f"{int(v):,}" for v in [*paper, sum(paper)]]
    write_text(outputs["md"], f"{caption}\n\n" + render_markdown(wide, "Class"))
    write_text(outputs["tex"], render_latex(wide, "Class", caption))
    return counts


def _figure_feature_picks(table, cfg: Mapping) -> tuple[int, int]:
    picks = cfg.get("figure3_features")
    if picks:
        names = list(table.feature_names)
        return tuple(names.index(p) if isinstance(p, str) else int(p) for p in picks)
    planted = table.meta.get("shifted_features") or []
    informative = set(table.meta.get("informative_features") or [])
    shifted = planted[0] if planted else 0
    others = [j for j in range(table.X.shape[1]) if j not in planted and j in informative] or \
        [j for j in range(table.X.shape[1]) if j != shifted]
    return shifted, others[0]


def figure3(voxels, cfg: Mapping, outputs: Mapping) -> pd.DataFrame:
    """Distributions of one shifted and one unshifted feature in both domains (Figure 3)."""
    table = read_voxel_table(voxels)
    picks = _figure_feature_picks(table, cfg)
    planted = set(table.meta.get("shifted_features") or [])
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    rows = []
    for ax, j in zip(axes, picks, strict=True):
        values = {cfg[r]: table.X[table.domain == cfg[r], j] for r in ("source", "target")}
        kind = "planted shifted" if j in planted else "shared"
        plot_feature_distributions(values, ax=ax, title=f"{table.feature_names[j]} ({kind})")
        for dom, v in values.items():
            q = np.quantile(v, [0.05, 0.25, 0.5, 0.75, 0.95])
            rows.append({"feature": table.feature_names[j], "kind": kind, "domain": dom, "mean": v.mean(),
                         "std": v.std(), "skewness": float(pd.Series(v).skew()),
                         **{f"q{int(100 * p):02d}": x for p, x in zip((.05, .25, .5, .75, .95), q, strict=True)}})
    title = "Figure 3: distributions of a shifted and an unshifted feature in the two domains"
    fig.suptitle(title)
    fig.tight_layout()
    save_outputs(fig, outputs, title)
    df = pd.DataFrame(rows)
    write_csv(df, outputs["csv"], float_format="%.5g")
    return df


def figure4(aggregates: Mapping[str, str], rankings: Sequence[str], outputs: Mapping) -> pd.DataFrame:
    """AUC curves per adapter (top) and the log-scaled coupling diagonal (bottom): Figure 4."""
    adapters = list(aggregates)
    fig = plt.figure(figsize=(6.0 * len(adapters), 8.0))
    grid = fig.add_gridspec(2, len(adapters), height_ratios=[1.6, 1.0])
    frames = []
    for k, (adapter, prefix) in enumerate(aggregates.items()):
        summary = read_tsv(f"{prefix}/summary.tsv")
        ax = fig.add_subplot(grid[0, k])
        plot_accuracy_curves(summary, ax=ax, title=adapter, value="auc", ylabel="Mean AUC over repetitions",
                             fmt=".3f")
        ax.axhline(0.5, color="red", linewidth=0.8, linestyle=":")
        frames.append(summary.assign(panel=adapter))
    runs = [read_json(p) for p in rankings]
    scores = np.array([r["scores"] for r in runs])
    planted = runs[0]["planted_shifted_features"]
    ax = fig.add_subplot(grid[1, :])
    plot_feature_similarity(scores, planted, ax=ax, names=runs[0]["feature_names"])
    detection = shifted_detection(scores, planted) if planted else None
    sub = f"{len(runs)} repetitions"
    if detection:
        sub += (f"; planted features lowest-scored in {detection['hits']} of {detection['repetitions']} "
                "repetitions")
    ax.set_title(f"Similarity of each feature across the domains ({sub})")
    title = "Figure 4: AUC against the number of selected features, and feature similarity"
    fig.suptitle(title)
    fig.tight_layout()
    save_outputs(fig, outputs, title)
    plotted = pd.concat(frames, ignore_index=True)
    sims = pd.DataFrame({"panel": "similarity", "feature": runs[0]["feature_names"],
                         "log10_score_mean": np.log10(scores).mean(axis=0),
                         "planted": [j in set(planted) for j in range(scores.shape[1])]})
    out = pd.concat([plotted, sims], ignore_index=True)
    write_csv(out, outputs["csv"], float_format="%.5g")
    return out

