"""Run the benchmark suite and write its table, figure and provenance.

``python -m otfs_benchmarks --out results/benchmarks`` (or ``make bench``)
runs every case of :func:`otfs_benchmarks.cases.make_cases` and the ranking
orders of the real runs, prints the table, and writes
``benchmarks.csv``, ``benchmarks.md``, ``ranking_orders.csv``,
``benchmarks.{pdf,png}``, ``provenance.json`` and pytest-benchmark's own record,
``pytest_benchmark.json`` (``pytest-benchmark compare`` compares two of them).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

import pandas as pd

from otfs_benchmarks.cases import make_cases, ranking_orders
from otfs_benchmarks.harness import measure
from otfs_workflow.io import write_csv, write_json, write_text
from otfs_workflow.provenance import package_versions

__all__ = ["main", "markdown_table", "plot_ratios", "run_suite"]

TABLE_COLUMNS = [
    ("case", "case"), ("shape", "data"), ("otfs_s", "otfs (s)"), ("reference_s", "reference (s)"),
    ("ratio", "ratio"), ("skada_s", "skada (s)"), ("otfs_peak_mb", "otfs peak (MB)"),
    ("reference_peak_mb", "reference peak (MB)"), ("difference", "difference"),
    ("goal", "goal"), ("met", "met"), ("note", "note"),
]


def run_suite(size="full", only=None, repeats=None, max_seconds=20.0, json_path=None, log=print) -> pd.DataFrame:
    """Measure every case (or those whose name contains one of ``only``).

    ``json_path``, where given, gets pytest-benchmark's record of the timings.
    """
    cases = [case for case in make_cases(size)
             if not only or any(o.lower() in case.name.lower() for o in only)]
    with tempfile.TemporaryDirectory(prefix="otfs-bench-") as workdir:
        rows = measure(cases, repeats=repeats, max_seconds=max_seconds, json_path=json_path, workdir=workdir,
                       log=log)
    return pd.DataFrame(rows)


def _fmt(value, column):
    if isinstance(value, float):
        if value != value:  # NaN
            return ""
        if column == "difference":
            return "0" if value == 0 else f"{value:.1e}"
        if column.endswith("_s"):
            return f"{value:.4f}" if value < 1 else f"{value:.2f}"
        if column == "ratio":
            return f"{value:.1f}x"
        return f"{value:.0f}"
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    return str(value)


def markdown_table(df: pd.DataFrame) -> str:
    """The results as a Markdown table."""
    cols = [(c, h) for c, h in TABLE_COLUMNS if c in df.columns]
    lines = ["| " + " | ".join(h for _, h in cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_fmt(r[c], c) for c, _ in cols) + " |")
    return "\n".join(lines) + "\n"


def plot_ratios(df: pd.DataFrame, path) -> None:
    """Horizontal bars of the speed ratio of every case, with its goal."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_figure

    fig, ax = plt.subplots(figsize=(7, 0.4 * len(df) + 1.2))
    y = range(len(df))
    colours = ["tab:green" if m else "tab:red" for m in df["met"]]
    ax.barh(list(y), df["ratio"], color=colours)
    if "skada_ratio" in df:
        ax.scatter(df["skada_ratio"], list(y), marker="D", color="k", s=14, label="skada", zorder=3)
    for i, goal in enumerate(df["goal"]):
        digits = "".join(ch for ch in str(goal).split("x")[0] if ch.isdigit() or ch == ".")
        if digits:
            ax.plot([float(digits)] * 2, [i - 0.4, i + 0.4], color="k", lw=1.5)
    ax.set_yticks(list(y), df["case"])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("speed-up over the straightforward implementation (log scale; bar: goal)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def _write_csv(df, path):
    write_csv(df, path, float_format="%.6g")


def write_suite(out, *, size="full", only=None, repeats=None, order_check=("surf", "GoogleNet1024"),
                cache_root="data/cache", iterations=19, per_class=20, per_class_overrides=None,
                require_goals=False, log=print) -> int:
    """Run the suite and the order check; write every output under ``out``; return an exit status.

    The status is 1 when an implementation's results differ from the
    reference's (a bug), or, with ``require_goals``, when a speed goal is
    not met at the full sizes; the table reports both either way.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    threads = os.environ.get("OMP_NUM_THREADS") or os.environ.get("OPENBLAS_NUM_THREADS") or "default"
    log(f"otfs benchmark suite: {platform.machine()}, {os.cpu_count()} CPUs, BLAS threads {threads}")
    df = run_suite(size, only=only, repeats=repeats, json_path=out / "pytest_benchmark.json", log=log)
    _write_csv(df, out / "benchmarks.csv")
    table = markdown_table(df)
    write_text(out / "benchmarks.md", table)
    log("\n" + table)
    plot_ratios(df, out / "benchmarks.pdf")
    orders = pd.DataFrame(ranking_orders(
        cache_root, feature_sets=order_check, iterations=iterations, per_class=per_class,
        per_class_overrides=per_class_overrides, log=log,
    )) if order_check else pd.DataFrame(columns=["feature_set", "runs", "identical"])
    _write_csv(orders, out / "ranking_orders.csv")
    write_json(out / "provenance.json", {
        "command": " ".join(sys.argv),
        "size": size,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "blas_threads": threads},
        "versions": package_versions(),
        "ranking_orders": orders.to_dict(orient="records"),
    })
    equal = bool((df["difference"] <= df["tolerance"]).all())
    same_orders = bool((orders["runs"] == orders["identical"]).all())
    # quick sizes check equality only: their timings say nothing about speed
    goals = size == "quick" or not require_goals or bool(df["met"].all())
    return 0 if equal and same_orders and goals else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs_benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="results/benchmarks", help="output folder")
    parser.add_argument("--quick", action="store_true", help="small sizes (checks the suite, not speed)")
    parser.add_argument("--only", nargs="*", help="run the cases whose name contains one of these")
    parser.add_argument("--repeats", type=int, help="timed rounds per case (default: per case)")
    parser.add_argument("--cache-root", default="data/cache", help="feature caches for the order check")
    parser.add_argument("--order-check", nargs="*", default=["surf", "GoogleNet1024"],
                        help="feature sets whose real runs' rankings are replayed (none: skip)")
    parser.add_argument("--iterations", type=int, default=19, help="iterations per pair in the order check")
    parser.add_argument("--require-goals", action="store_true",
                        help="exit with status 1 when a speed goal is not met (default: only when results differ)")
    args = parser.parse_args(argv)
    return write_suite(
        args.out, size="quick" if args.quick else "full", only=args.only, repeats=args.repeats,
        order_check=args.order_check, cache_root=args.cache_root, iterations=args.iterations,
        per_class_overrides={"dslr": 8}, require_goals=args.require_goals,
    )
