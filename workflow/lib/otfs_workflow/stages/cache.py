"""Stage ``cache``: build the HDF5 feature cache of one feature set and domain.

``run`` reads a domain's files with the feature set's dataset reader
(:mod:`otfs.datasets._readers`; the released ``.mat`` files are the ``mat``
reader's); ``run_extracted`` reads the output of the extraction stage. Both
write the same format.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

from otfs.datasets import get_reader, reader_spec
from otfs_workflow.data.acquisition import verify_file
from otfs_workflow.data.cache import DomainData, read_cache, write_cache
from otfs_workflow.data.manifest import git_blob_sha1, read_manifest

log = logging.getLogger(__name__)

#: Root attributes every cache writes for itself; an extraction output's
#: other attributes (extractor, transform, versions of torch...) are carried on.
_OWN_ATTRS = {"format", "feature_set", "dataset", "preprocessing", "class_names", "versions", "created_by", "reader"}


def run(feature_set: str, domain: str, fs_cfg: Mapping, manifest_path, raw_paths: Mapping[str, str],
        output, local_paths=()) -> None:
    """Read one domain with the feature set's dataset reader, verified and preprocessed, into ``output``.

    Parameters
    ----------
    feature_set, domain : str
    fs_cfg : mapping
        The feature set's configuration (``dataset``, ``reader`` or ``folder``, ``preprocessing``).
    manifest_path : path or None
        The dataset's manifest (None for a dataset with none).
    raw_paths : mapping of manifest path to the acquired copy
        One entry per file the reader reads the domain from (:meth:`DatasetReader.files`).
    output : path of the HDF5 cache
    local_paths : paths
        The files the reader reads in place (:meth:`DatasetReader.local_files`), recorded with their git
        blob SHA-1.
    """
    name, params = reader_spec(fs_cfg)
    reader = get_reader(name, params)
    problem = getattr(reader, "problem", "classification")
    if problem != "classification":
        raise ValueError(f"{feature_set}/{domain}: the {name} reader reads a {problem} problem; the benchmark's grid "
                         "(ranking, adaptation, 1-NN accuracy) needs class labels, so no feature cache is built for "
                         "it (docs/data-families.md)")
    manifest = read_manifest(manifest_path) if manifest_path else None
    wanted = reader.files(domain)
    if sorted(wanted) != sorted(raw_paths):
        raise ValueError(f"{feature_set}/{domain}: the {name} reader reads {wanted}, got the files {sorted(raw_paths)}")
    blobs = []
    for relpath in wanted:
        # The raw copy was verified when acquired; verify again in case it was replaced by hand since.
        entry = manifest.entry(relpath)
        verify_file(raw_paths[relpath], entry)
        blobs.append(entry.git_blob_sha1)
    local = [str(p) for p in local_paths]
    if sorted(local) != sorted(str(p) for p in reader.local_files(domain)):
        raise ValueError(f"{feature_set}/{domain}: the {name} reader reads {reader.local_files(domain)} in place, "
                         f"got {local}")
    blobs += [git_blob_sha1(p) for p in local]
    sources = [str(raw_paths[r]) for r in wanted] + local
    where = ", ".join(sources) or f"the {name} reader"
    paths = {**{r: Path(raw_paths[r]) for r in wanted}, **{p: Path(p) for p in local}}
    dom = reader.read(domain, paths, manifest).check(f"{feature_set}/{domain} ({where})")
    log.info("%s/%s: %d samples x %d features, read by %s", feature_set, domain, *dom.X.shape, name)
    if fs_cfg.get("max_samples"):
        dom = _subsample(feature_set, domain, dom, fs_cfg["max_samples"])
    write_cache(
        output,
        feature_set=feature_set,
        dataset=fs_cfg["dataset"],
        domains={domain: DomainData(domain, dom.X, dom.y, ";".join(sources), ",".join(blobs),
                                    sample_ids=tuple(dom.sample_ids), read_info=dict(dom.info))},
        class_names=dom.class_names,
        preprocessing=fs_cfg["preprocessing"],
        extra_attrs={"manifest": str(manifest_path or ""), "reader": {"name": name, **params}},
        feature_names=dom.feature_names,
    )
    if dom.info.get("imputed"):
        log.info("%s/%s: missing values imputed (%s, from %s): %s", feature_set, domain, dom.info["missing"],
                 dom.info["impute_from"], dom.info["imputed"])


def _subsample(feature_set: str, domain: str, dom, max_samples: int):
    """``dom`` cut to ``max_samples`` samples, stratified by class (the feature set's ``max_samples``)."""
    import dataclasses

    from otfs_workflow.protocol import derive_seed, draw_stratified_subsample

    n = dom.X.shape[0]
    if n <= max_samples:
        return dom
    seed = derive_seed(feature_set, domain, "max_samples")
    keep = draw_stratified_subsample(dom.y, max_samples, seed)
    log.info("%s/%s: %d of %d samples kept (max_samples, stratified, seed %d)", feature_set, domain, keep.size, n,
             seed)
    info = {**dom.info, "subsample": {"max_samples": int(max_samples), "of": int(n), "seed": int(seed)}}
    ids = tuple(dom.sample_ids[i] for i in keep) if dom.sample_ids else ()
    return dataclasses.replace(dom, X=dom.X[keep], y=dom.y[keep], sample_ids=ids, info=info)


def run_extracted(feature_set: str, domain: str, fs_cfg: Mapping, features_path, output) -> None:
    """Preprocess one domain of an extraction output (``data/features/...``) into ``output``."""
    raw = read_cache(features_path, domains=[domain])
    extracted = json.loads(raw.attrs.get("extractor", "{}")).get("name")
    if extracted != fs_cfg["extractor"]:
        raise ValueError(
            f"{features_path}: extracted by {extracted!r}, but feature set {feature_set!r} asks for "
            f"{fs_cfg['extractor']!r}; delete the file and rerun"
        )
    dom = raw.domain(domain)
    log.info("%s/%s: %d samples x %d features from %s", feature_set, domain, *dom.X.shape, features_path)
    write_cache(
        output,
        feature_set=feature_set,
        dataset=fs_cfg["dataset"],
        domains={domain: DomainData(domain, dom.X, dom.y, str(features_path), git_blob_sha1(features_path),
                                    sample_ids=dom.sample_ids)},
        feature_names=raw.stored_feature_names,
        class_names=raw.class_names,
        preprocessing=fs_cfg["preprocessing"],
        extra_attrs={**{k: v for k, v in raw.attrs.items() if k not in _OWN_ATTRS},
                     "images_digest": dom.source_git_blob_sha1},
    )
