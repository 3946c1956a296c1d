"""``wifi``: indoor localisation from WiFi signal strengths, across collection periods (ICDM 2007 contest).

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DomainFeatures, check_param
from otfs.datasets._shift import ShiftFileError, ShiftReader, read_mat

#: The files and the two periods each holds, as ``X1``/``Y1`` and ``X2``/``Y2``.
FILES = {"t1t2": ("t1", "t2"), "t1t3": ("t1", "t3"), "t2t3": ("t2", "t3")}


@DATASET_READERS.register("wifi")
class WiFi(ShiftReader):
    """Received signal strengths of 67 access points at 19 locations, two collection periods as domains.

    Each file holds two periods (``X1``/``Y1`` and ``X2``/``Y2``: 1,140
    samples x 67 strengths scaled to [0, 1], locations 0, 1.5, ..., 27, 60
    samples each). The same period differs between files (the contest's
    files were sampled separately), so a feature set reads one ``file`` and
    its two periods are its domains (``t1`` and ``t2`` of ``t1t2``). The
    classes are the 19 locations, named by their index.

    Parameters
    ----------
    file : {"t1t2", "t1t3", "t2t3"}, default="t1t2"

    References
    ----------
    .. [1] Q. Yang, S. J. Pan, V. W. Zheng. Estimating Location Using Wi-Fi. IEEE Intelligent Systems 23(1),
       2008 (the ICDM 2007 data mining contest).
    .. [2] S. J. Pan, I. W. Tsang, J. T. Kwok, Q. Yang. Domain Adaptation via Transfer Component Analysis.
       IEEE TNN 22(2), 2011 (the WiFi time-period tasks).
    """

    family = "wifi"
    n_features = 67
    n_classes = 19

    def __init__(self, file="t1t2"):
        check_param("file", file, str, choices=list(FILES))
        self.file = file
        self.domain_files = {period: [f"{file}.mat"] for period in FILES[file]}

    def read(self, domain, paths, manifest):
        path = self._path(paths, domain)
        k = FILES[self.file].index(domain) + 1
        mat = read_mat(path, [f"X{k}", f"Y{k}"])
        X, loc = np.asarray(mat[f"X{k}"], dtype=np.float64), np.asarray(mat[f"Y{k}"]).ravel()
        if X.shape[1:] != (self.n_features,) or loc.shape != (X.shape[0],):
            raise ShiftFileError(f"{path}: X{k} {X.shape} and Y{k} {np.shape(mat[f'Y{k}'])}, expected n x "
                                 f"{self.n_features} and n locations")
        index = loc / 1.5
        if not np.allclose(index, np.round(index)) or index.min() < 0 or index.max() > self.n_classes - 1:
            raise ShiftFileError(f"{path}: Y{k} must hold the locations 0, 1.5, ..., 27")
        y = np.round(index).astype(np.int64) + 1
        return DomainFeatures(X, y, [f"{1.5 * i:g}" for i in range(self.n_classes)])
