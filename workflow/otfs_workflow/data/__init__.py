"""The pipeline's data layer: manifests, hash-verified acquisition, the HDF5 feature cache.

The readers of the data sets are the library's (:mod:`otfs.datasets`). The
names below are imported on first use (PEP 562): a job that reads the HDF5
cache does not import the acquisition code.
"""

from importlib import import_module as _import_module

_LAZY = {
    "AcquisitionError": "acquisition",
    "HashMismatchError": "acquisition",
    "MissingDataError": "acquisition",
    "Sources": "acquisition",
    "acquire": "acquisition",
    "CacheError": "cache",
    "FeatureCache": "cache",
    "read_cache": "cache",
    "write_cache": "cache",
    "Manifest": "manifest",
    "ManifestEntry": "manifest",
    "git_blob_sha1": "manifest",
    "read_manifest": "manifest",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(_import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'otfs_workflow.data' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])
