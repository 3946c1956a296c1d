"""The multi-domain classifiers of the boosting experiment, one per file: every module here
registers its class in :data:`DOMAIN_CLASSIFIERS` when the registry is first read.

The names below are imported on first use (SPEC 1, ``lazy_loader``; they are
listed in ``__init__.pyi``).
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)
