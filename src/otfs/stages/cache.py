"""Stage ``cache``: build the HDF5 feature cache of one feature set and domain.

``run`` reads a released ``.mat`` file; ``run_extracted`` reads the output of
the extraction stage. Both write the same format.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from ..data.acquisition import verify_file
from ..data.cache import DomainData, read_cache, write_cache
from ..data.manifest import git_blob_sha1, read_manifest
from ..data.matfile import load_mat_features

log = logging.getLogger(__name__)

#: Root attributes every cache writes for itself; an extraction output's
#: other attributes (extractor, transform, versions of torch...) are carried on.
_OWN_ATTRS = {"format", "feature_set", "dataset", "preprocessing", "class_names", "versions", "created_by"}


def run(feature_set: str, domain: str, fs_cfg: Mapping, manifest_path, mat_path, output) -> None:
    """Read, verify and preprocess one domain's ``.mat`` file into ``output``.

    Parameters
    ----------
    feature_set, domain : str
    fs_cfg : mapping
        The feature set's configuration (``folder``, ``preprocessing``...).
    manifest_path : path
    mat_path : path of the acquired ``.mat`` file
    output : path of the HDF5 cache
    """
    manifest = read_manifest(manifest_path)
    class_names = manifest.meta["class_names"].split(",")
    entry = manifest.entry(f"{fs_cfg['folder']}/{domain}.mat")
    # The raw copy was verified when acquired; verify again in case it was
    # replaced by hand since.
    verify_file(mat_path, entry)
    counts = [int(c) for c in entry.extra["class_counts"].split(",")]
    X, y = load_mat_features(mat_path, n_classes=len(class_names), class_counts=counts)
    expected = (int(entry.extra["n"]), int(entry.extra["d"]))
    if X.shape != expected:
        raise ValueError(f"{mat_path}: features have shape {X.shape}, manifest says {expected}")
    log.info("%s/%s: %d samples x %d features", feature_set, domain, *X.shape)
    write_cache(
        output,
        feature_set=feature_set,
        dataset=fs_cfg["dataset"],
        domains={domain: DomainData(domain, X, y, str(mat_path), entry.git_blob_sha1)},
        class_names=class_names,
        preprocessing=fs_cfg["preprocessing"],
        extra_attrs={"manifest": str(manifest_path)},
    )


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
        class_names=raw.class_names,
        preprocessing=fs_cfg["preprocessing"],
        extra_attrs={**{k: v for k, v in raw.attrs.items() if k not in _OWN_ATTRS},
                     "images_digest": dom.source_git_blob_sha1},
    )
