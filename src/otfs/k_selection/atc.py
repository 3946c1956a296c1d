"""``ATC``: average thresholded confidence, an estimate of the target accuracy (Garg et al., ICLR 2022).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from otfs.k_selection._base import ScorerRule, register_rule


def confidence(proba: np.ndarray, kind: str) -> np.ndarray:
    """Each sample's confidence: its largest probability (``"max-confidence"``) or its negative entropy
    (``"negative-entropy"``, with ``0 log 0 = 0``)."""
    proba = np.asarray(proba, dtype=float)
    if kind == "max-confidence":
        return proba.max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(proba > 0, proba * np.log(proba), 0.0)
    return terms.sum(axis=1)


def thresholded_share(source_scores, correct, target_scores) -> tuple[float, float]:
    """ATC's estimate: the share of target samples above the threshold at which the share of source
    samples above it equals the source accuracy, and that threshold.

    Ties are split: with ``P(s > t) + lam P(s = t) = accuracy`` on the source (``lam`` in [0, 1]), the
    estimate is ``P(s > t) + lam P(s = t)`` on the target. With distinct scores it is Garg et al.'s
    ``mean(target > t)``; with a k-NN's few distinct probabilities it does not depend on which of the tied
    samples the threshold falls between.
    """
    s = np.sort(np.asarray(source_scores, dtype=float))[::-1]
    n = s.size
    m = int(round(float(np.mean(correct)) * n))  # the source samples a threshold at the accuracy keeps
    if m == 0:
        return 0.0, float("inf")
    t = s[m - 1]  # the m-th largest score: m samples at or above it
    above, tied = float(np.sum(s > t)), float(np.sum(s == t))
    lam = (m - above) / tied
    target = np.asarray(target_scores, dtype=float)
    return float(np.mean(target > t) + lam * np.mean(target == t)), float(t)


@register_rule("ATC")
class AverageThresholdedConfidence(ScorerRule):
    """The estimated target accuracy of the classifier by average thresholded confidence; the largest wins.

    Garg et al. learn a threshold on a confidence score such that the share
    of labelled source validation samples above it equals the classifier's
    source accuracy; the estimated target accuracy is the share of target
    samples above that threshold (:func:`thresholded_share`). Here the
    classifier is the choice of k's probabilistic one, fitted on the split's
    training source samples; the threshold is learned on the split's
    validation source samples and applied to its validation target samples.
    The paper's preferred score, the negative entropy (ATC-NE), is the
    default. The score is the estimate, in [0, 1].

    Parameters
    ----------
    score : {"negative-entropy", "max-confidence"}, default="negative-entropy"
        The confidence score (ATC-NE or ATC-MC).

    References
    ----------
    .. [1] S. Garg, S. Balakrishnan, Z. C. Lipton, B. Neyshabur, H. Sedghi.
       Leveraging Unlabeled Data to Predict Out-of-Distribution Performance.
       ICLR 2022.
    """

    _parameter_constraints: dict = {"score": [StrOptions({"negative-entropy", "max-confidence"})]}

    def __init__(self, score="negative-entropy"):
        self.score = score

    def estimate(self, source_proba, ys, classes, target_proba) -> tuple[float, dict]:
        """The estimate from the validation source's probabilities and labels and the target's."""
        correct = np.asarray(classes)[np.argmax(source_proba, axis=1)] == np.asarray(ys)
        value, t = thresholded_share(confidence(source_proba, self.score), correct,
                                     confidence(target_proba, self.score))
        return value, {"source_accuracy": float(np.mean(correct)), "threshold": t}

    def make_scorer(self, random_state):
        from otfs.k_selection._base import ProbabilityScorer

        return ProbabilityScorer(lambda ps, ys, classes, pt: self.estimate(ps, ys, classes, pt))

    def diagnostics(self, scorer, X_val, sample_domain_val):
        return dict(scorer.last_info)

    direct = True

    def score_split(self, split, random_state):
        return self.estimate(split.predict_proba("source"), split.ys, split.fitted.classes_,
                             split.predict_proba("target"))
