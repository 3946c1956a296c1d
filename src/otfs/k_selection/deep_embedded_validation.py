"""``DEV``: deep embedded validation (skada's ``DeepEmbeddedValidation``).

One file of the selection rules' folder (:data:`otfs.k_selection.SELECTION_RULES`).
"""

from __future__ import annotations

import numpy as np

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

    direct = True

    def score_split(self, split, random_state):
        # skada's DeepEmbeddedValidation._score (its sign -1) with a classifier that has no transform: the
        # features are the samples, the domain classifier scikit-learn's default LogisticRegression, the loss
        # its per-sample cross-entropy. Written as skada computes it, including its (n, 1) weights times
        # (n,) errors, which broadcast to an n x n matrix (docs/model-selection.md).
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import train_test_split
        from sklearn.utils import check_random_state

        rng = check_random_state(random_state)
        # skada splits the samples: the same permutation splits their positions, whose rows are the samples'
        train, val, _, y_val = train_test_split(np.arange(len(split.ys)), split.ys, test_size=0.33,
                                                random_state=rng)
        X_train, X_val = split.Xs[train], split.Xs[val]
        features_target = split.Xt
        domain_classifier = LogisticRegression().fit(
            np.concatenate((X_train, features_target)),
            np.concatenate((len(X_train) * [1], len(features_target) * [0])))
        domain_pred = domain_classifier.predict_proba(X_val)
        weights = (len(X_train) / len(features_target)) * domain_pred[:, :1] / domain_pred[:, 1:]
        y_pred = split.source_proba_rows(val)
        one_hot = np.eye(y_pred.shape[1])[y_val]
        error = -np.sum(one_hot * np.log(np.clip(y_pred, 1e-15, 1 - 1e-15)), axis=1)
        weighted_error = weights * error
        weights_m = np.concatenate((weighted_error, weights), axis=1)
        cov = np.cov(weights_m, rowvar=False)[0, 1]
        var_w = np.var(weights, ddof=1)
        eta = 0 if var_w == 0 else -cov / var_w
        return -1 * (np.mean(weighted_error) + eta * np.mean(weights) - eta), {}
