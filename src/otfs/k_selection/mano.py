"""``MaNo``: the matrix norm of the target's probabilities (skada's ``MaNoScorer``).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from otfs.k_selection._base import ScorerRule, register_rule


@register_rule("MaNo")
class MaNo(ScorerRule):
    """The normalised entry-wise p-norm of the classifier's target probabilities; the largest wins.

    Xie et al. estimate a model's accuracy on an unlabelled target from the
    matrix of its normalised target outputs: ``(mean_ij P_ij ** p) ** (1 / p)``,
    large where the predictions are confident. skada's ``MaNoScorer`` computes
    it from the probabilities of a non-neural estimator directly (the paper's
    logit normalisation applies to neural networks only), which is what this
    rule does, with skada's ``p = 4``.

    Parameters
    ----------
    p : int, default=4
        The order of the norm, at least 1.

    References
    ----------
    .. [1] R. Xie, A. Odonnat, V. Feofanov, W. Deng, J. Zhang, B. An. MaNo:
       Exploiting Matrix Norm for Unsupervised Accuracy Estimation Under
       Distribution Shifts. NeurIPS 2024.
    """

    _parameter_constraints: dict = {"p": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, p=4):
        self.p = p

    def make_scorer(self, random_state):
        from otfs._skada import import_skada

        return import_skada("skada.metrics").MaNoScorer(p=self.p)

    direct = True

    def score_split(self, split, random_state):
        # skada's MaNoScorer._score on a pipeline (its sign 1): the target samples' probabilities
        proba = split.predict_proba("target")
        return float(np.mean(proba ** self.p) ** (1 / self.p)), {}
