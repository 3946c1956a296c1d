"""Dataset readers: how the domains of a dataset are read from its files (the dataset plug-ins).

A feature set of the configuration names its reader and the reader's
parameters::

    feature_sets:
      surf:
        dataset: office-caltech          # where the files come from: manifest, local folder, mirrors, download
        reader: {name: mat, folder: surf}
        preprocessing: [row_sum_normalize, zscore]

(``folder: surf`` alone is the shorthand of the paper's released files,
``reader: {name: mat, folder: surf}``.) A reader is a class with its
parameters in ``__init__`` and three methods:

``files(domain)``
    The manifest paths of the files one domain is read from (``[]`` for a
    dataset that needs none, e.g. a generated one). The pipeline acquires
    each with the dataset's hash-checked sources (local folder, mirrors,
    download) into ``data/raw/<dataset>/<path>``.
``local_files(domain)`` (optional)
    Files read in place, such as a user's own tables (default none): the
    pipeline makes them inputs of the cache job, so editing one reruns
    what depends on it; the reader checks them itself.
``count_features(domains, manifest)``
    The number of features of those domains, known before any job runs
    (from the manifest, or the reader's parameters), so a config asking for
    more is refused at once.
``read(domain, paths, manifest)``
    A :class:`DomainFeatures`: the raw features and labels ``1..K`` with the
    class names. The cache stage verifies every file against its hash
    first, then preprocesses and caches what ``read`` returns.

Every module of :mod:`otfs.datasets` registers its readers when the
registry is first read; another package registers one with an entry point
of the group ``otfs.datasets``. ``docs/extending.md`` has a worked
example.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from otfs.registry import Registry

__all__ = ["DATASET_READERS", "NO_LABEL", "DatasetReader", "DomainFeatures", "check_param", "get_reader",
           "reader_spec"]

#: The label of every sample of an unlabelled domain (``info["unlabelled"]``): a target whose file has no
#: label, which only the label-free recommendation reads (the classes are ``1..K``).
NO_LABEL = 0

#: Dataset readers by name (entry-point group ``otfs.datasets``).
DATASET_READERS = Registry("dataset reader", "dataset readers", package="otfs.datasets")


@dataclass(frozen=True)
class DomainFeatures:
    """What a reader returns for one domain: raw features, labels ``1..K`` and the ``K`` class names; the
    features' names where the files have them (else none: the pipeline names them by index), and notes on
    how the values were read (``info``: e.g. how many missing values were imputed), kept with the cache.
    An unlabelled domain (``info["unlabelled"]``, a target without labels) has :data:`NO_LABEL` everywhere."""

    X: np.ndarray
    y: np.ndarray
    class_names: Sequence[str]
    sample_ids: Sequence[str] = field(default_factory=tuple)
    feature_names: Sequence[str] = field(default_factory=tuple)
    info: Mapping = field(default_factory=dict)

    def check(self, where: str) -> DomainFeatures:
        """The same, validated: a 2-D finite float matrix, one integer label in ``1..K`` per row, one
        distinct name per feature (where named)."""
        X = np.asarray(self.X, dtype=np.float64)
        y = np.asarray(self.y)
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"{where}: the features must be a non-empty 2-D matrix, got shape {X.shape}")
        bad = ~np.isfinite(X)
        if bad.any():
            rows, cols = np.nonzero(bad)
            raise ValueError(f"{where}: {int(bad.sum())} feature values are NaN or infinite "
                             f"(first at sample {rows[0]}, feature {cols[0]})")
        if y.shape != (X.shape[0],):
            raise ValueError(f"{where}: {y.shape} labels for {X.shape[0]} samples")
        k = len(self.class_names)
        if self.info.get("unlabelled"):
            if not np.issubdtype(y.dtype, np.integer) or np.any(y != NO_LABEL):
                raise ValueError(f"{where}: an unlabelled domain's labels must all be {NO_LABEL} (NO_LABEL)")
        elif not np.issubdtype(y.dtype, np.integer) or y.min() < 1 or y.max() > k:
            raise ValueError(f"{where}: labels must be integers in 1..{k} (one per class name), "
                             f"got values in [{y.min()}, {y.max()}]")
        names = [str(n) for n in self.feature_names]
        if names and (len(names) != X.shape[1] or len(set(names)) != len(names)):
            raise ValueError(f"{where}: {len(names)} feature names ({len(set(names))} distinct) for {X.shape[1]} "
                             "features")
        return DomainFeatures(X, y.astype(np.int64), list(self.class_names), tuple(self.sample_ids), tuple(names),
                              dict(self.info))


def check_param(name: str, value, kind, *, optional: bool = False, low=None, choices=None):
    """A reader's parameter of the right type and range, else a ``ValueError`` naming it.

    ``kind`` is ``int``, ``float``, ``bool`` or ``str`` (a YAML ``"7"`` is not an integer, nor ``true`` one);
    ``low`` a lower bound; ``choices`` the allowed values.
    """
    if value is None and optional:
        return
    if kind is int:
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    elif kind is float:
        ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)) \
            and bool(np.isfinite(value))
    else:
        ok = isinstance(value, kind)
    what = {int: "an integer", float: "a finite number", bool: "true or false", str: "a text"}[kind]
    if not ok:
        raise ValueError(f"{name}: {what}, got {value!r} ({type(value).__name__})")
    if low is not None and value < low:
        raise ValueError(f"{name}: {value!r} must be >= {low}")
    if choices is not None and value not in choices:
        raise ValueError(f"{name}: one of {list(choices)}, got {value!r}")


class DatasetReader:
    """Base class of the dataset readers (module docstring).

    Subclasses store their parameters in ``__init__`` (checked there: a
    bad value is a ``ValueError`` naming it) and implement the three methods.
    """

    def files(self, domain: str) -> list[str]:
        """Manifest paths that ``domain`` is read from."""
        raise NotImplementedError

    def local_files(self, domain: str) -> list:
        """Paths read in place for ``domain`` (not acquired); none by default."""
        return []

    def count_features(self, domains: Sequence[str], manifest) -> int:
        """The number of features of ``domains``, without reading the data (``manifest``: the dataset's, or
        None); domains that disagree are an error."""
        raise NotImplementedError

    def read(self, domain: str, paths: Mapping[str, Path], manifest) -> DomainFeatures:
        """The raw features of ``domain``; ``paths`` maps each of :meth:`files` to its verified copy (and
        each of :meth:`local_files` to itself)."""
        raise NotImplementedError


def reader_spec(fs_cfg: Mapping) -> tuple[str, dict] | None:
    """``(reader name, parameters)`` of a feature set's configuration; None for an extracted one.

    ``folder: F`` is the shorthand of ``reader: {name: mat, folder: F}``.
    """
    if "reader" in fs_cfg:
        params = dict(fs_cfg["reader"])
        return params.pop("name"), params
    if "folder" in fs_cfg:
        return "mat", {"folder": fs_cfg["folder"]}
    return None


def get_reader(name: str, params: Mapping | None = None) -> DatasetReader:
    """The registered reader ``name`` built with ``params`` (an unknown name lists the registered ones)."""
    return DATASET_READERS[name](**dict(params or {}))
