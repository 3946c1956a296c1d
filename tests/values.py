"""The values of a pipeline run's outputs, for comparing two runs: a digest of each file's values, with what
changes from run to run by nature (times, dates, versions, commits, provenance, figures' bytes) left out.

The digests hold on any CPU: every number counts to 6 significant digits (BLAS kernels chosen by the CPU move
a float64's last digits), and what comes from the features PyTorch extracts (EfficientNet-Lite0: its float32
kernels, chosen by the CPU too, move every feature) is left out, files and rows;
tests/test_pipeline.py compares the extracted features' runs with the released ones' instead.

``python -m tests.values FOLDER`` prints the digests of a finished run (``tests/data/available_values.tsv``
holds those of the test configuration's ``available``; tests/test_pipeline.py compares a run with them).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
from pathlib import Path

from otfs_workflow.cluster import is_timing

#: The folders of a run whose files are outputs of `available`.
ROOTS = ("results", "data/cache", "data/features")
#: Files whose bytes are not their values: figures (drawn from the tables beside them), provenance records.
SKIPPED = re.compile(r"(^|/)\.|\.(pdf|png|svg|log)$|(^|/)[^/]*provenance[^/]*\.json$|efficientnet", re.IGNORECASE)
#: A row (of a table, or a line of a text) of the extracted features' results.
EXTRACTED = re.compile(r"efficientnet", re.IGNORECASE)
#: A number written with a decimal point or an exponent.
NUMBER = re.compile(r"-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+")
DIGITS = 6
#: Columns and JSON keys that record when, how fast, or with what a run was made, not what it found.
VOLATILE = {"provenance", "versions", "git_commit", "config_hash", "learned_on", "created", "date", "python",
            "platform"}
#: A cell of a text table's header that names a duration ("↘100 time (s)", "ranking\\_seconds").
TIMED_CELL = re.compile(r"\btime\b|seconds", re.IGNORECASE)


def volatile(name) -> bool:
    """Whether a column or key named ``name`` records how or when a run was made: a duration as the comparison
    of two runs' results reads it (:func:`otfs_workflow.cluster.is_timing`), or :data:`VOLATILE`."""
    return isinstance(name, str) and (name in VOLATILE or is_timing(name))


def _numbers(text: str) -> str:
    """``text`` with every number to :data:`DIGITS` significant digits."""
    return NUMBER.sub(lambda m: f"{float(m.group()):.{DIGITS}g}", text)


def _frame(df) -> bytes:
    df = df.drop(columns=[c for c in df.columns if volatile(c)])
    lines = df.to_csv(index=False).splitlines()
    return _numbers("\n".join(line for line in lines if not EXTRACTED.search(line))).encode()


def _json(obj):
    if isinstance(obj, dict):
        return {k: _json(v) for k, v in obj.items() if not volatile(k)}
    if isinstance(obj, list):
        return [_json(v) for v in obj]
    if isinstance(obj, float):
        return float(f"{obj:.{DIGITS}g}")
    return obj


def _text_table(text: str, sep: str) -> bytes:
    """A Markdown (``|``) or LaTeX (``&``) table without its columns of times: after a row whose cells name a
    duration, the rows with as many cells lose those cells."""
    out, drop, width = [], set(), None
    for line in text.splitlines():
        cells = line.split(sep)
        timed = {i for i, c in enumerate(cells) if TIMED_CELL.search(c)} if sep in line else set()
        if timed:
            drop, width = timed, len(cells)
        if drop and len(cells) == width:
            line = sep.join(c for i, c in enumerate(cells) if i not in drop)
        if not EXTRACTED.search(line):
            out.append(line)
    return _numbers("\n".join(out)).encode()


def _h5(path: Path) -> bytes:
    import h5py
    import numpy as np

    out = io.BytesIO()

    def visit(name, node):
        if isinstance(node, h5py.Dataset):
            value = np.asarray(node[()])
            out.write(f"{name}\t{value.dtype.str}\t{value.shape}\n".encode())
            if value.dtype.kind == "f":
                out.write(" ".join(np.char.mod(f"%.{DIGITS}g", value.ravel())).encode())
            else:
                out.write(value.tobytes() if value.dtype.kind != "O" else repr(value.tolist()).encode())

    with h5py.File(path, "r") as fh:
        fh.visititems(visit)
    return out.getvalue()


def canonical(path: Path) -> bytes:
    """The bytes that stand for the values of ``path``."""
    import pandas as pd

    suffix = path.suffix
    if suffix in (".csv", ".tsv"):
        return _frame(pd.read_csv(path, sep="," if suffix == ".csv" else "\t", dtype=str, keep_default_na=False))
    if suffix == ".parquet":
        return _frame(pd.read_parquet(path))
    if suffix == ".json":
        return json.dumps(_json(json.loads(path.read_text(encoding="utf-8"))), sort_keys=True).encode()
    if suffix == ".h5":
        return _h5(path)
    if suffix in (".md", ".tex"):
        return _text_table(path.read_text(encoding="utf-8"), "|" if suffix == ".md" else "&")
    return path.read_bytes()


def digests(folder: Path) -> dict[str, str]:
    """``{path relative to folder: SHA-256 of its values}`` of every output under :data:`ROOTS`."""
    folder = Path(folder)
    out = {}
    for root in ROOTS:
        for path in sorted((folder / root).rglob("*")):
            rel = path.relative_to(folder).as_posix()
            if path.is_file() and not SKIPPED.search(rel):
                out[rel] = hashlib.sha256(canonical(path)).hexdigest()
    return out


def read_digests(path: Path) -> dict[str, str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return dict(line.split("\t") for line in lines if line and not line.startswith("#"))


if __name__ == "__main__":
    for rel, digest in digests(Path(sys.argv[1])).items():
        print(f"{rel}\t{digest}")
