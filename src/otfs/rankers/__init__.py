"""The feature rankers, one per file: every module here registers its ranker in
:data:`FEATURE_RANKERS` when the registry is first read. Files starting with ``_`` hold shared
code: Algorithm 2 (``_base``, ``_feature_coupling``) and the relevant-and-invariant selector.

The names below are imported on first use (SPEC 1, ``lazy_loader``; they are
listed in ``__init__.pyi``).
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)
