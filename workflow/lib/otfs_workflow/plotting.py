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


def plot_accuracy_curves(summary: pd.DataFrame, ax=None, title: str | None = None, value: str = "accuracy",
                         ylabel: str = "Mean accuracy over pairs (%)", fmt: str = ".1f"):
    """Mean accuracy against the number of selected features, one line per order.

    Parameters
    ----------
    summary : DataFrame
        Output of :func:`otfs_workflow.aggregation.mean_over_pairs` for one feature
        set, selection strategy and adapter.
    ax : matplotlib Axes, optional
    title : str, optional
    value : str
        Column plotted (``accuracy``, or ``auc`` for the clinical experiment).
    ylabel : str
    fmt : str
        Format of the all-features value in the legend.

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
        ax.plot(part["n_features"], part[value], label=order, linewidth=2, markersize=4, **style)
    at_d = summary.loc[summary["n_features"] == d, value]
    all_features = float(np.mean(at_d))
    ax.axhline(all_features, color="slategray", linewidth=2.5, label=f"All features ({all_features:{fmt}})")
    ax.set_xlim(0, d)
    ax.set_xticks([d // 4, d // 2, 3 * d // 4, d])
    ax.set_xlabel("Number of features selected")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.4)
    ax.legend(ncol=2, fontsize="small")
    if title:
        ax.set_title(title)
    return ax


def plot_couplings(Xs, ys, Xt, couplings: dict, axes_matrix, axes_points, top: int | None = None):
    """Figure 5: each coupling as a matrix (top row) and as segments (bottom row).

    Parameters
    ----------
    Xs, ys, Xt : source samples, source labels, target samples (2-D)
    couplings : mapping of name to coupling matrix (n_source, n_target)
    axes_matrix, axes_points : sequences of Axes, one per coupling
    top : int, optional
        Segments drawn per source sample (its largest couplings); all by default.
    """
    colours = np.array(["#0088FF", "#FF8800", "#00AA66"])
    classes = np.unique(ys)
    cidx = np.searchsorted(classes, ys)
    for (name, G), axm, axp in zip(couplings.items(), axes_matrix, axes_points, strict=True):
        im = axm.imshow(G, cmap="Blues", aspect="equal", interpolation="none")
        axm.set_title(f"Coupling with {name}")
        axm.set_xlabel("target sample")
        axm.set_ylabel("source sample")
        plt.colorbar(im, ax=axm, orientation="horizontal", format="%.1e", fraction=0.05,
                     ticks=[float(G.min()), float(G.max())])
        k = G.shape[1] if top is None else top
        best = np.argsort(-G, axis=1)[:, :k]
        gmax = G.max()
        for i in range(G.shape[0]):
            for j in best[i]:
                alpha = float(G[i, j] / gmax) / 2
                if alpha > 1e-3:
                    axp.plot([Xs[i, 0], Xt[j, 0]], [Xs[i, 1], Xt[j, 1]], color=colours[cidx[i] % 3],
                             alpha=alpha, zorder=0, linewidth=1)
        axp.scatter(Xs[:, 0], Xs[:, 1], c=colours[cidx % 3], marker="o", edgecolor="black",
                    s=40, zorder=2, label="Source")
        axp.scatter(Xt[:, 0], Xt[:, 1], c="white", marker="P", edgecolor="black", s=50, zorder=3,
                    label="Target")
        axp.set_xticks([0, 2])
        axp.legend(loc="lower left", fontsize="small")


def plot_selection(S, T, selected: dict, axes):
    """Figure 6: source and target, then the target samples each strategy selects."""
    first, *rest = axes
    first.scatter(T[:, 0], T[:, 1], marker="+", color="tab:blue", label="Target")
    first.scatter(S[:, 0], S[:, 1], marker="o", color="tab:orange", s=14, label="Source")
    first.legend(loc="upper right", fontsize="small")
    for ax, (name, idx) in zip(rest, selected.items(), strict=True):
        chosen, counts = np.unique(idx, return_counts=True)
        ax.scatter(T[:, 0], T[:, 1], marker="+", color="0.85")
        ax.scatter(T[chosen, 0], T[chosen, 1], marker="+", color="tab:blue", s=20 + 25 * counts,
                   label=f"{name}: {chosen.size} distinct of {len(idx)}")
        ax.legend(loc="upper right", fontsize="small")
    lims = (min(S[:, 0].min(), T[:, 0].min()), max(S[:, 0].max(), T[:, 0].max()),
            min(S[:, 1].min(), T[:, 1].min()), max(S[:, 1].max(), T[:, 1].max()))
    pad = 0.08 * max(lims[1] - lims[0], lims[3] - lims[2])
    for ax in axes:
        ax.set_xlim(lims[0] - pad, lims[1] + pad)
        ax.set_ylim(lims[2] - pad, lims[3] + pad)
        ax.set_xticks([])
        ax.set_yticks([])


def plot_feature_similarity(scores: np.ndarray, planted=(), ax=None, names=None):
    """Log-scaled coupling diagonal of every feature (Figure 4, bottom row).

    ``scores`` has one row per repetition (or is one vector); the dots show
    the mean of ``log10`` of the diagonal and the lines its range. The
    ``planted`` features (known shifted ones, for synthetic data) are drawn
    in red.
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    logs = np.log10(scores)
    mean, low, high = logs.mean(axis=0), logs.min(axis=0), logs.max(axis=0)
    d = mean.size
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 3))
    colors = np.array(["0.55"] * d, dtype=object)
    planted = [int(j) for j in planted]
    colors[planted] = "tab:red"
    x = np.arange(1, d + 1)
    ax.vlines(x, low, high, color=list(colors), linewidth=1.0)
    ax.scatter(x, mean, c=list(colors), s=12, zorder=3)
    for j in planted:
        label = names[j] if names is not None else str(j + 1)
        ax.annotate(label, (j + 1, low[j]), textcoords="offset points", xytext=(0, -10), ha="center",
                    fontsize="x-small", color="tab:red")
    ax.set_xlim(0, d + 1)
    ax.set_xlabel("Feature")
    ax.set_ylabel("log10 coupling diagonal")
    if planted:
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(color="tab:red", label="planted shifted features"),
                           Patch(color="0.55", label="other features")], fontsize="small", loc="lower right")
    return ax


def plot_feature_distributions(values: dict, ax=None, title: str | None = None, bins: int = 60):
    """Histograms (densities) of one feature in several domains (Figure 3)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    allv = np.concatenate([np.asarray(v, dtype=np.float64) for v in values.values()])
    lo, hi = np.quantile(allv, [0.005, 0.985])  # a long tail would squash the bulk
    edges = np.linspace(lo, hi, bins + 1)
    for (name, v), color in zip(values.items(), ["tab:blue", "tab:orange", "tab:green"], strict=False):
        ax.hist(np.clip(v, lo, hi), bins=edges, density=True, histtype="stepfilled", alpha=0.45, color=color,
                label=name)
    ax.set_ylabel("Density")
    ax.set_xlabel("Feature value (tails clipped into the edge bins)")
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return ax


def save_outputs(fig, outputs, title: str, dpi: int = 150, keys=(("pdf", "pdf"), ("png", "png"))) -> None:
    """Write ``fig`` to ``outputs[key]`` in each ``(key, format)`` of ``keys``, atomically, titled, then close it.

    The PDF carries no creation date, so a rerun writes the same bytes.
    """
    from otfs_workflow.io import atomic_path

    for key, fmt in keys:
        meta = {"Title": title, "Creator": "otfs", "CreationDate": None} if fmt == "pdf" else {"Title": title}
        with atomic_path(outputs[key]) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi, metadata=meta)
    plt.close(fig)


def save_figure(fig, path, formats=("pdf", "png"), dpi: int = 150) -> None:
    """Write ``fig`` next to ``path`` once per format (``path`` with each suffix), atomically."""
    from pathlib import Path

    from otfs_workflow.io import atomic_path

    for fmt in formats:
        with atomic_path(Path(path).with_suffix(f".{fmt}")) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi)
