"""Stage ``boosting`` reports: the test-error table and the paper's Figure 3.

They read the runs of :mod:`otfs_workflow.stages.boosting` only, so editing a table
or a plot reruns no boosting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from otfs_workflow.io import read_tsv, write_csv, write_json, write_text
from otfs_workflow.stages.boosting import BASELINES, FIXED
from otfs_workflow.tables import pair_label, render_blocks


def summarise(inputs: Sequence[str]) -> pd.DataFrame:
    """Median and quartiles of the test error per (pair, task, method, count) over the repetitions."""
    df = pd.concat([read_tsv(p) for p in inputs], ignore_index=True)
    q = df.groupby(["pair", "task", "method", "n_labelled"])["error"]
    out = pd.DataFrame({"median": q.median(), "q1": q.quantile(0.25), "q3": q.quantile(0.75),
                        "repetitions": q.size()}).reset_index()
    return out


def _caption(cfg: Mapping, feature_set: str, reps: int) -> str:
    model = cfg["model"]
    return (f"Non-linear domain adaptation with boosting (Becker et al.), {feature_set}, balanced binary tasks: "
            f"test error (%) on held-out target samples against the number of labelled target samples, median and "
            f"quartiles over {reps} repetitions. Trees of depth {model['max_depth']}, shrinkage "
            f"{model['learning_rate']}, K = {model['n_estimators']} for every boosted method; SD only and Full TD "
            "do not depend on the count. OT ranking + adapter: the top "
            f"{cfg['ot_features']} features of the pair's OT ranking, adaptation and 1-NN, with no target label.")


def table(inputs: Sequence[str], cfg: Mapping, feature_set: str, outputs: Mapping, provenance: Mapping):
    """Median test errors: one row per (pair, task, method), one column per count."""
    summary = summarise(inputs)
    write_csv(summary, outputs["csv"])
    reps = int(summary["repetitions"].max())
    blocks = []
    for (pair, task), part in summary.groupby(["pair", "task"], sort=False):
        wide = part.pivot(index="method", columns="n_labelled", values="median")
        counts = [c for c in wide.columns if c >= 0]
        shown = pd.DataFrame(index=wide.index)
        for c in counts:
            shown[str(c)] = wide[c]
        fixed = wide[-1].dropna() if -1 in wide.columns else pd.Series(dtype=float)
        for method, value in fixed.items():
            shown.loc[method, :] = value
        per_count = (*cfg["methods"], *BASELINES)
        order = [m for m in (*per_count, *FIXED) if m in shown.index] + sorted(
            m for m in shown.index if m not in (*per_count, *FIXED))
        shown = shown.loc[order].map(lambda v: f"{v:.1f}")
        title = f"{pair_label(pair)}, task {task}"
        blocks.append((title, shown))
    caption = _caption(cfg, feature_set, reps) + " Columns: labelled target samples; cells: median error."
    md, tex = render_blocks(blocks, caption, "Method")
    write_text(outputs["md"], md)
    write_text(outputs["tex"], tex)
    write_json(outputs["provenance"], provenance)
    return summary


def figure(inputs: Sequence[str], cfg: Mapping, feature_set: str, outputs: Mapping) -> pd.DataFrame:
    """The analogue of the paper's Figure 3: median and quartile band per method against the count."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    from otfs_workflow.plotting import save_outputs  # sets the Agg backend

    summary = summarise(inputs)
    panels = list(summary.groupby(["pair", "task"], sort=False))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels) + 2.0, 4.2), squeeze=False)
    per_count = (*cfg["methods"], *BASELINES)
    colours = {"Pooling": "C0", "TD only": "C2", "SD only": "C1", "Full TD": "k"}
    spare = iter(["C3", "C4", "C6", "C8", "C9"])
    colours.update({m: next(spare, "C7") for m in cfg["methods"]})
    for ax, ((pair, task), part) in zip(axes[0], panels, strict=True):
        counts = sorted(c for c in part["n_labelled"].unique() if c >= 0)
        for method in per_count:
            s = part[part["method"] == method].sort_values("n_labelled")
            ax.plot(s["n_labelled"], s["median"], "o-", color=colours[method], label=method)
            ax.fill_between(s["n_labelled"], s["q1"], s["q3"], color=colours[method], alpha=0.15)
        fixed = part[part["n_labelled"] < 0]
        styles = iter(["--", ":", "-.", (0, (5, 1)), (0, (1, 1)), (0, (3, 1, 1, 1))])
        for _, row in fixed.iterrows():
            colour = colours.get(row["method"], "0.4")
            ax.plot([counts[0], counts[-1]], [row["median"]] * 2, linestyle=next(styles), color=colour,
                    label=row["method"])
        ax.set_xscale("log")
        ax.set_xticks(counts, [str(c) for c in counts])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("labelled target samples")
        ax.set_ylabel("test error (%)")
        ax.set_title(f"{pair_label(pair)}: {task}", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0, -1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(f"Boosting for domain adaptation, {feature_set} (median, quartiles over "
                 f"{int(summary['repetitions'].max())} repetitions)", fontsize=10)
    fig.tight_layout()
    save_outputs(fig, outputs, f"Boosting for domain adaptation, {feature_set}")
    write_csv(summary, outputs["csv"])
    return summary
