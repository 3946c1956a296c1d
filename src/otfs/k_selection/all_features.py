"""``all-features``: keep every feature (no selection), the baseline a rule must beat.

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

import numpy as np

from otfs.k_selection._base import OracleRule, register_rule


@register_rule("all-features")
class AllFeatures(OracleRule):
    """k* = d, the largest number of features of the grid (which must hold every feature)."""

    def choose_from(self, counts, accuracies):
        return int(np.max(counts))
