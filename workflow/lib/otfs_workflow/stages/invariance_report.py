"""Stage ``invariance`` reports: the table of selectors and the Pareto front (Figure 3).

They read the runs of :mod:`otfs_workflow.stages.invariance` only, so editing a
table or a plot reruns no search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.io import read_json, write_csv, write_json, write_text
from otfs_workflow.tables import pair_label, render_latex, render_markdown

#: The selectors of the table, in its column order (as the runs name them).
SELECTORS = ("invariant", "relevance", "knee", "OT ranking")


def _caption(cfg: Mapping, feature_set: str) -> str:
    return (f"{feature_set}, m = {int(cfg['n_features'])} features; the relevant-and-invariant selector uses "
            f"{int(cfg['target_per_class'])} labelled target samples per class (the OT ranking uses none); "
            "1-NN trained on the source samples, accuracies (%) on the held-out source and target samples")


def table(inputs: Sequence[str], cfg: Mapping, outputs: Mapping, provenance: Mapping) -> pd.DataFrame:
    """Source and target accuracy of the chosen subset against relevance-only, knee and OT ranking."""
    rows, feature_sets = [], []
    for path in inputs:
        rec = read_json(path)
        feature_sets.append(rec["feature_set"])
        for r in rec["records"]:
            rows.append({"pair": rec["pair"], **{k: v for k, v in r.items() if k != "features"}})
    df = pd.DataFrame(rows)
    mean = df.groupby(["pair", "selector"])[["source_accuracy", "target_accuracy", "relevance", "invariance"]].mean()
    write_csv(mean.reset_index(), outputs["csv"])
    wide = pd.DataFrame(index=[*dict.fromkeys(df["pair"]), "Mean"])
    for name in SELECTORS:
        part = mean.xs(name, level="selector")
        for col, short in (("source_accuracy", "source"), ("target_accuracy", "target")):
            values = [*part.loc[wide.index[:-1], col], part[col].mean()]
            wide[f"{name} {short}"] = [f"{v:.1f}" for v in values]
    wide.index = [pair_label(p) if p != "Mean" else p for p in wide.index]
    feature_set = ", ".join(dict.fromkeys(feature_sets))
    caption = ("Relevant and invariant feature selection (Persello & Bruzzone): " + _caption(cfg, feature_set)
               + f"; mean over {df['iteration'].nunique()} iterations. invariant: the front's subset with the best "
               "accuracy on the labelled target samples (the paper's rule); relevance: the front's largest HSIC; "
               "knee: the front's knee; OT ranking: the top m features of Algorithm 2.")
    write_text(outputs["md"], f"{caption}\n\n" + render_markdown(wide, "Pair"))
    write_text(outputs["tex"], render_latex(wide, "Pair", caption))
    write_json(outputs["provenance"], provenance)
    return mean


def figure3(path, cfg: Mapping, outputs: Mapping) -> pd.DataFrame:
    """The estimated Pareto front coloured by source (a) and target (b) test accuracy, as the paper's Figure 3."""
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_outputs  # sets the Agg backend

    rec = read_json(path)
    front = rec["fronts"][0]
    F = np.asarray(front["objectives"])
    acc = np.asarray(front["accuracy"])
    df = pd.DataFrame({"minus_relevance": F[:, 0], "invariance": F[:, 1], "source_accuracy": acc[:, 0],
                       "target_accuracy": acc[:, 1], "chosen": np.arange(len(F)) == front["chosen"]})
    write_csv(df, outputs["csv"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, col, title in zip(axes, ("source_accuracy", "target_accuracy"),
                              ("a) source test accuracy", "b) target test accuracy"), strict=True):
        sc = ax.scatter(df["minus_relevance"], df["invariance"], c=df[col], cmap="viridis", s=30)
        ch = df[df["chosen"]]
        ax.scatter(ch["minus_relevance"], ch["invariance"], facecolors="none", edgecolors="red", s=120,
                   label="chosen (best labelled-target accuracy)")
        fig.colorbar(sc, ax=ax, label="1-NN accuracy (%)")
        ax.set_xlabel("-R (HSIC relevance)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("Θ (conditional shift)")
    axes[0].legend(loc="upper right", fontsize=8)
    fig.suptitle(f"Pareto front, {pair_label(rec['pair'])}, m = {rec['n_features']} "
                 f"({rec['target_per_class']} labelled target samples per class)", fontsize=10)
    fig.tight_layout()
    save_outputs(fig, outputs, "Persello & Bruzzone Figure 3")
    return df
