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

import numpy as np
from sklearn.neighbors import KNeighborsClassifier

from ._checks import as_float_matrix, as_label_vector, check_same_features
from .adaptation import BaseAdapter, NoAdaptation

__all__ = ["accuracy_curve", "one_nn_accuracy"]


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
    knn = KNeighborsClassifier(n_neighbors=1, algorithm="brute", metric="euclidean")
    knn.fit(Xs, ys)
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
    adapter : BaseAdapter, default=NoAdaptation()

    Returns
    -------
    list of dict
        One record per (order, n) with keys ``order``, ``n_features``,
        ``accuracy`` (percent) and ``seconds`` (adaptation wall time).
    """
    Xs = as_float_matrix(Xs, "Xs")
    Xt = as_float_matrix(Xt, "Xt")
    check_same_features(Xs, Xt)
    adapter = NoAdaptation() if adapter is None else adapter
    d = Xs.shape[1]
    rows = []
    for order_name, order in orders.items():
        order = np.asarray(order)
        if sorted(order.tolist()) != list(range(d)):
            raise ValueError(f"order {order_name!r} is not a permutation of the {d} features")
        for n in n_features:
            if not 1 <= n <= d:
                raise ValueError(f"number of features {n} outside [1, {d}]")
            cols = order[:n]
            start = time.perf_counter()
            Xs_a, Xt_a = adapter.fit_transform(Xs[:, cols], ys, Xt[:, cols])
            seconds = time.perf_counter() - start
            rows.append(
                {
                    "order": order_name,
                    "n_features": int(n),
                    "accuracy": one_nn_accuracy(Xs_a, ys, Xt_a, yt),
                    "seconds": seconds,
                }
            )
    return rows
