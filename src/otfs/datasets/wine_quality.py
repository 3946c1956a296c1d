"""``wine-quality``: red and white vinho verde, good (quality >= 6) or not, from 11 physico-chemical tests.

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DomainFeatures, check_param
from otfs.datasets._shift import ShiftFileError, ShiftReader, read_numeric_table

#: The 11 features, in the files' column order (winequality.names).
FEATURES = ("fixed acidity", "volatile acidity", "citric acid", "residual sugar", "chlorides",
            "free sulfur dioxide", "total sulfur dioxide", "density", "pH", "sulphates", "alcohol")


@DATASET_READERS.register("wine-quality")
class WineQuality(ShiftReader):
    """The red (1,599) and white (4,898) wines of Cortez et al. as two domains.

    Each file has one wine per line, no header: the 11 features of
    :data:`FEATURES`, then the quality score (0-10, the median of at least
    three assessors). The task is the usual binary one, quality at least
    ``threshold``: classes ``quality < 6`` and ``quality >= 6`` (about 53 %
    and 67 % of the red and the white wines are good: label shift).

    Parameters
    ----------
    threshold : int, default=6

    References
    ----------
    .. [1] P. Cortez, A. Cerdeira, F. Almeida, T. Matos, J. Reis. Modeling wine preferences by data mining
       from physicochemical properties. Decision Support Systems 47(4), 2009.
    """

    family = "wine-quality"
    domain_files = {"red": ["winequality-red.csv"], "white": ["winequality-white.csv"]}
    n_features = len(FEATURES)

    def __init__(self, threshold=6):
        check_param("threshold", threshold, int, low=1)
        if threshold > 10:
            raise ValueError(f"threshold: {threshold!r} must be <= 10 (quality is 0-10)")
        self.threshold = threshold

    def read(self, domain, paths, manifest):
        path = self._path(paths, domain)
        table = read_numeric_table(path, len(FEATURES) + 1, missing=())
        quality = table[:, -1]
        if not np.all((quality >= 0) & (quality <= 10) & (np.mod(quality, 1) == 0)):
            raise ShiftFileError(f"{path}: the last column (quality) must hold integers 0-10")
        y = np.where(quality >= self.threshold, 2, 1)
        names = [f"quality < {self.threshold}", f"quality >= {self.threshold}"]
        return DomainFeatures(table[:, :-1], y, names, feature_names=FEATURES)
