"""Supervised dimension reduction benchmarked by kNN: the protocol of Table 1 of the WDA paper.

For each data set and random split, the projection's dimension ``p`` and the
``k`` of the kNN classifier are chosen by stratified cross-validation on the
training part; the projection is then refitted on the whole training part and
the kNN test error reported. As in the paper (after Tangkaratt et al.), 100
standard Gaussian noise features are appended to the low-dimensional sets
(after standardisation with the training part's statistics), not to the
image and speech ones.

Methods are registered in :data:`REDUCERS` (a name and a factory taking ``p``,
the number of classes, a seed and the method's parameters); the pipeline
crosses any registered method with any data set of :mod:`otfs.datasets._uci`.

References
----------
.. [1] R. Flamary, M. Cuturi, N. Courty, A. Rakotomamonjy. Wasserstein
   Discriminant Analysis (Analyse discriminante linéaire par distance de
   Wasserstein). GRETSI 2017, Table 1 and Figure 2.
.. [2] V. Tangkaratt, H. Sasaki, M. Sugiyama. Direct estimation of the
   derivative of quadratic mutual information with application in supervised
   dimension reduction. arXiv:1508.01019, 2015.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np

from otfs._checks import derive_seed
from otfs.registry import Registry

__all__ = [
    "REDUCERS",
    "SplitData",
    "evaluate_split",
    "knn_errors",
    "knn_error_curve",
    "make_split",
    "max_components",
    "register_reducer",
    "split_candidates",
]

#: Registered dimension-reduction methods: name -> factory(p, n_classes, seed, **params)
#: (entry-point group ``otfs.reducers``).
REDUCERS = Registry("dimension reducer", "dimension reducers", package="otfs.reducers")


#: ``@register_reducer("NAME")`` on a factory ``(p, n_classes, seed, **params) -> transformer`` adds it to
#: :data:`REDUCERS`.
register_reducer = REDUCERS.register


def max_components(method: str, d: int, n_classes: int) -> int:
    """The largest ``p`` a method can return (FDA: ``n_classes - 1``)."""
    return min(d, n_classes - 1) if method == "FDA" else d


def knn_errors(Z_train, y_train, Z_test, y_test, ks: Sequence[int]) -> np.ndarray:
    """Test error (percent) of the uniform kNN classifier for every ``k`` in ``ks``.

    One neighbour search up to ``max(ks)``, then a majority vote per ``k``;
    ties go to the smallest class index, as scikit-learn's
    ``KNeighborsClassifier`` does (``tests/test_wda.py`` checks it).
    ``y_train`` and ``y_test`` are class indices ``0..C-1``.
    """
    from sklearn.neighbors import NearestNeighbors

    ks = [int(k) for k in ks]
    kmax = min(max(ks), len(y_train))
    nn = NearestNeighbors(n_neighbors=kmax).fit(Z_train)
    idx = nn.kneighbors(Z_test, return_distance=False)
    labels = np.asarray(y_train)[idx]
    n_classes = int(max(np.max(y_train), np.max(y_test))) + 1
    votes = np.zeros((len(y_test), n_classes))
    errors = {}
    rows = np.arange(len(y_test))
    for j in range(kmax):
        np.add.at(votes, (rows, labels[:, j]), 1)
        if j + 1 in ks or j + 1 == kmax:
            errors[j + 1] = 100.0 * np.mean(votes.argmax(axis=1) != y_test)
    return np.array([errors[min(k, kmax)] for k in ks])


class SplitData:
    """One random split of a data set, standardised, with the noise features appended.

    Attributes: ``X_train``, ``y_train``, ``X_test``, ``y_test`` (class indices),
    ``n_classes``, ``seed``.
    """

    def __init__(self, X_train, y_train, X_test, y_test, n_classes, seed):
        self.X_train, self.y_train = X_train, y_train
        self.X_test, self.y_test = X_test, y_test
        self.n_classes, self.seed = n_classes, seed


def make_split(X, y, dataset: str, split: int, *, noise_features: int = 0,
               train_fraction: float = 0.5, max_train: int | None = None,
               max_test: int | None = None) -> SplitData:
    """Split ``dataset``'s ``(X, y)`` for split number ``split``, deterministically.

    The seed is :func:`otfs._checks.derive_seed` of ``("wda", dataset,
    split)``: the same split whatever the job order or the method.
    """
    from sklearn.model_selection import train_test_split

    classes, y_idx = np.unique(y, return_inverse=True)
    n = len(y_idx)
    n_train = int(round(train_fraction * n))
    if max_train is not None:
        n_train = min(n_train, int(max_train))
    n_test = n - n_train
    if max_test is not None:
        n_test = min(n_test, int(max_test))
    seed = derive_seed("wda", dataset, split)
    tr, te = train_test_split(np.arange(n), train_size=n_train, test_size=n_test,
                              stratify=y_idx, random_state=seed % (2**31))
    mean = X[tr].mean(axis=0)
    std = X[tr].std(axis=0)
    std[std == 0] = 1.0  # a constant feature (ionosphere's second) stays 0
    Xtr, Xte = (X[tr] - mean) / std, (X[te] - mean) / std
    if noise_features:
        rng = np.random.default_rng(derive_seed("wda", dataset, split, "noise"))
        Xtr = np.hstack([Xtr, rng.standard_normal((len(tr), noise_features))])
        Xte = np.hstack([Xte, rng.standard_normal((len(te), noise_features))])
    return SplitData(Xtr, y_idx[tr], Xte, y_idx[te], len(classes), seed)


def _fit_transform(method, p, data_train, y_train, others, n_classes, seed, params, *, return_reducer=False):
    reducer = REDUCERS[method](p, n_classes, seed, **params)
    Z = reducer.fit(data_train, y_train).transform(data_train)
    out = (Z, [reducer.transform(o) for o in others])
    return (*out, reducer) if return_reducer else out


def split_candidates(params: Mapping | None) -> tuple[dict, list[dict]]:
    """Split a method's parameters into the fixed ones and the ``candidates`` cross-validated with p and k."""
    params = dict(params or {})
    candidates = params.pop("candidates", None) or [{}]
    if not isinstance(candidates, (list, tuple)) or not all(isinstance(c, Mapping) for c in candidates):
        raise ValueError(f"candidates must be a list of parameter mappings, got {candidates!r}")
    return params, [dict(c) for c in candidates]


def _cv_errors(data: SplitData, method: str, ps: Sequence[int], ks: Sequence[int], cv_folds: int,
               params: Mapping, candidates: Sequence[Mapping]) -> np.ndarray:
    """Cross-validation error ``(candidate, p, k)`` on the training part."""
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=cv_folds, shuffle=True, random_state=data.seed % (2**31))
    cv = np.zeros((len(candidates), len(ps), len(ks)))
    for f, (tr, va) in enumerate(folds.split(data.X_train, data.y_train)):
        for c, cand in enumerate(candidates):
            for i, p in enumerate(ps):
                Ztr, (Zva,) = _fit_transform(method, p, data.X_train[tr], data.y_train[tr], [data.X_train[va]],
                                             data.n_classes, derive_seed(data.seed, f, p), {**params, **cand})
                cv[c, i] += knn_errors(Ztr, data.y_train[tr], Zva, data.y_train[va], ks) / cv_folds
    return cv


def evaluate_split(data: SplitData, method: str, *, p_grid: Sequence[int], k_grid: Sequence[int],
                   cv_folds: int = 3, params: Mapping | None = None) -> dict:
    """Choose ``(p, k)`` by cross-validation on the training part, then report the test error.

    ``params`` are the method's parameters. Their optional ``candidates``, a
    list of parameter mappings, are cross-validated together with ``p`` and
    ``k`` (each merged over the other parameters): for WDA, the cost
    scaling, λ and the starting point (see ``config.yaml``, ``wda.methods``).

    Returns a record with the chosen ``p``, ``k`` and ``candidate`` (its
    index), the cross-validation error, the test ``error`` (percent), the
    final fit's ``objective`` and ``n_iter`` (NaN for a method without them)
    and the ``seconds`` it all took. Ties go to the earlier candidate, then the
    smaller ``p``, then the smaller ``k``.
    """
    REDUCERS.check([method])
    params, candidates = split_candidates(params)
    start = time.perf_counter()
    d = data.X_train.shape[1]
    top = max_components(method, d, data.n_classes)
    ps = sorted({min(int(p), top) for p in p_grid})
    ks = sorted({int(k) for k in k_grid})
    cv = _cv_errors(data, method, ps, ks, cv_folds, params, candidates)
    c, i, j = np.unravel_index(np.argmin(cv), cv.shape)  # first minimum: earliest candidate, smallest p, then k
    p, k = ps[i], ks[j]
    Ztr, (Zte,), reducer = _fit_transform(method, p, data.X_train, data.y_train, [data.X_test], data.n_classes,
                                          derive_seed(data.seed, "final", p), {**params, **candidates[c]},
                                          return_reducer=True)
    error = float(knn_errors(Ztr, data.y_train, Zte, data.y_test, [k])[0])
    return {"method": method, "p": p, "k": k, "candidate": int(c), "cv_error": float(cv[c, i, j]), "error": error,
            "n_train": len(data.y_train), "n_test": len(data.y_test), "d": d,
            # the final fit's objective and iterations, where the method has them (WDA: within / between)
            "objective": float(getattr(reducer, "objective_", np.nan)),
            "n_iter": float(getattr(reducer, "n_iter_", np.nan)),
            "seconds": time.perf_counter() - start}


def knn_error_curve(data: SplitData, method: str, p: int, ks: Sequence[int],
                    params: Mapping | None = None, cv_folds: int = 3) -> dict:
    """Test error against ``k`` for a projection of dimension ``p`` fitted on the training part.

    FDA's ``p`` is capped at ``n_classes - 1``; the record gives the ``p`` used.
    With ``candidates`` among ``params``, the one with the smallest
    cross-validation error over ``ks`` on the training part is used.
    """
    top = max_components(method, data.X_train.shape[1], data.n_classes)
    p_used = min(int(p), top)
    params, candidates = split_candidates(params)
    start = time.perf_counter()
    c = 0
    if len(candidates) > 1:
        cv = _cv_errors(data, method, [p_used], list(map(int, ks)), cv_folds, params, candidates)
        c = int(np.argmin(cv.min(axis=(1, 2))))
    Ztr, (Zte,) = _fit_transform(method, p_used, data.X_train, data.y_train, [data.X_test],
                                 data.n_classes, derive_seed(data.seed, "curve", p_used), {**params, **candidates[c]})
    errors = knn_errors(Ztr, data.y_train, Zte, data.y_test, ks)
    return {"method": method, "p": int(p), "p_used": p_used, "k": list(map(int, ks)), "candidate": c,
            "error": errors.tolist(), "seconds": time.perf_counter() - start}
