"""Stage ``plotting``: the accuracy-curve figures (Figures 1, 2 and 7 of the paper)."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import pandas as pd

from ..io import atomic_path, read_json, read_tsv
from ..plotting import plot_accuracy_curves


def run(summary_path, provenance_path, outputs: Mapping[str, str], title: str) -> pd.DataFrame:
    """Draw one accuracy-curve panel; write PDF, PNG and the plotted numbers (CSV)."""
    summary = read_tsv(summary_path)
    prov = read_json(provenance_path)
    runs = prov["params"]
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    plot_accuracy_curves(summary, ax=ax, title=title)
    note = (
        f"{runs['pairs']} pairs x {runs['iterations']} iterations, "
        f"selection {runs['selection']}, adapter {runs['adapter']}, "
        f"otfs {prov['versions']['otfs']}, POT {prov['versions']['POT']}"
    )
    fig.text(0.01, 0.005, note, fontsize=6, color="0.4", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    metadata = {"Title": title, "Subject": note, "Creator": "otfs"}
    for key in ("pdf", "png"):
        with atomic_path(outputs[key]) as tmp:
            meta = {**metadata, "CreationDate": None} if key == "pdf" else {"Title": title, "Description": note}
            fig.savefig(tmp, format=key, dpi=150, metadata=meta)
    plt.close(fig)
    with atomic_path(outputs["csv"]) as tmp:
        summary.to_csv(tmp, index=False, float_format="%.4f")
    return summary
