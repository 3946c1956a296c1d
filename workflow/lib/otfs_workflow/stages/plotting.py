"""Stage ``plotting``: the paper's figures.

Figures 1, 2 and 7 are accuracy curves drawn from aggregated tables, so a
plotting change never recomputes an accuracy. Figures 5 and 6 are drawn
from toy data generated here.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import pandas as pd

from otfs.datasets import diamond_rings, gaussian_classes, moons_halves
from otfs_workflow.io import atomic_path, read_json, read_tsv, write_csv
from otfs_workflow.plotting import plot_accuracy_curves, plot_couplings, plot_selection
from otfs_workflow.provenance import package_versions


def _save(fig, outputs: Mapping[str, str], title: str, note: str) -> None:
    width = int(fig.get_figwidth() * 22)  # characters per line at this font size
    fig.text(0.01, 0.003, textwrap.fill(note, width), fontsize=6, color="0.4", ha="left",
             va="bottom")
    for key in ("pdf", "png"):
        meta = ({"Title": title, "Subject": note, "Creator": "otfs", "CreationDate": None}
                if key == "pdf" else {"Title": title, "Description": note})
        with atomic_path(outputs[key]) as tmp:
            fig.savefig(tmp, format=key, dpi=150, metadata=meta)
    plt.close(fig)


def _versions_note() -> str:
    v = package_versions()
    return f"otfs {v['otfs']}, POT {v['POT']}, scikit-learn {v['scikit-learn']}, numpy {v['numpy']}"


def curves(panels: Sequence[tuple[str, str]], outputs: Mapping[str, str], title: str) -> pd.DataFrame:
    """Accuracy-curve panels side by side; ``panels`` holds (aggregate folder, panel title).

    Writes PDF, PNG and a CSV of every plotted number (with a ``panel`` column).
    """
    fig, axes = plt.subplots(1, len(panels), figsize=(6.0 * len(panels), 5.0), squeeze=False,
                             sharey=True)
    frames, notes = [], []
    for ax, (prefix, panel_title) in zip(axes[0], panels, strict=True):
        summary = read_tsv(f"{prefix}/summary.tsv")
        runs = read_json(f"{prefix}/provenance.json")["params"]
        plot_accuracy_curves(summary, ax=ax, title=panel_title)
        frames.append(summary.assign(panel=panel_title))
        notes.append(f"{panel_title}: {runs['pairs']} pairs x {runs['iterations']} iterations")
    # a single panel is narrower than a long title: wrap it to the figure
    fig.suptitle(textwrap.fill(title, width=int(60 * len(panels))))
    note = "; ".join(notes) + f". Seeds from SHA-256(feature set|pair|iteration). {_versions_note()}"
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    _save(fig, outputs, title, note)
    plotted = pd.concat(frames, ignore_index=True)
    write_csv(plotted, outputs["csv"], float_format="%.4f")
    return plotted


def figure5(n_per_class: int, reg: float, eta: float, seed: int, outputs: Mapping[str, str]) -> dict:
    """OT, OT2 and OT3 couplings on the 3-class Gaussian toy (Supplementary A)."""
    from otfs.adapters import EMDAdapter, SinkhornAdapter, SinkhornLpl1Adapter  # POT only where needed

    Xs, ys, Xt, _ = gaussian_classes(n_per_class, random_state=seed)
    adapters = {
        "OT": EMDAdapter(),
        f"OT2 (reg={reg:g})": SinkhornAdapter(reg=reg, norm=None),
        f"OT3 (reg={reg:g}, eta={eta:g})": SinkhornLpl1Adapter(reg=reg, eta=eta, norm=None),
    }
    couplings = {}
    for name, adapter in adapters.items():
        adapter.adapt(Xs, ys, Xt)
        couplings[name] = adapter.coupling_
    fig, axes = plt.subplots(2, 3, figsize=(15, 10))
    plot_couplings(Xs, ys, Xt, couplings, axes[0], axes[1])
    title = "Figure 5: couplings of OT, OT2 and OT3 on a 3-class toy"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.02, 1, 0.97))
    _save(fig, outputs, title, f"{n_per_class} samples per class and domain, seed {seed}. {_versions_note()}")
    return couplings


def figure6(seed: int, outputs: Mapping[str, str]) -> dict:
    """OT versus 1NN target-sample selection on two toys (Supplementary B.1)."""
    from otfs.sample_selection import select_samples

    toys = {"diamonds": diamond_rings(), "moons": moons_halves(random_state=seed)}
    fig, axes = plt.subplots(2, 3, figsize=(15, 9))
    selected = {}
    for row, (name, (S, T)) in zip(axes, toys.items(), strict=True):
        picks = {
            "OT": select_samples(S, T, "ot").target_index,
            "1NN": select_samples(S, T, "1nn").target_index,
        }
        selected[name] = picks
        plot_selection(S, T, picks, row)
    for ax, label in zip(axes[0], ["Source and target", "Target selection OT", "Target selection 1NN"],
                         strict=True):
        ax.set_title(label)
    title = "Figure 6: target samples selected by OT and by 1NN"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.02, 1, 0.97))
    _save(fig, outputs, title, f"moons seed {seed}. {_versions_note()}")
    return selected
