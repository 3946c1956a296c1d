"""Feature extractors: pretrained networks that turn images into feature vectors, listed in
:data:`EXTRACTORS`; another package adds one through the entry-point group
``otfs.extractors``.

The names below are imported on first use (SPEC 1, ``lazy_loader``; they are
listed in ``__init__.pyi``).
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)
