"""The pipeline's data layer: manifests, hash-verified acquisition, the HDF5 feature cache.

The readers of the data sets are the library's (:mod:`otfs.datasets`). The
names below are imported on first use (SPEC 1, ``lazy_loader``; listed in
``__init__.pyi``): a job that reads the HDF5
cache does not import the acquisition code.
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)
