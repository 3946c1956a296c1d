"""Figures of the paper, drawn from the aggregated results."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["ORDER_STYLES", "plot_accuracy_curves"]

#: Line style of each feature order (the paper: dashed grey, dash-dot black).
ORDER_STYLES = {
    "Descending": {"color": "black", "linestyle": "-.", "marker": "o"},
    "Ascending": {"color": "0.45", "linestyle": "--", "marker": "v"},
    "Random": {"color": "0.7", "linestyle": "--", "marker": "s"},
}


def plot_accuracy_curves(summary: pd.DataFrame, ax=None, title: str | None = None):
    """Mean accuracy against the number of selected features, one line per order.

    Parameters
    ----------
    summary : DataFrame
        Output of :func:`otfs.aggregation.mean_over_pairs` for one feature
        set, selection strategy and adapter.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib Axes
    """
    if summary.empty:
        raise ValueError("nothing to plot: the summary table is empty")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.8))
    d = int(summary["n_features"].max())
    for order, style in ORDER_STYLES.items():
        part = summary[summary["order"] == order].sort_values("n_features")
        if part.empty:
            continue
        ax.plot(part["n_features"], part["accuracy"], label=order, linewidth=2, markersize=4, **style)
    at_d = summary.loc[summary["n_features"] == d, "accuracy"]
    all_features = float(np.mean(at_d))
    ax.axhline(all_features, color="slategray", linewidth=2.5, label=f"All features ({all_features:.1f})")
    ax.set_xlim(0, d)
    ax.set_xticks([d // 4, d // 2, 3 * d // 4, d])
    ax.set_xlabel("Number of features selected")
    ax.set_ylabel("Mean accuracy over pairs (%)")
    ax.grid(True, alpha=0.4)
    ax.legend(ncol=2, fontsize="small")
    if title:
        ax.set_title(title)
    return ax
