"""Atomic file output and small JSON/TSV helpers.

Every output of the pipeline is written to a temporary file in the target
directory and moved into place with :func:`os.replace`, so an interrupted
run never leaves a half-written file under its final name.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = ["atomic_path", "read_json", "read_tsv", "write_json", "write_text", "write_tsv"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it onto ``path`` on success.

    On an exception the temporary file is removed and ``path`` is untouched.
    ``suffix`` defaults to the suffix of ``path`` (some writers need it).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=path.suffix if suffix is None else suffix, dir=path.parent
    )
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _json_default(obj):
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def write_json(path, obj) -> None:
    """Write ``obj`` as indented JSON, atomically; floats round-trip exactly."""
    text = json.dumps(obj, indent=1, sort_keys=True, default=_json_default, allow_nan=False)
    write_text(path, text + "\n")


def write_text(path, text: str) -> None:
    """Write ``text`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def read_json(path):
    """Read a JSON file, naming the file if it is not valid JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); delete it and rerun") from exc


def read_tsv(path):
    """Read a results TSV. Only empty cells are missing: "NA" is an adapter name."""
    import pandas as pd

    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""])


def write_csv(df, path, float_format: str | None = None) -> None:
    """Write a DataFrame as CSV (no index) atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format=float_format)


def write_tsv(df, path) -> None:
    """Write a results TSV atomically, floats with 10 significant digits."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, sep="\t", index=False, float_format="%.10g")
