"""``MixVal``: mixed target samples as probes of the classifier (Hu et al., ICLR 2024).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from otfs.k_selection._base import ScorerRule, register_rule


@register_rule("MixVal")
class MixVal(ScorerRule):
    """The classifier's consistency on mixed target samples (ICE, higher wins).

    Hu et al. validate a model without target labels by probing it with
    mixups of target samples: each target sample ``a`` is mixed with a
    partner ``b`` as ``lam x_a + (1 - lam) x_b`` (``lam = 0.55``, so ``a``
    dominates), and the score is the fraction of mixed samples that the
    classifier assigns to ``a``'s pseudo-label, its own prediction on
    ``x_a``. As in the authors' code (``val_mixval_inter.py``,
    ``val_mixval_intra.py``), the target samples are taken in batches of
    ``batch_size`` and each is paired with the sample at the mirrored
    position of its batch: in the samples' order for the inter-cluster
    score, on pairs of different pseudo-labels; sorted by pseudo-label for
    the intra-cluster score, on pairs of the same one.

    Here the model is the probabilistic classifier of the choice of k
    (fitted on the validation split's training source samples, as the other
    scorers'), and the target samples are the validation split's.

    Where the paper leaves a choice: ``pairs="both"`` (the default) scores
    the mean of the two ICE scores, since one score per number of features
    is needed where the authors compare the two across candidate models; a
    kind without any pair (every target sample predicted in one class has
    no inter-cluster pair) is left out, with a warning, and the score is NaN
    when neither has a pair.

    Parameters
    ----------
    lam : float, default=0.55
        The weight of the dominant sample, in (0.5, 1).
    pairs : {"both", "inter", "intra"}, default="both"
        Which mixed samples score: of different pseudo-labels, of the same one, or the mean of both.
    batch_size : int, default=128
        The authors' batch size, within which partners are paired.

    References
    ----------
    .. [1] D. Hu, J. Liang, J. H. Liew, C. Xue, S. Bai, X. Wang. Mixed
       Samples as Probes for Unsupervised Model Selection in Domain
       Adaptation. NeurIPS 2023. Code: https://github.com/LHXXHB/MixVal
    """

    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0.5, 1, closed="neither")],
        "pairs": [StrOptions({"both", "inter", "intra"})],
        "batch_size": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, lam=0.55, pairs="both", batch_size=128):
        self.lam = lam
        self.pairs = pairs
        self.batch_size = batch_size

    direct = True

    def score_split(self, split, random_state):
        return self.ice(split.fitted.predict, split.Xt, split.predict("target"))

    def make_scorer(self, random_state):
        return _MixValScorer(self)

    def diagnostics(self, scorer, X_val, sample_domain_val):
        return dict(scorer.last_counts)

    def partners(self, order: np.ndarray) -> np.ndarray:
        """Each position's partner: the mirrored position within its batch of ``order``."""
        n = order.size
        partner = np.empty(n, dtype=int)
        for start in range(0, n, self.batch_size):
            batch = order[start:start + self.batch_size]
            partner[start:start + batch.size] = batch[::-1]
        return partner

    def ice(self, predict, Xt, pseudo) -> tuple[float, dict]:
        """The score and its pair counts, from ``predict`` (the classifier's), the target samples and their
        pseudo-labels (``predict(Xt)``)."""
        self._validate_params()
        Xt, pseudo = np.asarray(Xt, dtype=float), np.asarray(pseudo)
        n = pseudo.size
        scores, counts = {}, {}
        for kind in ("inter", "intra"):
            if self.pairs not in (kind, "both"):
                continue
            order = np.arange(n) if kind == "inter" else np.argsort(pseudo, kind="stable")
            a, b = order, self.partners(order)
            keep = pseudo[a] != pseudo[b] if kind == "inter" else pseudo[a] == pseudo[b]
            a, b = a[keep], b[keep]
            counts[f"{kind}_pairs"] = int(a.size)
            if a.size:
                mixed = self.lam * Xt[a] + (1.0 - self.lam) * Xt[b]
                scores[kind] = float(np.mean(np.asarray(predict(mixed)) == pseudo[a]))
        if not scores:
            warnings.warn(f"MixVal: no {self.pairs}-cluster pair among {n} target samples (pseudo-labels "
                          f"{np.unique(pseudo).tolist()}): the score is NaN", UserWarning, stacklevel=2)
            return float("nan"), counts
        if len(scores) < (2 if self.pairs == "both" else 1):
            warnings.warn(f"MixVal: no pair of one kind (pair counts {counts}); scored by the other", UserWarning,
                          stacklevel=2)
        return float(np.mean(list(scores.values()))), counts


class _MixValScorer:
    """MixVal as a scorer of a fitted skada pipeline (``scorer(estimator, X, y, sample_domain)``), for
    :func:`otfs.k_selection._base.score_adapted`'s ``engine="skada"``."""

    def __init__(self, rule: MixVal):
        self.rule, self.last_counts = rule, {}

    def __call__(self, estimator, X, y=None, sample_domain=None):
        target = np.asarray(sample_domain) < 0
        Xt, domain = np.asarray(X)[target], np.asarray(sample_domain)[target]

        def predict(Z):
            return estimator.predict(Z, sample_domain=np.full(len(Z), domain[0]))

        value, self.last_counts = self.rule.ice(predict, Xt, predict(Xt))
        return value
