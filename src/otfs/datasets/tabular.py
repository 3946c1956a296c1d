"""``tabular``: your own dataset, one file per domain (CSV, TSV, Parquet, NumPy ``.npz`` or HDF5) holding a
feature matrix and a label column, read in place and checked against optional SHA-256s.

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).

What the reader guarantees (``docs/your-dataset.md`` says it for users):

* **Columns by name.** A table's features are taken by their names, never
  by their position: a domain whose columns come in another order gives
  the same matrix, bit for bit. A column missing in one domain (or, without
  ``features``, present in only some) is an error naming the file and the
  column.
* **Every problem in one error.** :meth:`TabularReader.inspect` reads every
  file and lists every bad column of every file (empty, NaN, infinite or
  non-numeric cells, values whose squares overflow, duplicate names, a
  missing or empty label), with the file's line numbers.
* **An unlabelled target.** A domain whose file has no label column (no
  label array), or whose label column is empty in every row, is read as
  unlabelled: its labels are :data:`~otfs.datasets.NO_LABEL` and
  ``info["unlabelled"]`` says so; only the label-free recommendation reads
  such a domain (as a target). Some empty labels in a labelled domain stay
  an error, and so does a label column absent from every file.
* **Labels are the user's.** Labels are matched by value across files and
  types: ``1``, ``1.0`` and ``"1"`` are one class, ``"1"``; other text is
  taken as it is, with surrounding spaces removed. The classes are the
  sorted union of all domains' labels (numerically when every label is a
  number, else as text), so a class is the same in every domain. Two
  domains that share no label (source ``bad``/``good``, target ``0``/``1``)
  are a ``DegenerateResultWarning`` naming both files and label sets; the
  pipeline refuses such a pair.
* **Missing values** are an error by default; ``missing: median`` (or
  ``mean``) imputes each feature with a statistic of its non-missing
  values, of the domain itself (``impute_from: domain``) or of every domain
  pooled (``impute_from: all``). Labels are never read to do it. An
  infinite value counts as missing.
"""

from __future__ import annotations

import csv
import difflib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from otfs._checks import DegenerateResultWarning, constant_columns, file_sha256
from otfs.datasets._readers import DATASET_READERS, NO_LABEL, DatasetReader, DomainFeatures, check_param

FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".npz": "npz", ".h5": "hdf5", ".hdf5": "hdf5"}
KINDS = ("csv", "tsv", "parquet", "npz", "hdf5")
MISSING = ("error", "median", "mean")
IMPUTE_FROM = ("domain", "all")
#: Cells read as missing in a feature column (pandas' defaults); a label is missing only when empty.
NA_TOKENS = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
             "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
#: Raw values above this magnitude are refused: their squares (z-score, squared distances over up to ~10^7
#: samples or features) overflow float64.
LARGEST_VALUE = 1e150
#: A column whose every non-zero value is below this magnitude has squares that underflow: it acts as 0.
SMALLEST_VALUE = 1e-146
_SHOWN = 5  # lines quoted per problem


def canonical_label(value):
    """The class a label value stands for: ``(text, number or None)``.

    Numbers (and text that reads as one) that are whole become their
    integer text (``1``, ``1.0``, ``"1"``, ``" 1 "`` -> ``"1"``); other numbers
    their shortest float text (``"1.5"``); booleans ``"True"``/``"False"``;
    other text is stripped of surrounding spaces. A missing value (None,
    NaN, empty text) is ``(None, None)``.
    """
    if value is None:
        return None, None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)), None
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None, None
        try:
            number = float(text)
        except ValueError:
            return text, None
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return str(value).strip() or None, None
    if np.isnan(number):
        return None, None
    if np.isinf(number):
        return ("inf" if number > 0 else "-inf"), number
    if number.is_integer():
        return str(int(number)), number
    return repr(number), number


def sort_classes(labels: Mapping[str, float | None]) -> list[str]:
    """Canonical labels (text -> number or None) in class order: by number when all are numbers, else
    by text."""
    if labels and all(v is not None for v in labels.values()):
        return sorted(labels, key=lambda t: (labels[t], t))
    return sorted(labels)


def _lines(rows, base: int, unit: str) -> str:
    rows = [int(r) + base for r in rows]
    shown = ", ".join(str(r) for r in rows[:_SHOWN])
    return f"{unit}{'s' if len(rows) > 1 else ''} {shown}{', ...' if len(rows) > _SHOWN else ''}"


@dataclass
class _Table:
    """One domain's file as read: features by name (float, NaN where missing), canonical labels, and what
    is wrong with it."""

    path: Path
    names: list[str]
    X: np.ndarray
    labels: list
    numbers: dict
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: np.ndarray | None = None
    unlabelled: bool = False


@DATASET_READERS.register("tabular")
class TabularReader(DatasetReader):
    """One file per domain, holding the features and a label column.

    Tables (CSV, TSV, Parquet): every column but ``label`` is a feature,
    unless ``features`` lists them; columns are taken by name. Arrays
    (``.npz``, HDF5): the matrix ``features`` (default ``"X"``) and the
    vector ``label`` (default ``"y"`` there), features named ``names`` or
    ``x0, x1, ...``. Files are read in place (a path relative to the working
    directory, the repository root in the pipeline), and a file whose
    ``sha256`` is given must match it. The module docstring says how
    labels, columns and missing values are treated.

    Parameters
    ----------
    files : mapping of domain to path
    label : str, default="label" (tables) or "y" (arrays)
    features : list of str, or str, optional
        Tables: the feature columns (default all but ``label``); arrays: the
        matrix's key (default ``"X"``).
    sha256 : mapping of domain to hex digest, optional
    format : {"csv", "tsv", "parquet", "npz", "hdf5"}, optional
        The files' format when their suffix does not say it (e.g. ``.data``).
    sep : str, optional
        The field separator of a CSV or TSV file: one character, or
        ``"whitespace"`` for runs of spaces and tabs (default ``,`` for
        CSV, a tab for TSV).
    header : bool, default=True
        Whether a CSV or TSV file's first line names its columns. Without
        one, ``names`` names them.
    names : list of str, optional
        Tables: the names of the columns, in file order (required with
        ``header: false``; with a header, they replace it). Arrays: the
        names of the features.
    na_values : list of str, optional
        More cell texts that mean "missing" in a feature column (besides
        empty cells, ``NaN``, ``NA``, ``null``, ...).
    missing : {"error", "median", "mean"}, default="error"
        What a missing (or infinite) feature value does: an error listing
        every one, or imputation by the feature's median or mean.
    impute_from : {"domain", "all"}, default="domain"
        Whose values the imputation statistic is computed from: the
        domain's own, or every domain's pooled. Labels are never used.
    """

    def __init__(self, files: Mapping[str, str], label: str | None = None,
                 features: Sequence[str] | str | None = None, sha256: Mapping[str, str] | None = None,
                 format: str | None = None, sep: str | None = None, header: bool = True,
                 names: Sequence[str] | None = None, na_values: Sequence[str] | None = None,
                 missing: str = "error", impute_from: str = "domain"):
        if not isinstance(files, Mapping) or not files:
            raise ValueError("files: give one file per domain, {domain: path}")
        for domain, path in files.items():
            if not isinstance(path, str) or not path:
                raise ValueError(f"files.{domain}: a path is text, got {path!r}")
        check_param("label", label, str, optional=True)
        check_param("format", format, str, optional=True, choices=KINDS)
        check_param("sep", sep, str, optional=True)
        check_param("header", header, bool)
        check_param("missing", missing, str, choices=MISSING)
        check_param("impute_from", impute_from, str, choices=IMPUTE_FROM)
        if sep is not None and sep != "whitespace" and len(sep) != 1:
            raise ValueError(f"sep: one character, or 'whitespace'; got {sep!r}")
        for key, value in (("names", names), ("na_values", na_values)):
            if value is not None and (isinstance(value, str) or not isinstance(value, Sequence)
                                      or not all(isinstance(v, str) and v for v in value)):
                raise ValueError(f"{key}: a list of non-empty texts, got {value!r}")
        if isinstance(features, str) and not features:
            raise ValueError("features: a list of column names (tables), or the features' array key (arrays)")
        if isinstance(features, str) and any(self._kind_of(p, format) not in ("npz", "hdf5") for p in files.values()):
            raise ValueError(f"features: a list of column names for a table, got the text {features!r}; write "
                             f"[{features}]")
        if features is not None and not isinstance(features, str):
            if not isinstance(features, Sequence) or not all(isinstance(f, str) and f for f in features) \
                    or not features:
                raise ValueError(f"features: a list of column names, got {features!r}")
        for what, listed in (("features", features), ("names", names)):
            if listed is not None and not isinstance(listed, str):
                twice = sorted({n for n in listed if list(listed).count(n) > 1})
                if twice:
                    raise ValueError(f"{what}: {twice} listed twice (each column once)")
        if format is None:
            for domain, path in files.items():
                if Path(str(path)).suffix.lower() not in FORMATS:
                    raise ValueError(f"files.{domain}: {path!r} has none of the suffixes {sorted(FORMATS)}; "
                                     f"name the format with format: one of {list(KINDS)}")
        if not header and names is None:
            kinds = {self._kind_of(p, format) for p in files.values()}
            if kinds & {"csv", "tsv"}:
                raise ValueError("header: false needs names: the name of every column, in file order")
        unknown = sorted(set(sha256 or {}) - set(files))
        if unknown:
            raise ValueError(f"sha256: no file for the domain(s) {unknown}")
        for domain, digest in (sha256 or {}).items():
            if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdefABCDEF" for c in digest):
                raise ValueError(f"sha256.{domain}: a SHA-256 is 64 hex digits, got {digest!r}")
        if features is not None and not isinstance(features, str) and label is not None and label in features:
            raise ValueError(f"features: lists the label column {label!r}; the label must not be a feature "
                             "(it would leak the answer)")
        self.files_, self.label, self.features, self.sha256 = dict(files), label, features, dict(sha256 or {})
        self.format, self.sep, self.header = format, sep, header
        self.names = None if names is None else list(names)
        self.na_values = list(na_values or [])
        self.missing, self.impute_from = missing, impute_from
        self._tables: dict[str, _Table] = {}
        self._disjoint_warned = False

    # -- the reader contract -------------------------------------------------------
    def files(self, domain):
        return []  # nothing to acquire: read in place (local_files)

    def local_files(self, domain):
        if domain not in self.files_:
            raise ValueError(f"no file for domain {domain!r} (files: {sorted(self.files_)})")
        return [Path(str(self.files_[domain]))]

    def count_features(self, domains, manifest):
        """The number of features, from the files' headers (tables) or shapes (arrays); the domains'
        columns must agree by name."""
        return len(self.feature_names(domains))

    def feature_names(self, domains=None) -> list[str]:
        """The features' names, the same in every domain (checked from the headers)."""
        domains = list(self.files_) if domains is None else list(domains)
        columns = {d: self._header(self._path(d)) for d in domains}
        return self._feature_columns(columns)

    def read(self, domain, paths, manifest):
        if domain not in self.files_:
            raise ValueError(f"no file for domain {domain!r} (files: {sorted(self.files_)})")
        tables = self._read_all()
        classes = self._classes(tables)
        self._warn_disjoint(tables)
        table = tables[domain]
        X = self._impute(domain, tables)
        index = {c: k for k, c in enumerate(classes, start=1)}
        if table.unlabelled:
            y = np.full(len(table.labels), NO_LABEL, dtype=np.int64)
        else:
            y = np.array([index[v] for v in table.labels], dtype=np.int64)
        for note in table.notes:
            warnings.warn(f"{table.path}: {note}", UserWarning, stacklevel=2)
        info = {"missing": self.missing, "impute_from": self.impute_from if self.missing != "error" else None,
                "imputed": self._imputed_counts(table)}
        if table.unlabelled:
            info["unlabelled"] = True
        return DomainFeatures(X, y, classes, feature_names=list(table.names), info=info)

    def inspect(self) -> dict:
        """Read and check every domain's file; one error lists every problem of every file.

        Returns ``{"features": [...], "classes": [...], "domains": {domain: {"rows": n, "labels":
        {class: count}, "unlabelled": bool, "missing": {feature: count}, "constant": [feature, ...]}}}``: what
        the pipeline checks before any job (rows per domain, classes per pair) and notes (features constant in
        a domain). An unlabelled domain's ``labels`` are empty.
        """
        tables = self._read_all()
        classes = self._classes(tables)
        self._warn_disjoint(tables)
        out = {"features": list(next(iter(tables.values())).names), "classes": classes, "domains": {}}
        for domain, t in tables.items():
            counts = {c: 0 for c in classes}
            for v in ([] if t.unlabelled else t.labels):
                counts[v] += 1
            X = self._impute(domain, tables)
            constant = [t.names[j] for j in constant_columns(X)] if X.shape[0] else []
            out["domains"][domain] = {"rows": len(t.labels), "labels": {c: n for c, n in counts.items() if n},
                                      "unlabelled": t.unlabelled, "missing": self._imputed_counts(t),
                                      "constant": constant}
        return out

    # -- reading -----------------------------------------------------------------------
    @staticmethod
    def _kind_of(path, fmt=None) -> str:
        return fmt or FORMATS.get(Path(str(path)).suffix.lower(), "csv")

    def _kind(self, path) -> str:
        return self._kind_of(path, self.format)

    def _path(self, domain) -> Path:
        if domain not in self.files_:
            raise ValueError(f"no file for domain {domain!r} (files: {sorted(self.files_)})")
        path = Path(str(self.files_[domain]))
        if not path.is_file():
            raise ValueError(f"{path}: no such file (the file of domain {domain!r})")
        if path.stat().st_size == 0:
            raise ValueError(f"{path}: empty file (0 bytes), the file of domain {domain!r}: it needs "
                             + ("the arrays of the features and the labels" if self._kind(path) in ("npz", "hdf5")
                                else "a header line (or header: false and names) and one line per sample"))
        return path

    def _label(self, path):
        return self.label or ("y" if self._kind(path) in ("npz", "hdf5") else "label")

    def _sep(self, path):
        if self.sep == "whitespace":
            return r"\s+"
        return self.sep or ("\t" if self._kind(path) == "tsv" else ",")

    def _header(self, path) -> list[str]:
        """The column names of a table (or the feature names of arrays), duplicates refused."""
        kind = self._kind(path)
        if kind in ("npz", "hdf5"):
            X, _ = self._arrays(path)
            d = int(np.shape(X)[1]) if np.ndim(X) == 2 else 0
            if np.ndim(X) != 2:
                raise ValueError(f"{path}: the features must be a 2-D matrix, got shape {np.shape(X)}")
            if self.names is not None and len(self.names) != d:
                raise ValueError(f"names: {len(self.names)} names for the {d} features of {path}")
            return [*(self.names or [f"x{i}" for i in range(d)]), self._label(path)]
        if kind == "parquet":
            import pyarrow.parquet as pq

            try:
                names = [str(n) for n in pq.read_schema(path).names]
            except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
                raise ValueError(f"{path}: not a readable parquet file ({exc})") from exc
            if self.names is not None:
                if len(self.names) != len(names):
                    raise ValueError(f"names: {len(self.names)} names for the {len(names)} columns of {path}")
                names = list(self.names)
        else:
            try:
                with open(path, encoding="utf-8-sig", newline="") as fh:
                    first = fh.readline()
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}: not a text file in UTF-8 ({exc})") from exc
            if self.sep == "whitespace":
                names = first.split()
            else:
                names = next(csv.reader([first], delimiter=self._sep(path)), [])
            names = [n.strip() for n in names]
            if not any(names):
                raise ValueError(f"{path}: the first line " + ("names no column (is the file empty, or has it no "
                                 "header? then set header: false and names)" if self.header else "is empty"))
            if self.names is not None:
                if len(self.names) != len(names):
                    raise ValueError(f"names: {len(self.names)} names for the {len(names)} columns of {path} "
                                     f"(its first line: {first.strip()[:80]!r}; is sep right?)")
                names = list(self.names)
        empty = [i + 1 for i, n in enumerate(names) if not n]
        if empty and self.features is None:
            raise ValueError(f"{path}: column(s) {empty} have no name (an index written by pandas' to_csv? write "
                             "the file with index=False), so they cannot be taken by name; name them, or list the "
                             "features to use")
        names = [n or f"(unnamed column {i + 1})" for i, n in enumerate(names)]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"{path}: the column name(s) {twice} appear more than once; name every column once")
        return names

    def _feature_columns(self, columns: Mapping[str, list[str]]) -> list[str]:
        """The feature names (in the first file's order, or ``features``'), checked against every file."""
        problems = []
        first_domain = next(iter(columns))
        paths = {d: self._path(d) for d in columns}
        # a domain without the label column is an unlabelled target, unless a column's name is close to the
        # label's (a misspelt label); without it in every file, a misnamed label
        lacking = {d: names for d, names in columns.items() if self._label(paths[d]) not in names}
        for domain, names in lacking.items():
            label = self._label(paths[domain])
            close = difflib.get_close_matches(label, names, n=1)
            if close or len(lacking) == len(columns):
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append(f"{paths[domain]}: no label column {label!r}{hint} (columns: {names}); an "
                                "unlabelled target may lack it, but the source needs its labels")
        if isinstance(self.features, str) or self._kind(paths[first_domain]) in ("npz", "hdf5"):
            feats = [n for n in columns[first_domain] if n != self._label(paths[first_domain])]
        elif self.features is not None:
            feats = list(self.features)
            for domain, names in columns.items():
                label = self._label(paths[domain])
                if label in feats:
                    problems.append(f"features: lists the label column {label!r}; the label must not be a "
                                    "feature (it would leak the answer)")
                    break
            for domain, names in columns.items():
                for f in feats:
                    if f not in names:
                        close = difflib.get_close_matches(f, names, n=1)
                        hint = f" (did you mean {close[0]!r}?)" if close else ""
                        problems.append(f"{paths[domain]}: no column {f!r}{hint}, which features lists "
                                        f"(columns: {names})")
        else:
            label = self._label(paths[first_domain])
            feats = [n for n in columns[first_domain] if n != label]
            for domain, names in columns.items():
                own = [n for n in names if n != self._label(paths[domain])]
                for f in feats:
                    if f not in own:
                        problems.append(f"{paths[domain]}: no column {f!r}, which {paths[first_domain]} has "
                                        f"(domain {first_domain!r}); every domain needs the same columns, or "
                                        "list the features to use")
                for f in own:
                    if f not in feats:
                        problems.append(f"{paths[domain]}: column {f!r} is in no other domain's file "
                                        f"({paths[first_domain]} lacks it); every domain needs the same columns, "
                                        "or list the features to use")
        if problems:
            raise ValueError("\n".join(dict.fromkeys(problems)))
        if not feats:
            raise ValueError(f"{paths[first_domain]}: no feature column (only the label)")
        return feats

    def _read_all(self) -> dict[str, _Table]:
        """Every domain's file, read and checked (once per reader); one error lists every problem."""
        if self._tables:
            return self._tables
        columns = {d: self._header(self._path(d)) for d in self.files_}
        feats = self._feature_columns(columns)
        problems = []
        for domain in self.files_:
            path = self._path(domain)
            if domain in self.sha256:
                found = file_sha256(path)
                if found != self.sha256[domain].lower():
                    problems.append(f"{path}: SHA-256 {found}, but the configuration says {self.sha256[domain]}")
                    continue
            table = self._load(path, columns[domain], feats)
            problems += [f"{path}: {p}" for p in table.problems]
            self._tables[domain] = table
        if not problems and all(t.unlabelled for t in self._tables.values()):
            problems.append(f"{self._path(next(iter(self.files_)))}: no domain has a label (the label column "
                            f"{self._label(self._path(next(iter(self.files_))))!r} is absent or empty in every "
                            "file); the source needs its labels")
        if problems:
            self._tables = {}
            n_files = len({p.split(": ", 1)[0] for p in problems})
            advice = ["missing values: fix them, or impute them with the reader's parameter missing: median (or "
                      "mean; docs/your-dataset.md)"] if any(" cell(s) (" in p and "NaN" in p for p in problems) else []
            raise ValueError(f"{len(problems)} problem(s) in {n_files} file(s):\n" + "\n".join(problems + advice))
        return self._tables

    def _load(self, path: Path, columns: list[str], feats: list[str]) -> _Table:
        kind = self._kind(path)
        label = self._label(path)
        if kind in ("npz", "hdf5"):
            X, labels = self._arrays(path)
            X = np.asarray(X)
            labels = np.full(X.shape[0] if X.ndim else 0, None, dtype=object) if labels is None else \
                np.asarray(labels).ravel()
            if labels.shape[0] != X.shape[0]:
                return _Table(path, feats, np.empty((0, len(feats))), [], {},
                              [f"features of shape {X.shape} and {labels.shape[0]} labels"])
            if X.dtype.kind not in "biuf":
                return _Table(path, feats, np.empty((0, len(feats))), [], {},
                              [f"the features are of type {X.dtype}, not numbers"])
            values = X.astype(np.float64)
            raw_labels = labels.tolist()
            base, unit = 0, "row"
        else:
            values, raw_labels, problems, text_cells = self._table_values(
                path, kind, columns, feats, label if label in columns else None)
            if values is None:  # unreadable
                return _Table(path, feats, np.empty((0, len(feats))), [], {}, problems)
            base, unit = (0, "row") if kind == "parquet" else (2 if self.header else 1, "line")
            table = self._check(path, feats, values, raw_labels, label, base, unit, text_cells)
            table.problems[:0] = problems
            return table
        return self._check(path, feats, values, raw_labels, label, base, unit)

    def _table_values(self, path, kind, columns, feats, label):
        """The features (float, NaN where missing or not a number) and raw labels of a table, by name; a table
        without the label column (``label`` None) has no label in every row."""
        import pandas as pd

        problems = []
        try:
            if kind == "parquet":
                df = pd.read_parquet(path)
                df.columns = columns  # the schema's names, or names
                df = df[[*feats, *([label] if label else [])]]
                na = set(NA_TOKENS) | set(self.na_values)
                for f in feats:
                    if df[f].dtype == object:
                        df[f] = df[f].map(lambda v: None if isinstance(v, str) and v.strip() in na else v)
            else:
                na = {**{f: [*NA_TOKENS, *self.na_values] for f in feats}, **({label: [""]} if label else {})}
                # the header line (if any) is replaced by the names read from it (stripped: _header), so the
                # columns are taken by the same names whatever the spacing
                df = pd.read_csv(path, sep=self._sep(path), header=0 if self.header else None, names=columns,
                                 usecols=[*feats, *([label] if label else [])], keep_default_na=False,
                                 na_values=na, dtype={label: object} if label else None,
                                 engine="python" if self.sep == "whitespace" else "c", encoding="utf-8-sig")
        except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
            return None, None, [f"not a readable {kind} table ({exc})"], None
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors for a damaged Parquet file
            return None, None, [f"not a readable {kind} table ({type(exc).__name__}: {exc})"], None
        base = 0 if kind == "parquet" else (2 if self.header else 1)
        unit = "row" if kind == "parquet" else "line"
        values = np.empty((len(df), len(feats)), dtype=np.float64)
        text_cells = np.zeros(values.shape, dtype=bool)
        for j, f in enumerate(feats):
            col = df[f]
            if col.dtype.kind in "biuf":
                values[:, j] = col.to_numpy(dtype=np.float64)
                continue
            text = col.astype(object)
            numeric = pd.to_numeric(text.map(lambda v: v.strip() if isinstance(v, str) else v), errors="coerce")
            bad = numeric.isna().to_numpy() & text.notna().to_numpy()
            text_cells[:, j] = bad
            if bad.any():
                rows = np.flatnonzero(bad)
                shown = "; ".join(f"{unit} {r + base}: {text.iloc[r]!r}" for r in rows[:_SHOWN])
                problems.append(f"column {f!r} has {bad.sum()} non-numeric cell(s) ({shown}"
                                f"{'; ...' if rows.size > _SHOWN else ''})")
            values[:, j] = numeric.to_numpy(dtype=np.float64, na_value=np.nan)
        return values, (df[label].tolist() if label else [None] * len(df)), problems, text_cells

    def _check(self, path, feats, values, raw_labels, label, base, unit, text_cells=None) -> _Table:
        """Canonical labels, and every problem of the features: missing and infinite cells (unless
        imputed), values too large, no row."""
        problems, notes = [], []
        n = values.shape[0]
        if n == 0:
            problems.append("no sample (no data line)")
        labels, numbers = [], {}
        missing_labels = []
        for i, v in enumerate(raw_labels):
            text, number = canonical_label(v)
            if text is None:
                missing_labels.append(i)
            labels.append(text)
            if text is not None:
                numbers[text] = number
        unlabelled = n > 0 and len(missing_labels) == n
        if missing_labels and not unlabelled:
            problems.append(f"column {label!r} (the label) has {len(missing_labels)} empty or missing cell(s) "
                            f"({_lines(missing_labels, base, unit)}); every sample of a labelled domain needs a "
                            "label (an unlabelled target leaves the whole column empty, or has none)")
        finite = np.isfinite(values)
        missing = ~finite
        if text_cells is not None:
            missing &= ~text_cells  # told apart: a non-numeric cell is not a missing one
        for j, f in enumerate(feats):
            bad = np.flatnonzero(missing[:, j])
            if bad.size:
                infinite = int(np.isinf(values[bad, j]).sum())
                what = "empty, NaN or infinite" if infinite else "empty or NaN"
                if bad.size == n and n and (self.missing == "error" or self.impute_from == "domain"):
                    problems.append(f"column {f!r} has no value at all ({n} {what} cells): nothing to impute "
                                    "it from in this domain; drop it from features, or impute_from: all")
                elif bad.size == n and n:
                    notes.append(f"column {f!r} has no value in this file: imputed from the other domains, it is "
                                 "constant here")
                elif self.missing == "error":
                    problems.append(f"column {f!r} has {bad.size} {what} cell(s) ({_lines(bad, base, unit)})")
            col = np.abs(values[finite[:, j], j])
            if col.size and col.max() > LARGEST_VALUE:
                r = int(np.flatnonzero(np.abs(np.where(finite[:, j], values[:, j], 0)) > LARGEST_VALUE)[0])
                problems.append(f"column {f!r} has values up to {col.max():.3g} ({unit} {r + base}), whose squares "
                                f"overflow float64 (z-scores and distances would be infinite); rescale the "
                                f"column so that its values stay below {LARGEST_VALUE:.0e} (divide it by a power of "
                                "ten, or take its logarithm)")
            nonzero = col[col > 0]
            if nonzero.size and nonzero.max() < SMALLEST_VALUE:
                notes.append(f"column {f!r}: every value is below {SMALLEST_VALUE:.0e} in magnitude; their squares "
                             "underflow, so the column acts as a constant 0 (multiply it by a power of ten if it "
                             "matters)")
        return _Table(path, feats, values, labels, numbers, problems, notes, missing, unlabelled)

    def _arrays(self, path):
        kind, label = self._kind(path), self._label(path)
        key = self.features if isinstance(self.features, str) else "X"
        try:
            if kind == "npz":
                with np.load(path, allow_pickle=False) as data:
                    found = list(data.keys())
                    if key not in found:
                        raise ValueError(f"{path}: needs the arrays {key!r} and {label!r} (has {found}; an "
                                         "unlabelled target may lack the labels)")
                    return data[key], (data[label] if label in found else None)
            import h5py

            with h5py.File(path, "r") as h5:
                found = list(h5.keys())
                if key not in found:
                    raise ValueError(f"{path}: needs the datasets {key!r} and {label!r} (has {found}; an "
                                     "unlabelled target may lack the labels)")
                if label not in found:
                    return h5[key][()], None
                labels = h5[label][()]
                if labels.dtype.kind in "SO":
                    labels = h5[label].asstr()[()]
                return h5[key][()], labels
        except (OSError, EOFError) as exc:
            raise ValueError(f"{path}: not a readable {kind} file ({exc})") from exc
        except ValueError as exc:
            if str(path) in str(exc):
                raise
            raise ValueError(f"{path}: not a readable {kind} file ({exc})") from exc

    # -- labels and missing values ---------------------------------------------------
    @staticmethod
    def _classes(tables: Mapping[str, _Table]) -> list[str]:
        numbers = {}
        for t in tables.values():
            numbers.update(t.numbers)
        return sort_classes(numbers)

    def _warn_disjoint(self, tables: Mapping[str, _Table]) -> None:
        """Warn, once per reader, for every two domains that share no label: their classes would be read as
        different classes (source ``bad``/``good`` and target ``0``/``1`` as four), and every accuracy on the
        pair would be 0."""
        if self._disjoint_warned:
            return
        self._disjoint_warned = True
        labels = {d: [] if t.unlabelled else sorted(set(t.labels)) for d, t in tables.items()}
        domains = list(labels)
        for i, a in enumerate(domains):
            for b in domains[i + 1:]:
                if labels[a] and labels[b] and not set(labels[a]) & set(labels[b]):
                    warnings.warn(f"{tables[a].path} (domain {a!r}, labels {labels[a]}) and {tables[b].path} (domain "
                                  f"{b!r}, labels {labels[b]}) share no label: their classes are read as "
                                  f"{len(labels[a]) + len(labels[b])} different classes, and every accuracy on the pair "
                                  "would be 0 (are the labels written the same way in both files?)",
                                  DegenerateResultWarning, stacklevel=3)

    @staticmethod
    def _imputed_counts(table: _Table) -> dict[str, int]:
        if table.missing is None:
            return {}
        counts = table.missing.sum(axis=0)
        return {name: int(c) for name, c in zip(table.names, counts, strict=True) if c}

    def _impute(self, domain: str, tables: Mapping[str, _Table]) -> np.ndarray:
        """The domain's features, missing cells replaced by the feature's median or mean over the domain's
        other rows (or every domain's, pooled); no label is read."""
        table = tables[domain]
        X = table.X.copy()
        if not table.missing.any():
            return X
        pool = np.vstack([t.X for t in tables.values()]) if self.impute_from == "all" else table.X
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            finite = np.where(np.isfinite(pool), pool, np.nan)
            stat = np.nanmedian(finite, axis=0) if self.missing == "median" else np.nanmean(finite, axis=0)
        rows, cols = np.nonzero(table.missing)
        X[rows, cols] = stat[cols]
        return X
