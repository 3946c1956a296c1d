"""``DEV``: deep embedded validation (skada's ``DeepEmbeddedValidation``).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

from otfs.k_selection._base import ScorerRule, register_rule


@register_rule("DEV")
class DeepEmbeddedValidation(ScorerRule):
    """The source validation loss weighted by a domain classifier's density ratio, with a control variate.

    skada's ``DeepEmbeddedValidation`` with its defaults (a logistic-regression
    domain classifier on the adapted features, log loss), seeded per split.

    References
    ----------
    .. [1] K. You, X. Wang, M. Long, M. Jordan. Towards accurate model
       selection in deep unsupervised domain adaptation. ICML 2019.
    """

    def make_scorer(self, random_state):
        from otfs._skada import import_skada

        return import_skada("skada.metrics").DeepEmbeddedValidation(random_state=random_state)
