"""Stage ``semfs`` reports: the clustering table and the paper's Figures 4 and 5.

They read the runs of :mod:`otfs_workflow.stages.semfs` only, so editing a table or
a plot reruns no selection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from otfs_workflow.io import read_tsv, write_csv, write_json, write_text
from otfs_workflow.tables import render_blocks


def summarise(inputs: Sequence[str]) -> pd.DataFrame:
    df = pd.concat([read_tsv(p) for p in inputs], ignore_index=True)
    g = df.groupby(["feature_set", "domain", "method", "n_features"])
    return pd.DataFrame({"acc": g["acc"].mean(), "acc_sd": g["acc"].std(ddof=0), "nmi": g["nmi"].mean(),
                         "nmi_sd": g["nmi"].std(ddof=0), "splits": g.size()}).reset_index()


def _caption(cfg: Mapping, splits: int) -> str:
    return (f"Zero-shot feature selection (SemFS, Wang et al.) on Office-Caltech: features selected on the seen "
            f"classes only, then k-means on the samples of {cfg['n_unseen']} unseen classes ({cfg['restarts']} "
            f"restarts); mean over {splits} random seen/unseen splits. SemFS alpha = {cfg['alpha']}, gamma = "
            f"{cfg['gamma']}; SemFS/c: alpha = 0. Attributes: data/attributes/office-caltech10.tsv (hand-authored). "
            "OT ranking: Algorithm 2 between the seen-class samples of the other domain and this one.")


def table(inputs: Sequence[str], cfg: Mapping, outputs: Mapping, provenance: Mapping) -> pd.DataFrame:
    """ACC and NMI (%) averaged over the counts, per domain and method, plus ACC at each count."""
    summary = summarise(inputs)
    write_csv(summary, outputs["csv"])
    splits = int(summary["splits"].max())
    caption = (_caption(cfg, splits) + " Cells: ACC / NMI (%) averaged over the numbers of features, then ACC at "
               "each number.")
    blocks = []
    for (fs, domain), part in summary.groupby(["feature_set", "domain"], sort=False):
        mean = part.groupby("method")[["acc", "nmi"]].mean()
        wide = part.pivot(index="method", columns="n_features", values="acc")
        shown = pd.DataFrame(index=[m for m in cfg["methods"] if m in wide.index])
        shown["ACC / NMI (mean)"] = [f"{mean.loc[m, 'acc']:.1f} / {mean.loc[m, 'nmi']:.1f}" for m in shown.index]
        for k in wide.columns:
            shown[f"ACC@{k}"] = [f"{wide.loc[m, k]:.1f}" for m in shown.index]
        blocks.append((f"{fs}, {domain}", shown))
    md, tex = render_blocks(blocks, caption, "Method")
    write_text(outputs["md"], md)
    write_text(outputs["tex"], tex)
    write_json(outputs["provenance"], provenance)
    return summary


def figure(inputs: Sequence[str], cfg: Mapping, outputs: Mapping) -> pd.DataFrame:
    """ACC (top row) and NMI (bottom row) against the number of selected features, one column per domain."""
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_outputs  # sets the Agg backend

    summary = summarise(inputs)
    panels = list(summary.groupby(["feature_set", "domain"], sort=False))
    fig, axes = plt.subplots(2, len(panels), figsize=(4.6 * len(panels) + 1.8, 7.0), squeeze=False)
    marks = iter(["o-", "s--", "^-", "v-", "D-", "x:", "P-", "*-", "h--"])
    styles = {m: next(marks, ".-") for m in cfg["methods"]}
    for j, ((fs, domain), part) in enumerate(panels):
        for i, (metric, label) in enumerate((("acc", "ACC (%)"), ("nmi", "NMI (%)"))):
            ax = axes[i, j]
            for method in cfg["methods"]:
                s = part[part["method"] == method].sort_values("n_features")
                if s.empty:
                    continue
                ax.plot(s["n_features"], s[metric], styles[method], ms=4, label=method)
            ax.set_xlabel("selected features")
            ax.set_ylabel(label)
            ax.set_title(f"{fs}, {domain}", fontsize=10)
            ax.grid(alpha=0.3)
    axes[0, -1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(f"Zero-shot feature selection: k-means on {cfg['n_unseen']} unseen classes "
                 f"(mean over {int(summary['splits'].max())} splits)", fontsize=10)
    fig.tight_layout()
    save_outputs(fig, outputs, "Zero-shot feature selection (SemFS)")
    write_csv(summary, outputs["csv"])
    return summary
