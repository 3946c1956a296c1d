"""``oracle``: the best number of features in hindsight. It reads the target labels: a reference, never a method.

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

from otfs.k_selection._base import OracleRule, choose_k, register_rule


@register_rule("oracle")
class Oracle(OracleRule):
    """k* = the number of features of the highest target accuracy (ties: the most features)."""

    reads_target_labels = True

    def choose_from(self, counts, accuracies):
        return choose_k(counts, accuracies)
