"""The benchmark cases' contract and the table's rows.

Every case runs the library's implementation (``otfs``), the straightforward
one (``reference``, see :mod:`otfs_benchmarks.reference`) and, where it offers
the method, skada, in the same process on the same data. pytest-benchmark times them
(:mod:`otfs_benchmarks.timing`); :func:`measure` compares each output with the
reference's and says whether the case's goals are met.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from otfs_benchmarks.timing import time_cases

__all__ = ["Case", "aligned_relative_difference", "measure", "relative_difference"]

IMPLEMENTATIONS = ("otfs", "reference", "skada")


@dataclass
class Case:
    """One benchmark case.

    Attributes
    ----------
    name : str
    shape : str
        What the data look like, for the table.
    setup : callable
        ``setup() -> data`` builds the inputs (not timed).
    implementations : dict
        ``{"otfs": f, "reference": g[, "skada": h]}``, each ``f(data) -> output``.
    compare : callable
        ``compare(output, reference_output) -> (difference, note)``.
    difference : str
        What the difference measures (e.g. "max relative").
    tolerance : float
        Largest difference counted as equal.
    goal : float or None
        Smallest acceptable speed ratio reference / otfs (None: no goal).
    goal_text : str
    repeats : int
    notes : list of str
        Shown in the table's note column.
    threads : int or None
        BLAS/OpenMP threads for both implementations (None: the process's).
    max_seconds : float or None
        An absolute goal beside the ratio: the largest acceptable median time of otfs's implementation
        (None: none).
    """

    name: str
    shape: str
    setup: Callable
    implementations: dict
    compare: Callable
    difference: str
    tolerance: float
    goal: float | None = None
    goal_text: str = ""
    repeats: int = 5
    notes: list = field(default_factory=list)
    threads: int | None = None
    max_seconds: float | None = None


def relative_difference(a, b) -> float:
    """``max |a - b| / max |b|`` over arrays or tuples of arrays."""
    if isinstance(a, tuple):
        return max(relative_difference(x, y) for x, y in zip(a, b, strict=True))
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    scale = float(np.abs(b).max()) or 1.0
    return float(np.abs(a - b).max()) / scale


def aligned_relative_difference(a, b) -> float:
    """:func:`relative_difference` after flipping the sign of columns to match ``b``.

    For embeddings (TCA, SA) whose coordinates are eigenvectors, defined up to
    sign: a sign flip of a coordinate changes no distance, so no 1-NN result.
    ``a`` and ``b`` are ``(source, target)`` pairs embedded with the same
    directions, so one sign per column serves both.
    """
    (as_, at), (bs, bt) = a, b
    stacked_a, stacked_b = np.vstack([as_, at]), np.vstack([bs, bt])
    if stacked_a.shape != stacked_b.shape:
        return float("inf")
    signs = np.sign(np.einsum("ij,ij->j", stacked_a, stacked_b))
    signs[signs == 0] = 1.0
    return relative_difference(stacked_a * signs, stacked_b)


def measure(cases, *, repeats: int | None = None, max_seconds: float = 20.0, json_path=None, workdir,
            log=print) -> list[dict]:
    """Time ``cases`` (:func:`otfs_benchmarks.timing.time_cases`); return the table's rows."""
    measured = time_cases(cases, repeats=repeats, max_seconds=max_seconds, json_path=json_path,
                          workdir=workdir)
    return [_row(case, {name: m for (c, name), m in measured.items() if c == case.name}, log)
            for case in cases]


def _row(case, measured, log):
    med = {name: m["seconds"] for name, m in measured.items()}
    row = {"case": case.name, "shape": case.shape}
    for name in IMPLEMENTATIONS:
        m = measured.get(name, {})
        row[f"{name}_s"] = m.get("seconds", np.nan)
        row[f"{name}_runs"] = m.get("runs", 0)
        row[f"{name}_peak_mb"] = m.get("peak_mb", np.nan)
    row["ratio"] = med["reference"] / med["otfs"]
    row["skada_ratio"] = med["reference"] / med["skada"] if "skada" in med else np.nan
    diff, note = case.compare(measured["otfs"]["output"], measured["reference"]["output"])
    row["difference"] = diff
    row["difference_kind"] = case.difference
    row["tolerance"] = case.tolerance
    if "skada" in measured:
        row["skada_difference"], _ = case.compare(measured["skada"]["output"], measured["reference"]["output"])
    else:
        row["skada_difference"] = np.nan
    row["goal"] = case.goal_text
    equal = diff <= case.tolerance
    fast = (case.goal is None or row["ratio"] >= case.goal) and (
        case.max_seconds is None or med["otfs"] <= case.max_seconds)
    row["met"] = bool(equal and fast)
    reasons = [*case.notes]
    if note:
        reasons.append(note)
    if not equal:
        reasons.append(f"difference {diff:.3g} above tolerance {case.tolerance:g}")
    if case.goal is not None and row["ratio"] < case.goal:
        reasons.append(f"ratio {row['ratio']:.1f} below goal {case.goal:g}")
    if case.max_seconds is not None and med["otfs"] > case.max_seconds:
        reasons.append(f"{med['otfs']:.1f} s above the goal of {case.max_seconds:g} s")
    row["note"] = "; ".join(reasons)
    log(
        f"{case.name:<26} otfs {med['otfs']:9.4f} s  reference {med['reference']:9.4f} s  "
        f"ratio {row['ratio']:8.1f}  diff {diff:.2e}  {'met' if row['met'] else 'NOT MET'}"
    )
    return row
