"""Data layer: manifests, hash-verified acquisition, ``.mat`` reading, HDF5 cache.

The names below are imported on first use (PEP 562), as in :mod:`otfs`: a job
that reads the HDF5 cache does not import SciPy's ``.mat`` reader or the
acquisition code.
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
    "MatFileError": "matfile",
    "load_mat_features": "matfile",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(_import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'otfs.data' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])
