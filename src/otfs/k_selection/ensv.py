"""``EnsV``: agreement with the candidates' ensemble (Hu et al., NeurIPS 2024 Datasets and Benchmarks).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

import numpy as np

from otfs.k_selection._base import ScorerRule, register_rule


@register_rule("EnsV")
class EnsembleValidation(ScorerRule):
    """The share of target samples on which a candidate predicts the class of the candidates' ensemble.

    Hu et al. average the target class probabilities of every candidate
    model, take the class of the largest mean probability of each target
    sample as its pseudo-label, and score each candidate by its accuracy
    against these pseudo-labels; the largest wins. The ensemble is at least
    as good as the worst candidate, which is what the choice guards against.

    Here a candidate is a (ranker, number of features) point: its classifier
    (the choice of k's probabilistic one) is fitted on each validation
    split's training source samples and predicts the split's validation
    target samples (:func:`otfs.k_selection.score_adapted`, ``target_proba``);
    the samples of all splits form the target. The score of a candidate
    therefore reads the other candidates' predictions: it is computed once
    every candidate is scored (:meth:`score_candidates`; :attr:`ensemble`).
    The ensemble's members are distinct models: the point of all the features
    is the same for every ranker and counts once. Ties of the mean
    probability go to the first class, as ``argmax`` does.

    References
    ----------
    .. [1] D. Hu, M. Luo, J. Liang, C.-S. Foo. Towards Reliable Model Selection
       for Unsupervised Domain Adaptation: An Empirical Study and A Certified
       Baseline. NeurIPS 2024 Datasets and Benchmarks Track.
    """

    _parameter_constraints: dict = {}
    ensemble = True
    direct = True

    def score_candidates(self, target_proba, members=None) -> np.ndarray:
        """Each candidate's agreement with the ensemble of ``members``.

        Parameters
        ----------
        target_proba : sequence of arrays of shape (n_samples, n_classes)
            Each candidate's class probabilities on the same target samples, classes in the same order.
        members : array-like of bool, default=None
            The candidates that form the ensemble (all of them by default).

        Returns
        -------
        ndarray of shape (n_candidates,)
            The share, in [0, 1], of target samples whose largest probability is the ensemble's class.
        """
        arrays = [np.asarray(p, dtype=float) for p in target_proba]
        shapes = {a.shape for a in arrays}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2 or 0 in next(iter(shapes)):
            raise ValueError("EnsV: one (samples, classes) array of target probabilities per candidate, the same "
                             f"shape for all; got the shapes {sorted(shapes)}")
        proba = np.stack(arrays)
        if proba.ndim != 3:
            raise ValueError("EnsV: one (samples, classes) array of target probabilities per candidate, the same "
                             f"shape for all; got an array of shape {proba.shape}")
        keep = np.ones(proba.shape[0], dtype=bool) if members is None else np.asarray(members, dtype=bool)
        if keep.shape != (proba.shape[0],) or not keep.any():
            raise ValueError(f"EnsV: members must mark at least one of the {proba.shape[0]} candidates")
        pseudo = np.argmax(proba[keep].mean(axis=0), axis=1)
        return np.mean(np.argmax(proba, axis=2) == pseudo[None, :], axis=1)

    def make_scorer(self, random_state):
        raise TypeError("EnsV scores a candidate against the other candidates: score_candidates, not a skada scorer")
