"""Atomic file output and small JSON/TSV helpers.

Every output of the pipeline is written to a temporary file in the target
directory, flushed to disk (``fsync``) and moved into place with
:func:`os.replace`, so an interrupted run or a crash never leaves a
half-written file under its final name. The file gets the mode a plain
``open()`` would give it (``0o666`` less the user's umask): on a shared
project folder the group can read the results.

**Sealed outputs.** The JSON and TSV files that jobs pass to each other
(:func:`write_json`, :func:`write_tsv`, :func:`write_rows_tsv`) are sealed:
their SHA-256 is written beside them, in ``.<name>.sha256``, and
:func:`read_json` and :func:`read_tsv` check it. A file edited by hand after
the job that wrote it is then an error naming it, never a silent input of
the next job (Snakemake reruns the jobs downstream of a changed file with
its new content, and does not check whether an output is still the one
its rule wrote).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = ["EditedOutputError", "atomic_path", "check_seal", "current_umask", "cwd_relative", "read_json", "read_tsv", "seal",
           "seal_path", "read_parquet", "write_csv", "write_json", "write_parquet", "write_text", "write_tsv"]


class EditedOutputError(ValueError):
    """A sealed output was changed after the job that wrote it."""


def seal_path(path) -> Path:
    """Where the seal of ``path`` lives: ``.<name>.sha256`` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}.sha256")


def _sha256(path) -> str:
    from otfs_workflow.provenance import file_sha256

    return file_sha256(path)


def seal(path) -> None:
    """Record the SHA-256 of ``path`` beside it (atomically), for :func:`check_seal`."""
    write_text(seal_path(path), f"{_sha256(path)}  {Path(path).name}\n", sealed=False)


def check_seal(path) -> None:
    """Raise :class:`EditedOutputError` if ``path`` differs from what its seal records (no seal: nothing to
    check, e.g. a file written before seals existed)."""
    sp = seal_path(path)
    try:
        recorded = sp.read_text(encoding="utf-8").split()[0]
    except (OSError, IndexError):
        return
    found = _sha256(path)
    if found != recorded:
        raise EditedOutputError(
            f"{path}: changed after the job that wrote it (SHA-256 {found[:16]}..., but {sp.name} records "
            f"{recorded[:16]}...); an edited result is never used. Delete {path} and rerun to recompute it "
            f"(or delete {sp} to use your edit)")


def cwd_relative(path: str | os.PathLike) -> str:
    """``path`` relative to the working directory where it lies inside it, else as given: a path that names
    the same file from a project folder copied or moved elsewhere."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and set it back at once
    os.umask(mask)
    return mask


def _fsync(path: Path, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a folder
        if not directory:
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it onto ``path`` on success.

    On success the file is given the mode of a plain ``open()`` (``0o666``
    less the umask; ``mkstemp`` creates it ``0o600``), synced to disk, and
    renamed onto ``path``; the folder is synced too. On an exception the
    temporary file is removed and ``path`` is untouched. ``suffix`` defaults
    to the suffix of ``path`` (some writers need it).
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
        os.chmod(tmp, 0o666 & ~current_umask())
        _fsync(tmp)
        os.replace(tmp, path)
        _fsync(path.parent, directory=True)
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


def write_json(path, obj, *, compact: bool = False, sealed: bool = True) -> None:
    """Write ``obj`` as indented JSON, atomically; floats round-trip exactly; sealed (module docstring).

    ``compact=True`` writes it on one line, without spaces: the same content,
    encoded by the json module's C encoder (indented output is encoded in
    Python, a quarter of a second for one pair's rankings). The selection and
    ranking jobs' files, which only the pipeline reads, are compact.
    """
    if compact:
        text = json.dumps(obj, separators=(",", ":"), sort_keys=True, default=_json_default, allow_nan=False)
    else:
        text = json.dumps(obj, indent=1, sort_keys=True, default=_json_default, allow_nan=False)
    write_text(path, text + "\n", sealed=sealed)


def write_text(path, text: str, sealed: bool = False) -> None:
    """Write ``text`` atomically (``sealed``: and its seal)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    if sealed:
        seal(path)


def read_json(path):
    """Read a JSON file, naming the file if it is not valid JSON or was edited after it was sealed."""
    check_seal(path)
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); delete it and rerun") from exc


def read_tsv(path):
    """Read a results TSV (its seal checked). Only empty cells are missing: "NA" is an adapter name."""
    import pandas as pd

    check_seal(path)
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""])


def write_csv(df, path, float_format: str | None = None) -> None:
    """Write a DataFrame as CSV (no index) atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format=float_format)


def write_tsv(df, path, sealed: bool = True) -> None:
    """Write a results TSV atomically, floats with 10 significant digits; sealed (module docstring)."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, sep="\t", index=False, float_format="%.10g")
    if sealed:
        seal(path)


def write_parquet(df, path) -> None:
    """Write a DataFrame as Parquet atomically (every float kept to the bit), sealed (module docstring)."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)
    seal(path)


def read_parquet(path):
    """Read a Parquet file written by :func:`write_parquet` (its seal checked)."""
    import pandas as pd

    check_seal(path)
    return pd.read_parquet(path)


def _tsv_cell(value) -> str:
    """One cell as ``DataFrame.to_csv(float_format="%.10g")`` writes it: floats ``%.10g``, NaN and None empty."""
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if value != value else "%.10g" % value  # noqa: UP031 - pandas' float_format, as given to it
    return str(value)


def write_rows_tsv(path, columns, rows) -> None:
    """Write ``rows`` (mappings) as :func:`write_tsv` writes their DataFrame, byte for byte, without pandas.

    The pipeline's classification jobs write their results with it: importing
    pandas costs half a second per job. The same ``csv`` dialect as pandas
    (tab, ``\\n``, minimal quoting) and the same cells (:func:`_tsv_cell`);
    ``tests/test_io.py`` compares the bytes with pandas' on mixed tables.
    A row without a column is an error naming both.
    """
    import csv

    columns = list(columns)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(columns)
        for i, row in enumerate(rows):
            try:
                writer.writerow([_tsv_cell(row[c]) for c in columns])
            except KeyError as exc:
                raise ValueError(f"{path}: row {i} has no column {exc.args[0]!r} (columns: {columns})") from None
    seal(path)
