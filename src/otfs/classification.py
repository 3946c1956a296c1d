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

__all__ = ["CLASSIFIERS", "accuracy_curve", "make_classifier", "nested_one_nn_accuracies", "one_nn_accuracy"]

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


def _logistic_regression(**params):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(**{"max_iter": 1000, **params})


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


def accuracy_curve(
    Xs,
    ys,
    Xt,
    yt,
    orders: Mapping[str, Sequence[int]],
    n_features: Sequence[int],
    adapter: BaseAdapter | None = None,
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
    for order_name, order in orders.items():
        order = np.asarray(order)
        if sorted(order.tolist()) != list(range(d)):
            raise ValueError(f"order {order_name!r} is not a permutation of the {d} features")
        if nested:
            accuracies = _nested_accuracies(XsT, ys, XtT, yt, order, n_features)
            rows += [
                {"order": order_name, "n_features": n, "accuracy": acc, "seconds": 0.0}
                for n, acc in zip(n_features, accuracies, strict=True)
            ]
            continue
        predicts = getattr(adapter, "predicts_labels", False)
        for n in n_features:
            cols = order[:n]
            start = time.perf_counter()
            try:
                if predicts:  # the adapter predicts the target labels itself (a skada estimator with its classifier)
                    y_pred = adapter.fit_predict(Xs[:, cols], ys, Xt[:, cols])
                    seconds = time.perf_counter() - start
                    accuracy = 100.0 * float(np.mean(np.asarray(y_pred) == yt))
                else:
                    Xs_a, Xt_a = adapter.adapt(Xs[:, cols], ys, Xt[:, cols])
                    seconds = time.perf_counter() - start
                    accuracy = one_nn_accuracy(Xs_a, ys, Xt_a, yt)
            except (ValueError, FloatingPointError) as exc:  # which point of the curve failed, by column
                shown = ", ".join(str(int(c)) for c in cols[:10]) + (", ..." if n > 10 else "")
                raise type(exc)(f"{type(adapter).__name__} on the first {n} feature(s) of the {order_name} order "
                                f"(columns {shown}): {exc}") from exc
            rows.append({"order": order_name, "n_features": n, "accuracy": accuracy, "seconds": seconds})
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
    """:func:`nested_one_nn_accuracies` on transposed (features x samples) copies.

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
        scores[n] = 100.0 * float(np.mean(ys[np.argmin(D, axis=1)] == yt))
    return [scores[int(n)] for n in n_features]
