"""The adapters (domain adaptation of the features before the classifier), one per file: every
module here registers its adapter in :data:`ADAPTERS` when the registry is first read. Files
starting with ``_`` hold shared code, not methods.

The names below are imported on first use (SPEC 1, ``lazy_loader``; they are
listed in ``__init__.pyi``).
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)
