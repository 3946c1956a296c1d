"""``entropy``: prediction entropy on the target (skada's ``PredictionEntropyScorer``).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

import numpy as np

from otfs.k_selection._base import ScorerRule, register_rule


@register_rule("entropy")
class PredictionEntropy(ScorerRule):
    """The mean entropy of the classifier's target probabilities; the lowest wins.

    skada's ``PredictionEntropyScorer``. It needs a probabilistic classifier:
    with the 1-NN every probability is 0 or 1 and every entropy 0.

    References
    ----------
    .. [1] P. Morerio, J. Cavazza, V. Murino. Minimal-entropy correlation
       alignment for unsupervised deep domain adaptation. ICLR 2018.
    """

    def make_scorer(self, random_state):
        from otfs._skada import import_skada

        return import_skada("skada.metrics").PredictionEntropyScorer()

    direct = True

    def score_split(self, split, random_state):
        # skada's PredictionEntropyScorer._score (its sign -1), on the validation target samples
        proba = split.predict_proba("target")
        if hasattr(split.fitted, "predict_log_proba"):
            log_proba = split.predict_log_proba("target")
        else:
            log_proba = np.log(proba + 1e-7)
        infty_mask = np.isneginf(log_proba)
        entropy_per_sample = -proba * log_proba
        entropy_per_sample[infty_mask] = 0
        return -1 * np.mean(entropy_per_sample), {}
