"""Make tests/data/lmnn_metric_learn.json: metric-learn 0.7.0's LMNN on two small fixed data sets.

metric-learn 0.7.0 (the latest release) fails with scikit-learn >= 1.8, so this runs once, in an isolated
environment whose scikit-learn it supports; tests/test_wda.py compares otfs's LMNN with its output.
Regenerate (the command is recorded in the fixture):

    python3 -m venv /tmp/mlenv
    /tmp/mlenv/bin/pip install metric-learn==0.7.0 scikit-learn==1.5.2 "numpy<2" "scipy<1.14"
    /tmp/mlenv/bin/python tests/data/make_lmnn_fixture.py

The data are rebuilt by the test from the same recipe (scikit-learn's bundled wine, iris and digits, standardised;
wine and iris with 20 standard Gaussian noise features from numpy's legacy RandomState(0); a stratified split
from RandomState(1), half for training, 40 % for digits); the fixture keeps their SHA-256 so that a
different rebuild is an error, not a silent mismatch.
"""

import datetime
import hashlib
import json
import platform
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("lmnn_metric_learn.json")
#: data set -> n_components. wine and iris have 20 noise features added, as in the WDA protocol; digits (no
#: noise, 1,079 test samples: one sample is 0.09 point of error) is where the kNN errors are compared.
CASES = {"wine": 5, "iris": 2, "digits": 10}
SETTINGS = {"n_neighbors": 3, "regularization": 0.5, "init": "pca", "max_iter": 1000, "learn_rate": 1e-7,
            "convergence_tol": 0.001, "random_state": 0}


def dataset(name):
    """(X_train, y_train, X_test, y_test) of ``name``: the recipe tests/test_wda.py rebuilds."""
    from sklearn.datasets import load_digits, load_iris, load_wine

    X, y = {"wine": load_wine, "iris": load_iris, "digits": load_digits}[name](return_X_y=True)
    std = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)
    if name != "digits":
        X = np.hstack([X, np.random.RandomState(0).standard_normal((len(X), 20))])
    train = np.zeros(len(y), dtype=bool)
    rng = np.random.RandomState(1)
    share = 0.4 if name == "digits" else 0.5
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        train[rng.permutation(idx)[: int(len(idx) * share)]] = True
    return X[train], y[train], X[~train], y[~train]


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


def main():
    import metric_learn
    import scipy
    import sklearn
    from metric_learn import LMNN
    from metric_learn.lmnn import _sum_outer_products
    from sklearn.neighbors import KNeighborsClassifier

    cases = {}
    for name, p in CASES.items():
        Xtr, ytr, Xte, yte = dataset(name)
        lmnn = LMNN(n_components=p, **SETTINGS).fit(Xtr, ytr)
        L = lmnn.components_
        knn = KNeighborsClassifier(n_neighbors=3).fit(Xtr @ L.T, ytr)
        # metric-learn's own objective (its private _loss_grad, as its fit computes it) at its map and at a
        # random one, for the test of otfs's loss
        k, labels = SETTINGS["n_neighbors"], np.unique(ytr, return_inverse=True)[1]
        targets = lmnn._select_targets(Xtr, labels)
        pull = _sum_outer_products(Xtr, targets.flatten(), np.repeat(np.arange(len(Xtr)), k))
        L_random = np.random.RandomState(2).standard_normal(L.shape) * 0.3
        objective = {which: float(lmnn._loss_grad(Xtr, M, pull, k, SETTINGS["regularization"], targets, labels)[1])
                     for which, M in (("fitted", L), ("random", L_random))}
        cases[name] = {"n_components": p, "data_sha256": digest(Xtr, ytr, Xte, yte),
                       "components": L.tolist(), "random_map": L_random.tolist(), "objective": objective,
                       "target_neighbors": targets.tolist(), "n_iter": int(lmnn.n_iter_),
                       "knn3_test_error_percent": float(100 * np.mean(knn.predict(Xte @ L.T) != yte))}
    fixture = {
        "what": "metric_learn.LMNN(n_components, **settings).fit(X_train, y_train) per data set: its components_, "
                "target neighbours, n_iter_, 3-NN test error, and its objective at its map and at a random one",
        "settings": SETTINGS,
        "cases": cases,
        "provenance": {
            "metric-learn": metric_learn.__version__, "scikit-learn": sklearn.__version__,
            "numpy": np.__version__, "scipy": scipy.__version__, "python": platform.python_version(),
            "command": f"{Path(sys.executable).name} tests/data/make_lmnn_fixture.py",
            "environment": 'pip install metric-learn==0.7.0 scikit-learn==1.5.2 "numpy<2" "scipy<1.14"',
            "date": datetime.date.today().isoformat(),
        },
    }
    OUT.write_text(json.dumps(fixture, indent=1) + "\n")
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk in ("objective", "n_iter", "knn3_test_error_percent")}
                      for k, v in cases.items()}))


if __name__ == "__main__":
    main()
