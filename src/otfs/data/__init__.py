"""Data layer: manifests, hash-verified acquisition, ``.mat`` reading, HDF5 cache."""

from .acquisition import AcquisitionError, HashMismatchError, MissingDataError, Sources, acquire
from .cache import CacheError, FeatureCache, read_cache, write_cache
from .manifest import Manifest, ManifestEntry, git_blob_sha1, read_manifest
from .matfile import MatFileError, load_mat_features

__all__ = [
    "AcquisitionError",
    "CacheError",
    "FeatureCache",
    "HashMismatchError",
    "Manifest",
    "ManifestEntry",
    "MatFileError",
    "MissingDataError",
    "Sources",
    "acquire",
    "git_blob_sha1",
    "load_mat_features",
    "read_cache",
    "read_manifest",
    "write_cache",
]
