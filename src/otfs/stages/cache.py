"""Stage ``cache``: build the HDF5 feature cache of one feature set and domain."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from ..data.acquisition import verify_file
from ..data.cache import DomainData, write_cache
from ..data.manifest import read_manifest
from ..data.matfile import load_mat_features

log = logging.getLogger(__name__)


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
