"""``landmine``: mine or clutter from 9 radar features, foliated fields against bare ones (Xue et al. 2007).

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DomainFeatures
from otfs.datasets._shift import ShiftFileError, ShiftReader, read_mat

#: Fields 1-15 are foliated, 16-29 bare earth or desert (Xue et al. 2007, Section 5.2).
FIELDS = {"foliated": range(1, 16), "bare": range(16, 30)}


@DATASET_READERS.register("landmine")
class Landmine(ShiftReader):
    """The 29 fields of the landmine data as two domains: the 15 foliated fields and the 14 bare ones.

    ``LandmineData.mat`` holds ``feature`` and ``label``, 1 x 29 cells (one
    per field) of ``n x 9`` features and ``n`` labels (1: mine, 0:
    clutter). A domain stacks its fields in field order (8,535 foliated and
    6,285 bare samples; 446 and 458 mines, about 5 % and 7 %: strong class
    imbalance, so the leaderboard reports balanced accuracy beside
    accuracy). The classes are ``clutter`` and ``mine``.

    References
    ----------
    .. [1] Y. Xue, X. Liao, L. Carin, B. Krishnapuram. Multi-Task Learning for Classification with Dirichlet
       Process Priors. JMLR 8, 2007.
    """

    family = "landmine"
    domain_files = {d: ["LandmineData.mat"] for d in FIELDS}
    n_features = 9

    def read(self, domain, paths, manifest):
        path = self._path(paths, domain)
        mat = read_mat(path, ["feature", "label"])
        features, labels = np.asarray(mat["feature"]).ravel(), np.asarray(mat["label"]).ravel()
        if features.size != 29 or labels.size != 29:
            raise ShiftFileError(f"{path}: feature and label must be cells of 29 fields, got {features.size} and "
                                 f"{labels.size}")
        X, y = [], []
        for field in FIELDS[domain]:
            f, lab = np.asarray(features[field - 1], dtype=np.float64), np.asarray(labels[field - 1]).ravel()
            if f.ndim != 2 or f.shape[1] != self.n_features or lab.shape != (f.shape[0],):
                raise ShiftFileError(f"{path}: field {field}: features {f.shape} and labels {lab.shape}, expected "
                                     f"n x {self.n_features} and n labels")
            if not set(np.unique(lab).tolist()) <= {0, 1}:
                raise ShiftFileError(f"{path}: field {field}: labels must be 0 or 1")
            X.append(f)
            y.append(lab.astype(np.int64) + 1)
        return DomainFeatures(np.vstack(X), np.concatenate(y), ["clutter", "mine"],
                              info={"fields": list(FIELDS[domain])})
