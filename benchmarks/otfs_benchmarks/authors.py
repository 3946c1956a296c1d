"""The authors' released protocol for Figure 7 (SURF, no adaptation), as the end-to-end reference.

The paper's code (``1_baseExperiment.py`` of the authors' repository, ECML
2018) runs, for every ordered pair of the four Office-Caltech domains and
every iteration: a class-balanced source subset (20 per class, 8 from DSLR)
drawn with Python's ``random.shuffle``; Algorithm 1 with POT's
``ot.da.EMDTransport`` (the smaller set keeps its samples, each matched to
the ``argmax`` of its coupling row); Algorithm 2 with
``ot.da.SinkhornTransport(reg_e=1, norm="log")`` between the z-scored
transposed pairs, features by decreasing coupling diagonal; then, for the
Ascending, Descending and Random orders and each of the 17 numbers of
features, a fresh ``KNeighborsClassifier(n_neighbors=1)`` fitted on the
source columns and scored on the target. The features are read from the
same ``.mat`` files, divided by their row sums and z-scored with
``sklearn.preprocessing.scale``.

This module re-states that protocol step for step (it is not the authors'
file, which is not redistributed here) and runs it with the installed POT
and scikit-learn, as a user running the released script today would: the
``SinkhornTransport`` options are the ones the script passes, everything
else POT's current defaults (recorded with the timing). Python's ``random``
is seeded once, so the run is repeatable; the script draws its subsets and
random orders without a seed, so its accuracies are not comparable point by
point with the pipeline's (:func:`otfs_benchmarks.end_to_end.plain_figure7`
is the reference that is).

``python -m otfs_benchmarks.authors --mat-dir DIR --iterations 19`` runs it in
a process of its own, as the script runs, and prints its wall time.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Section 5.1 and Figure 7; code released with the paper.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

DOMAINS = ("amazon", "caltech10", "dslr", "webcam")
ORDER_NAMES = ("Ascending", "Descending", "Random")


def run(mat_dir, iterations: int = 19, seed: int = 0, domains=DOMAINS, keep: bool = False) -> dict:
    """Run the protocol; return ``{"seconds": wall time from the imports on, "accuracies": n, ...}``.

    ``domains``: the paper's four, or fewer (tests). ``keep=True`` adds
    ``records``: ``(source, target, iteration, order, n, accuracy, subset)``
    per point, the subset as the source indices the script drew.
    """
    start = time.perf_counter()
    import numpy as np
    import ot
    from scipy.io import loadmat
    from sklearn import preprocessing
    from sklearn.neighbors import KNeighborsClassifier

    random.seed(seed)
    data = {}
    tests = []
    for source in domains:
        mat = loadmat(str(Path(mat_dir) / f"{source}.mat"))
        fts = mat["fts"].astype(float)
        feat = preprocessing.scale(fts / np.tile(np.sum(mat["fts"], 1), (fts.shape[1], 1)).T)
        data[source] = (feat, mat["labels"].ravel())
        tests += [(source, target, 8 if source == "dslr" else 20) for target in domains if target != source]
    d = data[domains[0]][0].shape[1]
    step = int(d / 16)
    counts = [int(d / 32), *range(step, d + step, step)]

    def subset(X, y, per_class):
        idx = []
        for c in np.unique(y):
            members = np.argwhere(y == c).ravel()
            random.shuffle(members)
            idx.extend(members[:min(per_class, len(members))])
        return X[idx, :], y[idx], idx

    def rank(S, T):
        emd = ot.da.EMDTransport()
        if len(S) < len(T):
            emd.fit(Xs=S, Xt=T)
            Su, Tu = S, [T[i] for i in np.argmax(emd.coupling_, axis=1)]
        else:
            emd.fit(Xs=T, Xt=S)
            Su, Tu = [S[i] for i in np.argmax(emd.coupling_, axis=1)], T
        sinkhorn = ot.da.SinkhornTransport(reg_e=1, norm="log")
        sinkhorn.fit(Xs=preprocessing.scale(np.transpose(Su)), Xt=preprocessing.scale(np.transpose(Tu)))
        return np.argsort(-np.diag(sinkhorn.coupling_))

    accuracies, records = [], []
    for source, target, per_class in tests:
        (Xs_all, ys_all), (Xt, yt) = data[source], data[target]
        for iteration in range(iterations):
            Xs, ys, idx = subset(Xs_all, ys_all, per_class)
            desc = rank(Xs, Xt)
            asc = desc[::-1]
            shuffled = asc.copy()
            random.shuffle(shuffled)
            for name, order in zip(ORDER_NAMES, (asc, desc, shuffled), strict=True):
                for n in counts:
                    cols = order[:n]
                    knn = KNeighborsClassifier(n_neighbors=1)
                    knn.fit(Xs[:, cols], ys)
                    accuracies.append(100 * knn.score(Xt[:, cols], yt))
                    if keep:
                        records.append((source, target, iteration, name, n, accuracies[-1], [int(i) for i in idx]))
    extra = {"records": records} if keep else {}
    return {**extra, "seconds": time.perf_counter() - start, "accuracies": len(accuracies),
            "mean_accuracy": float(np.mean(accuracies)), "pot": ot.__version__,
            "sinkhorn_method": ot.da.SinkhornTransport(reg_e=1, norm="log").method,
            "pairs": len(tests), "iterations": iterations}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m otfs_benchmarks.authors", description=__doc__.split("\n")[0])
    parser.add_argument("--mat-dir", required=True, help="the folder of SURF's <domain>.mat files")
    parser.add_argument("--iterations", type=int, default=19)
    args = parser.parse_args(argv)
    missing = [d for d in DOMAINS if not (Path(args.mat_dir) / f"{d}.mat").is_file()]
    if missing:
        raise SystemExit(f"--mat-dir {args.mat_dir}: no {missing[0]}.mat")
    if args.iterations < 1:
        raise SystemExit(f"--iterations must be >= 1, got {args.iterations}")
    json.dump(run(args.mat_dir, args.iterations), sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
