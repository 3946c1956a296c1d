"""``circular``: circular (reverse) validation (skada's ``CircularValidation``).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

from otfs.k_selection._base import ScorerRule, register_rule


@register_rule("circular")
class CircularValidation(ScorerRule):
    """Label the target with the classifier, train it back on the target, score it on the source.

    skada's ``CircularValidation`` (balanced accuracy on the source
    validation samples).

    References
    ----------
    .. [1] L. Bruzzone, M. Marconcini. Domain adaptation problems: a DASVM
       classification technique and a circular validation strategy. IEEE
       TPAMI 32(5), 2010.
    """

    def make_scorer(self, random_state):
        from otfs._skada import import_skada

        return import_skada("skada.metrics").CircularValidation()
