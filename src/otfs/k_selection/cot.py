"""``COT``: confidence optimal transport, an estimate of the target accuracy (Lu et al., NeurIPS 2023).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

import numpy as np

from otfs.k_selection._base import ScorerRule, register_rule


def cot_error(source_labels, classes, target_proba) -> float:
    """The COT estimate of the target error: the optimal transport cost between the source's label
    distribution (one-hot vectors of its classes, weighed by their shares) and the target's predicted
    probability vectors (uniform), under the total-variation cost ``||e_c - p||_1 / 2 = 1 - p_c``."""
    import ot

    classes = np.asarray(classes)
    target_proba = np.asarray(target_proba, dtype=float)
    shares = np.array([np.mean(np.asarray(source_labels) == c) for c in classes])
    if not np.isclose(shares.sum(), 1.0):
        raise ValueError(f"COT: the source labels {np.unique(source_labels).tolist()} are not all among the "
                         f"classifier's classes {classes.tolist()}")
    cost = 1.0 - target_proba.T  # (classes, target samples)
    weights = np.full(target_proba.shape[0], 1.0 / target_proba.shape[0])
    return float(ot.emd2(shares, weights, cost))


@register_rule("COT")
class ConfidenceOptimalTransport(ScorerRule):
    """One minus the COT estimate of the classifier's target error; the largest wins.

    Lu et al. estimate the error of a classifier on an unlabelled target as
    the Wasserstein distance between the distribution of its target softmax
    outputs and the source's label distribution, each label a one-hot vector,
    with the total-variation cost (:func:`cot_error`). The authors sample the
    labels from the source's label distribution; here that distribution is
    transported exactly, each class a point weighed by its share of the
    validation source samples. The score is ``1 - error``, an estimated
    accuracy in [0, 1].

    References
    ----------
    .. [1] Y. Lu, Y. Qin, R. Zhai, A. Shen, K. Chen, Z. Wang, S. Kolouri,
       S. Stepputtis, J. Campbell, K. Sycara. Characterizing Out-of-Distribution
       Error via Optimal Transport. NeurIPS 2023.
    """

    def estimate(self, source_proba, ys, classes, target_proba) -> tuple[float, dict]:
        """The score from the validation source's labels and the target's probabilities."""
        return 1.0 - cot_error(ys, classes, target_proba), {}

    def make_scorer(self, random_state):
        from otfs.k_selection._base import ProbabilityScorer

        return ProbabilityScorer(lambda ps, ys, classes, pt: self.estimate(ps, ys, classes, pt))

    direct = True

    def score_split(self, split, random_state):
        return self.estimate(None, split.ys, split.fitted.classes_, split.predict_proba("target"))
