"""``SND``: soft neighbourhood density on the target (skada's ``SoftNeighborhoodDensity``).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
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

    direct = True

    def score_split(self, split, random_state):
        # skada's SoftNeighborhoodDensity._score (its sign 1): scikit-learn's l2 normalisation and its
        # row-wise softmax, as skada calls them
        from sklearn.preprocessing import normalize
        from sklearn.utils.extmath import softmax

        proba = normalize(split.predict_proba("target"), norm="l2")
        similarity_matrix = proba @ proba.T / self.T
        np.fill_diagonal(similarity_matrix, -np.diag(similarity_matrix))
        similarity_matrix = softmax(similarity_matrix)
        entropy = np.sum(-similarity_matrix * np.log(similarity_matrix), axis=1)
        return 1 * np.mean(entropy), {}
