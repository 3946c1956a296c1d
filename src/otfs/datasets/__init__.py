"""The data sets: a reader per file format or source, one per file (every module here registers
its reader in :data:`DATASET_READERS` when the registry is first read), and the generated ones
(the clinical voxel tables, the toys of Figure 6, the UCI sets of the WDA experiment).

The names below are imported on first use (SPEC 1, ``lazy_loader``; they are
listed in ``__init__.pyi``).
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)
