"""Scaling study of the feature ranking (Algorithms 1 and 2).

Time and peak memory of :func:`otfs.rankers.rank_features` as the number of
features ``d`` grows (source of 200 samples, target of 958, like amazon) and
as the number of target samples ``n_t`` grows (``d = 800``, like SURF). A
power law ``y = a x^k`` is fitted to each series by least squares in log-log
space; ``k`` is its slope.

The expected slopes: in ``d``, the ``d x d`` feature coupling dominates
(``O(d^2 n)`` for the cost, ``O(d^2)`` per Sinkhorn iteration and in memory),
so the time slope tends to 2 and the memory slope to 2; fixed costs flatten
the fit over the whole range, so the slope between the last two points is
reported too. In ``n_t``, the
exact OT of Algorithm 1 between 200 and ``n_t`` samples dominates.

``python -m otfs_benchmarks.scaling --out results/benchmarks`` writes
``scaling.csv`` and ``scaling.{pdf,png}``.
"""

from __future__ import annotations

import argparse
import tempfile
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from otfs.rankers import rank_features
from otfs_benchmarks.cases import office_like
from otfs_benchmarks.harness import Case
from otfs_benchmarks.timing import time_cases
from otfs_workflow.io import write_csv

__all__ = ["D_VALUES", "NT_VALUES", "fit_slope", "measure_points", "point_case", "plot_scaling", "run_scaling"]

D_VALUES = (256, 1024, 4096, 16384)
NT_VALUES = (300, 1000, 3000, 10000)


def _point(n_source, n_target, d, seed):
    Xs, _, Xt, _ = office_like(n_source, n_target, d, seed=seed)
    return {"Xs": Xs, "Xt": Xt}


def point_case(n_source, n_target, d, seed=0) -> Case:
    """The ranking at one shape as a benchmark case (one implementation, timed over 3 rounds)."""
    return Case(name=f"n_s={n_source} n_t={n_target} d={d}", shape="", setup=partial(_point, n_source, n_target, d, seed),
                implementations={"otfs": lambda p: rank_features(p["Xs"], p["Xt"])}, compare=None,
                difference="", tolerance=0.0, repeats=3)


def measure_points(shapes, seed=0, max_seconds=10.0, workdir=None) -> list[dict]:
    """Time (pytest-benchmark: the median of 3 rounds, one where a call is slower than ``max_seconds``)
    and traced peak memory of the ranking at each ``(n_source, n_target, d)``."""
    cases = [point_case(*shape, seed=seed) for shape in shapes]
    with tempfile.TemporaryDirectory(prefix="otfs-scaling-") as tmp:
        measured = time_cases(cases, max_seconds=max_seconds, workdir=workdir or tmp)
    rows = []
    for case, (n_source, n_target, d) in zip(cases, shapes, strict=True):
        m = measured[case.name, "otfs"]
        rows.append({"n_source": n_source, "n_target": n_target, "d": d, "seconds": m["seconds"], "runs": m["runs"],
                     "peak_mb": m["peak_mb"], "input_mb": 8 * (n_source + n_target) * d / 2**20})  # float64
    return rows


def fit_slope(x, y) -> tuple[float, float]:
    """Least-squares fit of ``log y = log a + k log x``; returns ``(k, a)``."""
    k, log_a = np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)
    return float(k), float(np.exp(log_a))


def run_scaling(d_values=D_VALUES, nt_values=NT_VALUES, n_source=200, n_target=958, d_fixed=800,
                log=print) -> pd.DataFrame:
    """Measure both series; one row per point, with the ``series`` it belongs to."""
    series = [("d", d, (n_source, n_target, d)) for d in d_values]
    series += [("n_t", nt, (n_source, nt, d_fixed)) for nt in nt_values]
    rows = []
    for (name, x, _), point in zip(series, measure_points([shape for *_, shape in series]), strict=True):
        rows.append({"series": name, "x": x, **point})
        log(f"{name}={x:6d}: {point['seconds']:8.3f} s, peak {point['peak_mb']:8.1f} MB")
    return pd.DataFrame(rows)


def plot_scaling(df: pd.DataFrame, path) -> dict:
    """Log-log plots of time and memory for both series, with fitted slopes; returns the slopes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from otfs_workflow.plotting import save_figure

    slopes = {}
    fig, axes = plt.subplots(2, 2, figsize=(9, 7))
    labels = {"d": "number of features d (n_s = 200, n_t = 958)",
              "n_t": "number of target samples n_t (n_s = 200, d = 800)"}
    for col, series in enumerate(("d", "n_t")):
        part = df[df["series"] == series].sort_values("x")
        if part.empty:
            continue
        for row, (value, unit) in enumerate((("seconds", "time (s)"), ("peak_mb", "peak memory (MB)"))):
            ax = axes[row, col]
            k, a = fit_slope(part["x"], part[value])
            tail, _ = fit_slope(part["x"].iloc[-2:], part[value].iloc[-2:])
            slopes[f"{value} vs {series}"] = k
            slopes[f"{value} vs {series}, last two points"] = tail
            xs = np.geomspace(part["x"].min(), part["x"].max(), 50)
            ax.loglog(part["x"], part[value], "o", color="tab:blue")
            ax.loglog(xs, a * xs**k, "-", color="tab:orange",
                      label=f"fitted slope {k:.2f} (last two points: {tail:.2f})")
            ax.set_xlabel(labels[series])
            ax.set_ylabel(unit)
            ax.legend()
            ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("Feature ranking (Algorithms 1 and 2): time and peak memory")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return slopes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs_benchmarks.scaling", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="results/benchmarks")
    parser.add_argument("--d", type=int, nargs="*", default=list(D_VALUES), help="values of d")
    parser.add_argument("--nt", type=int, nargs="*", default=list(NT_VALUES), help="values of n_t")
    args = parser.parse_args(argv)
    out = Path(args.out)
    df = run_scaling(args.d, args.nt)
    slopes = plot_scaling(df, out / "scaling.pdf")
    df["slope"] = [slopes.get(f"seconds vs {s}") for s in df["series"]]
    df["slope_last_two"] = [slopes.get(f"seconds vs {s}, last two points") for s in df["series"]]
    df["memory_slope"] = [slopes.get(f"peak_mb vs {s}") for s in df["series"]]
    df["memory_slope_last_two"] = [slopes.get(f"peak_mb vs {s}, last two points") for s in df["series"]]
    write_csv(df, out / "scaling.csv", float_format="%.6g")
    for name, k in slopes.items():
        print(f"fitted slope, {name}: {k:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
