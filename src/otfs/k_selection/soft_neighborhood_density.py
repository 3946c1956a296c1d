"""``SND``: soft neighbourhood density on the target (skada's ``SoftNeighborhoodDensity``).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

from numbers import Real

from sklearn.utils._param_validation import Interval

from otfs.k_selection._base import ScorerRule, register_rule


@register_rule("SND")
class SoftNeighborhoodDensity(ScorerRule):
    """The entropy of the softmax-normalised similarities of the target samples' probability vectors.

    skada's ``SoftNeighborhoodDensity``; the highest wins.

    Parameters
    ----------
    T : float, default=0.05
        The softmax temperature (skada's default).

    References
    ----------
    .. [1] K. Saito, D. Kim, P. Teterwak, S. Sclaroff, T. Darrell, K. Saenko.
       Tune it the right way: unsupervised validation of domain adaptation via
       soft neighborhood density. ICCV 2021.
    """

    _parameter_constraints: dict = {"T": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, T=0.05):
        self.T = T

    def make_scorer(self, random_state):
        from otfs._skada import import_skada

        return import_skada("skada.metrics").SoftNeighborhoodDensity(T=self.T)
