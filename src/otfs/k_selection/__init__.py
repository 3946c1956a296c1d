"""Choosing the number of features k without target labels: the selection rules, one per file.
Every module here registers its rule in :data:`SELECTION_RULES` when the registry is first read.
Files starting with ``_`` hold shared code, not rules: ``_label_free.py`` is the
selector that chooses the ranker and k together (:class:`LabelFreeFeatureSelector`),
``_policy_learning.py`` learns its policy on labelled tasks (:func:`evaluate_policies`).

The names below are imported on first use (SPEC 1, ``lazy_loader``; they are
listed in ``__init__.pyi``).
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)
