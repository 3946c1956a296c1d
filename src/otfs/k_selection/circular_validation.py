"""``circular``: circular (reverse) validation (skada's ``CircularValidation``).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

import numpy as np

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

    direct = True

    def score_split(self, split, random_state):
        # skada's CircularValidation._score (its sign 1): the classifier refitted on the validation target
        # samples with their predicted labels (encoded 0..), scored on the validation source samples
        import warnings

        from sklearn.preprocessing import LabelEncoder

        from otfs.k_selection._base import _balanced_accuracy_score

        ys = split.ys
        y_pred_target = split.predict("target")
        if len(np.unique(y_pred_target)) == 1:
            warnings.warn("The predicted target domain labels are all the same.", stacklevel=2)
            return 1 * _balanced_accuracy_score(ys, np.ones_like(ys) * y_pred_target[0]), {}
        encoder = LabelEncoder().fit(y_pred_target)
        backward = split.new_classifier().fit(split.Xt, encoder.transform(y_pred_target))
        return 1 * _balanced_accuracy_score(ys, encoder.inverse_transform(backward.predict(split.Xs))), {}
