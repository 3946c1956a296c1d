"""Where the pipeline's time goes: the rules' ``benchmark:`` files, aggregated.

Every rule writes Snakemake's benchmark record (wall seconds, peak resident
memory, CPU time) to ``logs/benchmarks/<stage>/...tsv``. This module reads
them all, groups them by rule (and, for the classification rule, by
adapter), and reports per group the number of jobs, the summed, median and
largest wall time and the largest peak memory: the figures the rules'
``runtime`` and ``mem_mb`` resources are declared from.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from otfs_workflow.io import write_csv

__all__ = ["collect_benchmarks", "plot_profile", "summarise"]


def _group(rel: Path) -> str:
    """The rule (``logs/benchmarks/<rule>/...``); classification jobs also by adapter."""
    parts = rel.parts
    if parts[0] == "classify" and len(parts) >= 5:
        return f"classify {parts[3]}"  # classify/<fs>/<selection>/<adapter>/...
    return parts[0]


def collect_benchmarks(root="logs/benchmarks") -> pd.DataFrame:
    """One row per benchmark file: ``group``, ``file``, ``seconds``, ``max_rss_mb``, ``cpu_seconds``."""
    root = Path(root)
    rows = []
    for path in sorted(root.rglob("*.tsv")):
        try:
            rec = pd.read_csv(path, sep="\t")
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: not a Snakemake benchmark file ({err})") from None
        if "s" not in rec.columns or rec.empty:
            raise ValueError(f"{path}: not a Snakemake benchmark file (no 's' column)")
        rel = path.relative_to(root)
        last = rec.iloc[-1]
        rss = pd.to_numeric(last.get("max_rss", np.nan), errors="coerce")
        cpu = pd.to_numeric(last.get("cpu_time", np.nan), errors="coerce")
        rows.append({"group": _group(rel), "file": str(rel), "seconds": float(last["s"]),
                     "max_rss_mb": float(rss), "cpu_seconds": float(cpu)})
    return pd.DataFrame(rows, columns=["group", "file", "seconds", "max_rss_mb", "cpu_seconds"])


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Per group: jobs, total/median/max wall seconds, max peak memory, share of the total time."""
    g = df.groupby("group")
    out = pd.DataFrame({
        "jobs": g.size(),
        "total_s": g["seconds"].sum(),
        "median_s": g["seconds"].median(),
        "max_s": g["seconds"].max(),
        "max_rss_mb": g["max_rss_mb"].max(),
        "cpu_s": g["cpu_seconds"].sum(),
    }).reset_index()
    out["share"] = out["total_s"] / out["total_s"].sum()
    return out.sort_values("total_s", ascending=False, ignore_index=True)


def plot_profile(summary: pd.DataFrame, path) -> None:
    """Bars of summed job time per group, annotated with jobs and peak memory."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_figure

    fig, ax = plt.subplots(figsize=(8, 0.35 * len(summary) + 1.5))
    y = np.arange(len(summary))
    ax.barh(y, summary["total_s"], color="tab:blue")
    for i, r in summary.iterrows():
        ax.text(r["total_s"], i, f"  {r['jobs']} jobs, {100 * r['share']:.0f}%, peak {r['max_rss_mb']:.0f} MB",
                va="center", fontsize=7)
    ax.set_yticks(y, summary["group"])
    ax.invert_yaxis()
    ax.set_xlabel("summed wall time of the jobs (s)")
    ax.set_xlim(0, summary["total_s"].max() * 1.6 if len(summary) else 1)
    ax.set_title("Where the pipeline's time goes (rules' benchmark files)")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs_workflow.time_profile", description=__doc__.split("\n")[0])
    parser.add_argument("--root", default="logs/benchmarks")
    parser.add_argument("--out", default="results/benchmarks")
    args = parser.parse_args(argv)
    df = collect_benchmarks(args.root)
    if df.empty:
        raise SystemExit(f"no benchmark files under {args.root}: run some targets first")
    summary = summarise(df)
    out = Path(args.out)
    write_csv(summary, out / "pipeline_profile.csv", float_format="%.4g")
    plot_profile(summary, out / "pipeline_profile.pdf")
    print(summary.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
