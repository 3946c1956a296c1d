"""``tabular``: your own dataset, one file per domain (CSV, TSV, Parquet, NumPy ``.npz`` or HDF5) holding a
feature matrix and a label column, read in place and checked against optional SHA-256s.

One file of the dataset readers' folder (:data:`otfs.data.readers.DATASET_READERS`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..data.readers import DATASET_READERS, DatasetReader, DomainFeatures

FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".npz": "npz", ".h5": "hdf5", ".hdf5": "hdf5"}


def sha256(path) -> str:
    """The SHA-256 of a file, in hex."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@DATASET_READERS.register("tabular")
class TabularReader(DatasetReader):
    """One file per domain, holding the features and a label column.

    Tables (CSV, TSV, Parquet): every column but ``label`` is a feature,
    unless ``features`` lists them. Arrays (``.npz``, HDF5): the matrix
    ``features`` (default ``"X"``) and the vector ``label`` (default
    ``"y"`` there). Labels may be any values: the classes are the sorted
    union of the labels of all the domains' files, so class ``k`` is the same
    in every domain. Files are read in place (a path relative to the working
    directory, the repository root in the pipeline), and a file whose
    ``sha256`` is given must match it.

    Every problem names the file and the column: a missing file or column,
    a non-numeric or empty cell, a NaN, a hash mismatch.

    Parameters
    ----------
    files : mapping of domain to path
    label : str, default="label" (tables) or "y" (arrays)
    features : list of str, or str, optional
        Tables: the feature columns (default all but ``label``); arrays: the
        matrix's key (default ``"X"``).
    sha256 : mapping of domain to hex digest, optional
    """

    def __init__(self, files: Mapping[str, str], label: str | None = None,
                 features: Sequence[str] | str | None = None, sha256: Mapping[str, str] | None = None):
        if not isinstance(files, Mapping) or not files:
            raise ValueError("files: give one file per domain, {domain: path}")
        for domain, path in files.items():
            if Path(str(path)).suffix.lower() not in FORMATS:
                raise ValueError(f"files.{domain}: {path!r} has none of the suffixes {sorted(FORMATS)}")
        unknown = sorted(set(sha256 or {}) - set(files))
        if unknown:
            raise ValueError(f"sha256: no file for the domain(s) {unknown}")
        self.files_, self.label, self.features, self.sha256 = dict(files), label, features, dict(sha256 or {})

    # -- the reader contract -------------------------------------------------------
    def files(self, domain):
        return []  # nothing to acquire: read in place (local_files)

    def local_files(self, domain):
        return [self._path(domain)]

    def count_features(self, domains, manifest):
        widths = {d: self._width(self._path(d)) for d in domains}
        if len(set(widths.values())) != 1:
            raise ValueError(f"the domains' files disagree on the number of features: {widths}")
        return widths[domains[0]]

    def read(self, domain, paths, manifest):
        path = self._path(domain)
        if domain in self.sha256:
            found = sha256(path)
            if found != self.sha256[domain].lower():
                raise ValueError(f"{path}: SHA-256 {found}, but the configuration says {self.sha256[domain]}")
        X, labels = self._load(path)
        classes = self._classes()
        index = {c: k for k, c in enumerate(classes, start=1)}
        y = np.array([index[v] for v in labels.tolist()], dtype=np.int64)
        return DomainFeatures(X, y, [str(c) for c in classes])

    # -- helpers ---------------------------------------------------------------------
    def _path(self, domain) -> Path:
        if domain not in self.files_:
            raise ValueError(f"no file for domain {domain!r} (files: {sorted(self.files_)})")
        path = Path(str(self.files_[domain]))
        if not path.is_file():
            raise ValueError(f"{path}: no such file (the file of domain {domain!r})")
        return path

    def _kind(self, path):
        return FORMATS[path.suffix.lower()]

    def _label(self, path):
        return self.label or ("y" if self._kind(path) in ("npz", "hdf5") else "label")

    def _table(self, path, columns=None):
        import pandas as pd

        kind = self._kind(path)
        try:
            if kind == "parquet":
                return pd.read_parquet(path, columns=columns)
            return pd.read_csv(path, sep="\t" if kind == "tsv" else ",", usecols=columns)
        except (ValueError, OSError) as exc:
            raise ValueError(f"{path}: not a readable {kind} table ({exc})") from exc

    def _columns(self, path):
        kind = self._kind(path)
        if kind == "parquet":
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
        else:
            names = list(self._table_header(path))
        label = self._label(path)
        if label not in names:
            raise ValueError(f"{path}: no label column {label!r} (columns: {names})")
        feats = [c for c in names if c != label] if self.features is None else list(self.features)
        missing = [c for c in feats if c not in names]
        if missing:
            raise ValueError(f"{path}: no column(s) {missing} (columns: {names})")
        return feats, label

    def _table_header(self, path):
        import pandas as pd

        return pd.read_csv(path, sep="\t" if self._kind(path) == "tsv" else ",", nrows=0).columns

    def _arrays(self, path):
        kind, label = self._kind(path), self._label(path)
        key = self.features if isinstance(self.features, str) else "X"
        try:
            if kind == "npz":
                with np.load(path, allow_pickle=False) as data:
                    found = list(data.keys())
                    if key not in found or label not in found:
                        raise ValueError(f"{path}: needs the arrays {key!r} and {label!r} (has {found})")
                    return data[key], data[label]
            import h5py

            with h5py.File(path, "r") as h5:
                found = list(h5.keys())
                if key not in found or label not in found:
                    raise ValueError(f"{path}: needs the datasets {key!r} and {label!r} (has {found})")
                return h5[key][()], h5[label][()]
        except OSError as exc:
            raise ValueError(f"{path}: not a readable {kind} file ({exc})") from exc

    def _width(self, path):
        if self._kind(path) in ("npz", "hdf5"):
            X, _ = self._arrays(path)
            return int(np.asarray(X).shape[1]) if np.ndim(X) == 2 else -1
        return len(self._columns(path)[0])

    def _load(self, path):
        if self._kind(path) in ("npz", "hdf5"):
            X, labels = self._arrays(path)
            X, labels = np.asarray(X), np.asarray(labels).ravel()
            if X.ndim != 2 or labels.shape[0] != X.shape[0]:
                raise ValueError(f"{path}: features of shape {X.shape} and {labels.shape[0]} labels")
            if labels.dtype.kind in "SU" or labels.dtype == object:
                labels = labels.astype(str)
            bad = ~np.isfinite(X.astype(float))
            if bad.any():
                r, c = np.argwhere(bad)[0]
                raise ValueError(f"{path}: {int(bad.sum())} NaN or infinite values (first at row {r}, column {c})")
            return X.astype(float), labels
        import pandas as pd

        feats, label = self._columns(path)
        df = self._table(path, columns=[*feats, label])
        if df[label].isna().any():
            row = int(np.flatnonzero(df[label].isna().to_numpy())[0])
            raise ValueError(f"{path}: column {label!r} (the label) has {int(df[label].isna().sum())} empty cells "
                             f"(first at data row {row})")
        for col in feats:
            values = pd.to_numeric(df[col], errors="coerce")
            bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0])
                raise ValueError(f"{path}: column {col!r} has {int(bad.sum())} empty, NaN or non-numeric cells "
                                 f"(first at data row {row}: {df[col].iloc[row]!r})")
            df[col] = values
        return df[feats].to_numpy(dtype=float), df[label].to_numpy()

    def _classes(self):
        values = set()
        for domain in self.files_:
            path = self._path(domain)
            if self._kind(path) in ("npz", "hdf5"):
                labels = np.asarray(self._arrays(path)[1]).ravel()
                labels = labels.astype(str) if labels.dtype.kind in "SU" or labels.dtype == object else labels
            else:
                label = self._columns(path)[1]
                labels = self._table(path, columns=[label])[label].dropna().to_numpy()
            values.update(labels.tolist())
        try:
            return sorted(values)
        except TypeError:  # mixed types: by their text
            return sorted(values, key=str)
