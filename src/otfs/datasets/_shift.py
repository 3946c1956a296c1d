"""What the readers of the shift data families share (``data/manifests/shift.tsv``; ``docs/data-families.md``).

Each family is one file of this folder (``amazon_reviews_400.py``,
``wine_quality.py``, ...) with a :class:`ShiftReader` subclass: its
domains, the manifest files each domain is read from, and how a file
becomes a :class:`~otfs.datasets.DomainFeatures`. The helpers here read the
two formats the families come in (MATLAB variables, headerless numeric
tables) and name the file, the variable, the line and the column of any
problem; a file that ends early (truncated) is such a problem.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from otfs.datasets._readers import DatasetReader

__all__ = ["ShiftFileError", "ShiftReader", "read_mat", "read_numeric_table"]


class ShiftFileError(ValueError):
    """A file of a shift data family is missing, unreadable (truncated, corrupt) or not as documented."""


def _existing(path: str | os.PathLike) -> Path:
    path = Path(path)
    if not path.is_file():
        raise ShiftFileError(f"{path}: file not found")
    return path


def read_mat(path: str | os.PathLike, keys: Sequence[str]) -> dict[str, np.ndarray]:
    """The MATLAB variables ``keys`` of ``path``; a missing variable or an unreadable file names the file."""
    import scipy.io

    path = _existing(path)
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # scipy raises many types on a truncated or corrupt file
        raise ShiftFileError(f"{path}: cannot read MATLAB data ({type(exc).__name__}: {exc}); the file is "
                             "truncated or corrupt") from exc
    missing = [k for k in keys if k not in mat]
    if missing:
        found = sorted(k for k in mat if not k.startswith("__"))
        raise ShiftFileError(f"{path}: variable(s) {missing} missing (found {found})")
    return {k: mat[k] for k in keys}


def read_numeric_table(path: str | os.PathLike, n_columns: int, *, sep: str = ",",
                       missing: Sequence[str] = ("NaN", "?")) -> np.ndarray:
    """A headerless table of ``n_columns`` numbers per line as a float matrix, ``missing`` values as NaN.

    A line with another number of fields, or a field that is not a number, is an error naming the file, the
    line and the column (a truncated file usually ends with a short line)."""
    path = _existing(path)
    rows = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.strip()
            if not text:
                continue
            fields = [f.strip() for f in text.split(sep)]
            if len(fields) != n_columns:
                raise ShiftFileError(f"{path}: line {lineno}: {len(fields)} fields, expected {n_columns} "
                                     "(a truncated file ends with a short line)")
            row = []
            for column, field in enumerate(fields, start=1):
                if field in missing:
                    row.append(np.nan)
                    continue
                try:
                    row.append(float(field))
                except ValueError:
                    raise ShiftFileError(f"{path}: line {lineno}, column {column}: {field!r} is not a number "
                                         f"(missing values are written {list(missing)})") from None
            rows.append(row)
    if not rows:
        raise ShiftFileError(f"{path}: no data line")
    return np.asarray(rows, dtype=np.float64)


class ShiftReader(DatasetReader):
    """A family of ``data/manifests/shift.tsv``: its domains and the files each is read from.

    Subclasses set :attr:`family` (the manifest's folder), :attr:`domain_files` (domain -> the file names
    of the domain, in that folder) and :attr:`n_features`, and implement :meth:`read`.
    """

    family: str = ""
    domain_files: Mapping[str, Sequence[str]] = {}
    n_features: int = 0

    def _check_domain(self, domain: str) -> None:
        if domain not in self.domain_files:
            raise ValueError(f"{self.family}: unknown domain {domain!r}; its domains: {list(self.domain_files)}")

    def files(self, domain):
        self._check_domain(domain)
        return [f"{self.family}/{name}" for name in self.domain_files[domain]]

    def count_features(self, domains, manifest):
        for domain in domains:
            self._check_domain(domain)
        return self.n_features

    def _path(self, paths: Mapping[str, Path], domain: str, index: int = 0) -> Path:
        return Path(paths[self.files(domain)[index]])
