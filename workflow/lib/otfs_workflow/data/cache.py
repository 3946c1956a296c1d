"""The HDF5 feature cache: one file per feature set, preprocessed once.

The pipeline writes one file per feature set and domain
(``data/cache/<feature set>/<domain>.h5``), so a domain whose raw file is
missing blocks only the pairs that need it; the format itself holds any
number of domains. Layout::

    /                     attrs: format, feature_set, dataset, preprocessing (JSON),
                                 class_names (JSON), versions (JSON), created_by
    /<domain>/X           float64 (n, d), preprocessed features
    /<domain>/y           int64 (n,), labels 1..K
    /<domain>/ids         str (n,), optional: what each sample is (e.g. its image path)
    /<domain>             attrs: source_path, source_git_blob_sha1, n_samples, read_info (JSON: how the
                                 reader read it, e.g. the missing values imputed per feature),
                                 constant_features (JSON: names of the features constant after preprocessing)
    /_meta/feature_names  str (d,), optional: the features' names (a user's column names); without it the
                          features are named by their index, "0", "1", ...

``source_git_blob_sha1`` is the git blob SHA-1 of the source file, or for a
folder of images the digest of :func:`otfs_workflow.data.images.images_digest`.

Later stages read only this file, so an expensive extraction or a slow
``.mat`` parse happens once.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from otfs._checks import constant_columns
from otfs.preprocessing import apply_steps
from otfs_workflow.io import atomic_path
from otfs_workflow.provenance import package_versions

__all__ = [
    "CACHE_FORMAT",
    "CacheError",
    "DomainData",
    "FeatureCache",
    "read_cache",
    "read_domains",
    "write_cache",
]

CACHE_FORMAT = "otfs-feature-cache/1"
#: The group of a cache file that is not a domain (domain names start with a letter or a digit).
META = "_meta"


class CacheError(ValueError):
    """A feature cache is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class DomainData:
    """Preprocessed features of one domain."""

    name: str
    X: np.ndarray
    y: np.ndarray
    source_path: str = ""
    source_git_blob_sha1: str = ""
    sample_ids: tuple[str, ...] = ()
    read_info: dict = field(default_factory=dict)

    @property
    def labelled(self) -> bool:
        """False for an unlabelled domain (a target whose file has no labels: ``read_info["unlabelled"]``)."""
        return not self.read_info.get("unlabelled", False)


@dataclass(frozen=True)
class FeatureCache:
    """Contents of a feature cache file."""

    path: Path
    feature_set: str
    class_names: list[str]
    preprocessing: list[str]
    attrs: dict
    domains: dict
    stored_feature_names: tuple[str, ...] = ()

    @property
    def n_features(self) -> int:
        return next(iter(self.domains.values())).X.shape[1]

    @property
    def feature_names(self) -> list[str]:
        """The features' names: the stored ones (a user's columns), else their indices as text."""
        return list(self.stored_feature_names) or [str(i) for i in range(self.n_features)]

    def domain(self, name: str, labels: bool = True) -> DomainData:
        """The domain ``name``; with ``labels`` (the default) an unlabelled domain is an error naming it: every
        step but the label-free recommendation reads the labels of the domains it is given."""
        try:
            dom = self.domains[name]
        except KeyError:
            raise CacheError(
                f"{self.path}: no domain {name!r} (has {sorted(self.domains)})"
            ) from None
        if labels and not dom.labelled:
            raise CacheError(
                f"{self.path}: the domain {name!r} has no labels (its file has no label column, or an empty "
                "one): this step needs them (a source's labels, or a target's to measure an accuracy); only "
                "the label-free recommendation (snakemake recommend) runs on an unlabelled target"
            )
        return dom


def write_cache(
    path: str | os.PathLike,
    *,
    feature_set: str,
    dataset: str,
    domains: Mapping[str, DomainData],
    class_names: Sequence[str],
    preprocessing: Sequence[str],
    extra_attrs: Mapping[str, object] | None = None,
    feature_names: Sequence[str] | None = None,
) -> None:
    """Preprocess raw domains and write them to an HDF5 cache, atomically.

    Parameters
    ----------
    path : path
        Output file.
    feature_set, dataset : str
        Names recorded as attributes.
    domains : mapping of name to DomainData
        Raw (not yet preprocessed) features and labels.
    class_names : sequence of str
        Name of class ``k`` at position ``k - 1``.
    preprocessing : sequence of str
        Steps of :data:`otfs.preprocessing.STEPS`, applied per domain.
    extra_attrs : mapping, optional
        More root attributes (JSON-encoded when not a scalar or string).
    feature_names : sequence of str, optional
        The features' names (distinct), stored in ``/_meta/feature_names``.

    Warns
    -----
    DegenerateResultWarning
        Features that are constant in a domain after preprocessing, by name
        (they carry nothing there; a z-score leaves a column whose spread is
        below ``10 * eps`` unscaled, so a tiny-valued column counts too).
    """
    if not domains:
        raise CacheError(f"{path}: no domain to write")
    widths = {name: dom.X.shape[1] for name, dom in domains.items()}
    if len(set(widths.values())) != 1:
        raise CacheError(f"{path}: domains disagree on the number of features: {widths}")
    with atomic_path(path) as tmp, h5py.File(tmp, "w", track_order=True) as h5:
        h5.attrs["format"] = CACHE_FORMAT
        h5.attrs["feature_set"] = feature_set
        h5.attrs["dataset"] = dataset
        h5.attrs["preprocessing"] = json.dumps(list(preprocessing))
        h5.attrs["class_names"] = json.dumps(list(class_names))
        h5.attrs["versions"] = json.dumps(package_versions(), sort_keys=True)
        for key, value in (extra_attrs or {}).items():
            is_plain = isinstance(value, (str, int, float, np.integer, np.floating))
            h5.attrs[key] = value if is_plain else json.dumps(value, sort_keys=True)
        names = [str(n) for n in feature_names or ()]
        if names:
            if len(names) != next(iter(widths.values())) or len(set(names)) != len(names):
                raise CacheError(f"{path}: {len(names)} feature names ({len(set(names))} distinct) for "
                                 f"{next(iter(widths.values()))} features")
            h5.create_group(META).create_dataset("feature_names", data=names, dtype=h5py.string_dtype(),
                                                 track_times=False)
        for name, dom in domains.items():
            if name == META:
                raise CacheError(f"{path}: {META!r} is not a domain name")
            g = h5.create_group(name)
            X = apply_steps(dom.X, preprocessing)
            constant = [names[j] if names else str(j) for j in constant_columns(X)]
            if constant:
                from otfs._checks import DegenerateResultWarning

                shown = ", ".join(repr(c) for c in constant[:20]) + (" ..." if len(constant) > 20 else "")
                warnings.warn(f"{feature_set}/{name}: {len(constant)} of {X.shape[1]} features are constant after "
                              f"preprocessing {list(preprocessing)} ({shown}): they carry nothing in this domain",
                              DegenerateResultWarning, stacklevel=2)
            g.attrs["constant_features"] = json.dumps(constant)
            if dom.read_info:
                g.attrs["read_info"] = json.dumps(dom.read_info, sort_keys=True)
            g.create_dataset("X", data=X, track_times=False)
            g.create_dataset("y", data=np.asarray(dom.y, dtype=np.int64), track_times=False)
            if dom.sample_ids:
                if len(dom.sample_ids) != dom.X.shape[0]:
                    raise CacheError(f"{path}: {name}: {len(dom.sample_ids)} sample ids for {dom.X.shape[0]} samples")
                g.create_dataset("ids", data=list(dom.sample_ids), dtype=h5py.string_dtype(), track_times=False)
            g.attrs["source_path"] = dom.source_path
            g.attrs["source_git_blob_sha1"] = dom.source_git_blob_sha1
            g.attrs["n_samples"] = int(dom.X.shape[0])


def read_cache(path: str | os.PathLike, domains: Sequence[str] | None = None) -> FeatureCache:
    """Read a feature cache (all domains, or only ``domains``)."""
    path = Path(path)
    if not path.is_file():
        raise CacheError(f"{path}: feature cache not found")
    try:
        h5 = h5py.File(path, "r")
    except OSError as exc:
        raise CacheError(f"{path}: not a readable HDF5 file ({exc}); delete it and rerun") from exc
    with h5:
        if h5.attrs.get("format") != CACHE_FORMAT:
            raise CacheError(
                f"{path}: format {h5.attrs.get('format')!r}, expected {CACHE_FORMAT!r}; "
                "delete it and rerun"
            )
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in h5.attrs.items()}
        names = [k for k in h5.keys() if k != META] if domains is None else list(domains)
        stored = tuple(h5[META]["feature_names"].asstr()[()]) if META in h5 else ()
        out = {}
        for name in names:
            if name not in h5:
                raise CacheError(f"{path}: no domain {name!r} (has {sorted(k for k in h5.keys() if k != META)})")
            g = h5[name]
            out[name] = DomainData(
                name=name,
                X=g["X"][()],
                y=g["y"][()],
                source_path=str(g.attrs.get("source_path", "")),
                source_git_blob_sha1=str(g.attrs.get("source_git_blob_sha1", "")),
                sample_ids=tuple(g["ids"].asstr()[()]) if "ids" in g else (),
                read_info=json.loads(g.attrs.get("read_info", "{}")),
            )
    return FeatureCache(
        path=path,
        feature_set=str(attrs["feature_set"]),
        class_names=json.loads(attrs["class_names"]),
        preprocessing=json.loads(attrs["preprocessing"]),
        attrs=attrs,
        domains=out,
        stored_feature_names=stored,
    )


def read_domains(paths: Mapping[str, str | os.PathLike]) -> FeatureCache:
    """Read one domain from each of several cache files into one :class:`FeatureCache`.

    ``paths`` maps a domain name to the file holding it. All files must
    describe the same feature set, with the same features and classes.
    """
    if not paths:
        raise CacheError("read_domains needs at least one cache file")
    caches = [read_cache(path, domains=[domain]) for domain, path in paths.items()]
    first = caches[0]
    for c in caches[1:]:
        if (c.feature_set, c.n_features, c.class_names, c.preprocessing, c.feature_names) != (
            first.feature_set, first.n_features, first.class_names, first.preprocessing, first.feature_names
        ):
            raise CacheError(f"{c.path} and {first.path} describe different feature sets")
    domains = {name: c.domain(name, labels=False) for c, name in zip(caches, paths, strict=True)}
    return FeatureCache(
        path=first.path,
        feature_set=first.feature_set,
        class_names=first.class_names,
        preprocessing=first.preprocessing,
        attrs=first.attrs,
        domains=domains,
        stored_feature_names=first.stored_feature_names,
    )
