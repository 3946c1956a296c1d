"""Evaluation: the 1-nearest-neighbour accuracy the paper reports.

A 1-NN classifier is trained on the (adapted) labelled source samples and
scored on every target sample; accuracy is in percent. Curves evaluate it
for the first ``n`` features of each feature order, after adapting the two
domains restricted to those features.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Section 5.1.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from otfs._checks import as_float_matrix, as_label_vector, check_same_features
from otfs.registry import Registry

if TYPE_CHECKING:
    from otfs.adapters._base import BaseAdapter

__all__ = ["CLASSIFIERS", "METRICS", "accuracy_curve", "balanced_accuracy", "make_classifier", "nested_one_nn_accuracies",
           "one_nn_accuracies", "one_nn_accuracy", "roc_auc", "second_classifier_scores"]

#: The optional metrics of :func:`accuracy_curve` (``metrics``): the 1-NN's balanced accuracy, and a second,
#: probabilistic classifier's accuracy, balanced accuracy and AUC (its columns: ``second_*``).
METRICS = ("balanced_accuracy", "second_classifier")

#: Classifiers by name, for the places where one is configurable (skada adapters, the label-free scorers):
#: each entry builds a scikit-learn classifier from keyword parameters. ``1nn`` is the paper's.
CLASSIFIERS = Registry("classifier", "classifiers")


def _one_nn():
    """The paper's classifier: 1-NN, Euclidean, brute force (ties to the lowest source index)."""
    # scikit-learn is imported where a classifier is built: the curves without adaptation never build one
    from sklearn.neighbors import KNeighborsClassifier

    return KNeighborsClassifier(n_neighbors=1, algorithm="brute", metric="euclidean")


def _knn(n_neighbors=5, **params):
    from sklearn.neighbors import KNeighborsClassifier

    return KNeighborsClassifier(n_neighbors=n_neighbors, algorithm=params.pop("algorithm", "brute"), **params)


def _logistic_regression(standardize=False, **params):
    """scikit-learn's ``LogisticRegression`` (``max_iter=1000``); ``standardize=True``: after a
    ``StandardScaler`` fitted on the same samples. Unscaled, L-BFGS stops at its tolerance far from the
    optimum on badly scaled inputs (TCA's embedding reaches |z| ~ 1,000): two embeddings equal to 1e-13
    relative gave coefficients 42 % apart and accuracies 2 points apart; standardized, the same
    predictions (docs/data-families.md)."""
    from sklearn.linear_model import LogisticRegression

    if not isinstance(standardize, bool):
        raise ValueError(f"logistic-regression: standardize must be true or false, got {standardize!r}")
    model = LogisticRegression(**{"max_iter": 1000, **params})
    if not standardize:
        return model
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), model)


CLASSIFIERS.register("1nn", _one_nn)
CLASSIFIERS.register("knn", _knn)
CLASSIFIERS.register("logistic-regression", _logistic_regression)


def make_classifier(spec):
    """A classifier from its name (``"1nn"``) or ``{"name": NAME, **params}`` (:data:`CLASSIFIERS`).

    >>> make_classifier({"name": "knn", "n_neighbors": 5})
    KNeighborsClassifier(algorithm='brute')
    """
    if isinstance(spec, str):
        name, params = spec, {}
    elif isinstance(spec, Mapping) and "name" in spec:
        name, params = spec["name"], {k: v for k, v in spec.items() if k != "name"}
    else:
        raise ValueError(f"a classifier is a name of {sorted(CLASSIFIERS)} or a mapping with the key 'name'; got {spec!r}")
    try:
        clf = CLASSIFIERS[name](**params)
    except TypeError as exc:
        raise ValueError(f"classifier {name!r}: {exc}") from None
    if hasattr(clf, "_validate_params"):
        clf._validate_params()
    return clf


def balanced_accuracy(y_true, y_pred) -> float:
    """The mean over the classes present in ``y_true`` of the share of their samples predicted right, in %.

    scikit-learn's ``balanced_accuracy_score`` (without adjustment), here
    without importing scikit-learn; equal to the accuracy when the classes
    are balanced, and to the mean of sensitivity and specificity for two.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    classes = np.unique(y_true)
    return 100.0 * float(np.mean([np.mean(y_pred[y_true == c] == c) for c in classes]))


def second_classifier_scores(classifier, Xs, ys, Xt, yt) -> dict:
    """A second classifier fitted on ``(Xs, ys)`` and scored on ``(Xt, yt)``: accuracy, balanced accuracy, AUC.

    ``classifier`` is a :func:`make_classifier` spec (e.g. ``"logistic-regression"``). The AUC (in %) is
    scikit-learn's ``roc_auc_score`` on the predicted probabilities (:func:`roc_auc`): of the second class
    for two classes, macro-averaged one-vs-rest for more; it is NaN, with a warning, where it is undefined
    (a single class in ``yt``, or a target class the source never shows).
    """
    import warnings

    from otfs._checks import DegenerateResultWarning

    clf = make_classifier(classifier).fit(Xs, ys)
    y_pred = clf.predict(Xt)
    out = {"second_accuracy": 100.0 * float(np.mean(y_pred == yt)),
           "second_balanced_accuracy": balanced_accuracy(yt, y_pred), "second_auc": float("nan")}
    present = np.unique(yt)
    if present.size < 2 or not set(present.tolist()) <= set(clf.classes_.tolist()):
        warnings.warn(f"AUC undefined: the target has the classes {present.tolist()}, the source "
                      f"{clf.classes_.tolist()}", DegenerateResultWarning, stacklevel=2)
        return out
    proba = clf.predict_proba(Xt)
    if clf.classes_.size == 2:
        out["second_auc"] = 100.0 * roc_auc(yt == clf.classes_[1], proba[:, 1])
    else:
        keep = np.isin(clf.classes_, present)
        p = proba[:, keep] / proba[:, keep].sum(axis=1, keepdims=True)
        out["second_auc"] = 100.0 * float(np.mean([roc_auc(yt == c, p[:, i])
                                                   for i, c in enumerate(clf.classes_[keep])]))
    return out


def roc_auc(positive, score) -> float:
    """The area under the ROC curve of ``score`` for the boolean labels ``positive`` (in [0, 1]).

    The Mann–Whitney form, ``(R+ - n+ (n+ + 1) / 2) / (n+ n-)`` with ``R+`` the sum of the positives'
    ranks (average ranks for ties): equal to scikit-learn's ``roc_auc_score`` (the trapezoids of its
    ROC curve, ties counted half) to rounding, and faster, as it skips scikit-learn's input checks:
    measured on 1,140 samples, 0.2 ms against 4 ms for two classes, 5 ms against 31 ms for 19. The
    one-vs-rest macro AUC of several classes is the mean of this over the classes
    (``roc_auc_score(multi_class="ovr", average="macro")``).

    Raises
    ------
    ValueError
        If ``positive`` holds one class only (the AUC is undefined).
    """
    from scipy.stats import rankdata

    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("AUC undefined: the labels hold one class only")
    ranks = rankdata(np.asarray(score, dtype=float))
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def one_nn_accuracy(Xs, ys, Xt, yt) -> float:
    """Accuracy (in %) on ``(Xt, yt)`` of a 1-NN classifier fitted on ``(Xs, ys)``.

    Parameters
    ----------
    Xs : array-like of shape (n_source, d)
    ys : array-like of shape (n_source,)
    Xt : array-like of shape (n_target, d)
    yt : array-like of shape (n_target,)

    Returns
    -------
    float
        ``100 * mean(prediction == yt)``.
    """
    Xs = as_float_matrix(Xs, "Xs")
    Xt = as_float_matrix(Xt, "Xt")
    check_same_features(Xs, Xt)
    ys = as_label_vector(ys, Xs.shape[0], "ys")
    yt = as_label_vector(yt, Xt.shape[0], "yt")
    knn = _one_nn().fit(Xs, ys)
    return 100.0 * float(np.mean(knn.predict(Xt) == yt))


def one_nn_accuracies(Xs, ys, Xt, yt) -> dict[str, float]:
    """The accuracy and the balanced accuracy (both in %) on ``(Xt, yt)`` of one 1-NN classifier fitted on
    ``(Xs, ys)``: :func:`one_nn_accuracy`'s number and :func:`balanced_accuracy` of the same predictions."""
    Xs = as_float_matrix(Xs, "Xs")
    Xt = as_float_matrix(Xt, "Xt")
    check_same_features(Xs, Xt)
    ys = as_label_vector(ys, Xs.shape[0], "ys")
    yt = as_label_vector(yt, Xt.shape[0], "yt")
    pred = _one_nn().fit(Xs, ys).predict(Xt)
    return {"accuracy": 100.0 * float(np.mean(pred == yt)), "balanced_accuracy": balanced_accuracy(yt, pred)}


def accuracy_curve(
    Xs,
    ys,
    Xt,
    yt,
    orders: Mapping[str, Sequence[int]],
    n_features: Sequence[int],
    adapter: BaseAdapter | None = None,
    metrics: Mapping | None = None,
) -> list[dict]:
    """1-NN accuracy after adaptation for the first ``n`` features of each order.

    Parameters
    ----------
    Xs, ys : source samples and labels
    Xt, yt : target samples and labels (labels only for scoring)
    orders : mapping of order name to feature indices
    n_features : sequence of int
    adapter : BaseAdapter, default=None
        None (or :class:`otfs.adapters.NoAdaptation`) adapts nothing.
    metrics : mapping, default=None
        More columns per point (:data:`METRICS`): ``{"balanced_accuracy": True}`` adds the 1-NN's
        ``balanced_accuracy``; ``{"second_classifier": SPEC}`` adds ``second_accuracy``,
        ``second_balanced_accuracy`` and ``second_auc`` of the classifier ``SPEC``
        (:func:`second_classifier_scores`), fitted on the same adapted samples as the 1-NN.

    Returns
    -------
    list of dict
        One record per (order, n) with keys ``order``, ``n_features``,
        ``accuracy`` (percent) and ``seconds`` (adaptation wall time; for an
        adapter that predicts the labels itself, ``predicts_labels``, the time
        of its ``fit_predict``, classifier included).

    Notes
    -----
    Without adaptation the whole curve of an order comes from
    :func:`nested_one_nn_accuracies`, which visits each feature once; its
    ``seconds`` are 0.
    """
    Xs = as_float_matrix(Xs, "Xs")
    Xt = as_float_matrix(Xt, "Xt")
    check_same_features(Xs, Xt)
    metrics = dict(metrics or {})
    unknown = sorted(set(metrics) - set(METRICS))
    if unknown:
        raise ValueError(f"metrics: unknown {unknown}; known: {list(METRICS)}")
    balanced = bool(metrics.get("balanced_accuracy"))
    second = metrics.get("second_classifier")
    if adapter is None:
        nested = True  # no adaptation: nothing to build (and POT and scikit-learn are not imported)
    else:  # an adapter that changes nothing (NA): the nested 1-NN, without importing NA's file
        nested = getattr(type(adapter), "identity", False) is True
    ys = as_label_vector(ys, Xs.shape[0], "ys")
    yt = as_label_vector(yt, Xt.shape[0], "yt")
    d = Xs.shape[1]
    n_features = [int(n) for n in n_features]
    for n in n_features:
        if not 1 <= n <= d:
            raise ValueError(f"number of features {n} outside [1, {d}]")
    rows = []
    if nested:
        XsT, XtT = Xs.T.copy(), Xt.T.copy()
    else:
        # gathered from column-major copies: Xs[:, cols] is the same array, values and strides (NumPy returns a
        # column subset in column-major order whatever the input's), 5x to 10x faster to gather
        Xs, Xt = np.asfortranarray(Xs), np.asfortranarray(Xt)
    for order_name, order in orders.items():
        order = np.asarray(order)
        if sorted(order.tolist()) != list(range(d)):
            raise ValueError(f"order {order_name!r} is not a permutation of the {d} features")
        if nested:
            predictions = _nested_predictions(XsT, ys, XtT, order, n_features)
            for n, y_pred in zip(n_features, predictions, strict=True):
                row = {"order": order_name, "n_features": n, "accuracy": 100.0 * float(np.mean(y_pred == yt)),
                       "seconds": 0.0}
                if balanced:
                    row["balanced_accuracy"] = balanced_accuracy(yt, y_pred)
                if second:
                    row.update(second_classifier_scores(second, Xs[:, order[:n]], ys, Xt[:, order[:n]], yt))
                rows.append(row)
            continue
        predicts = getattr(adapter, "predicts_labels", False)
        for n in n_features:
            cols = order[:n]
            start = time.perf_counter()
            try:
                extra = {}
                if predicts:  # the adapter predicts the target labels itself (a skada estimator with its classifier)
                    y_pred = np.asarray(adapter.fit_predict(Xs[:, cols], ys, Xt[:, cols]))
                    seconds = time.perf_counter() - start
                    if second:
                        raise ValueError("metrics: second_classifier needs adapted samples; this adapter predicts "
                                         "the labels itself")
                else:
                    Xs_a, Xt_a = adapter.adapt(Xs[:, cols], ys, Xt[:, cols])
                    seconds = time.perf_counter() - start
                    y_pred = _one_nn().fit(as_float_matrix(Xs_a, "Xs"), ys).predict(as_float_matrix(Xt_a, "Xt"))
                    if second:
                        extra = second_classifier_scores(second, Xs_a, ys, Xt_a, yt)
                accuracy = 100.0 * float(np.mean(y_pred == yt))
            except (ValueError, FloatingPointError) as exc:  # which point of the curve failed, by column
                shown = ", ".join(str(int(c)) for c in cols[:10]) + (", ..." if n > 10 else "")
                raise type(exc)(f"{type(adapter).__name__} on the first {n} feature(s) of the {order_name} order "
                                f"(columns {shown}): {exc}") from exc
            row = {"order": order_name, "n_features": n, "accuracy": accuracy, "seconds": seconds}
            if balanced:
                row["balanced_accuracy"] = balanced_accuracy(yt, y_pred)
            rows.append({**row, **extra})
    return rows


def nested_one_nn_accuracies(Xs, ys, Xt, yt, order, n_features) -> list[float]:
    """1-NN accuracy (in %) on the first ``n`` features of ``order``, for every ``n``.

    Equal to :func:`one_nn_accuracy` on ``Xs[:, order[:n]]`` for each ``n``,
    but the nested feature sets share their work: the squared distances that
    decide the nearest neighbour, ``|s|^2 - 2 <t, s>`` for every target ``t``
    and source ``s`` (``|t|^2`` is the same for all candidates), are sums
    over features, so they are accumulated block by block along the order
    and each feature is visited once, whatever the number of points of the
    curve. Ties go to the lowest source index, as in scikit-learn.

    Parameters
    ----------
    Xs, ys : source samples and labels
    Xt, yt : target samples and labels
    order : sequence of int
        Feature indices, most important first.
    n_features : sequence of int
        Numbers of leading features to score, in any order.

    Returns
    -------
    list of float
        Accuracies in the order of ``n_features``.
    """
    Xs = as_float_matrix(Xs, "Xs")
    Xt = as_float_matrix(Xt, "Xt")
    check_same_features(Xs, Xt)
    ys = as_label_vector(ys, Xs.shape[0], "ys")
    yt = as_label_vector(yt, Xt.shape[0], "yt")
    return _nested_accuracies(Xs.T.copy(), ys, Xt.T.copy(), yt, np.asarray(order), n_features)


def _nested_accuracies(XsT, ys, XtT, yt, order, n_features) -> list[float]:
    """:func:`nested_one_nn_accuracies` on transposed (features x samples) copies."""
    return [100.0 * float(np.mean(p == yt)) for p in _nested_predictions(XsT, ys, XtT, order, n_features)]


def _nested_predictions(XsT, ys, XtT, order, n_features) -> list[np.ndarray]:
    """The 1-NN's target predictions on the first ``n`` features of ``order``, for every ``n``.

    With features as rows, gathering the features of a block copies whole
    rows, which is several times faster than gathering columns.
    """
    scores = {}
    D = np.zeros((XtT.shape[1], XsT.shape[1]))
    done = 0
    for n in sorted(set(int(n) for n in n_features)):
        if n > done:
            cols = order[done:n]
            S, T = XsT[cols], XtT[cols]
            D += np.einsum("ij,ij->j", S, S)[None, :]
            D -= 2.0 * (T.T @ S)
            done = n
        scores[n] = ys[np.argmin(D, axis=1)]
    return [scores[int(n)] for n in n_features]
