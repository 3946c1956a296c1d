"""``amazon-reviews-400``: Amazon product reviews by category, 400 dense features (the SKADA-Bench version).

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DomainFeatures
from otfs.datasets._shift import ShiftFileError, ShiftReader, read_mat


@DATASET_READERS.register("amazon-reviews-400")
class AmazonReviews400(ShiftReader):
    """Amazon reviews of four product categories (books, dvd, elec, kitchen) as domains, binary sentiment.

    Each domain is one MATLAB file with ``fts`` (about 2,000 reviews x 400
    features in [0, 1]: the mSDA preprocessing of Chen et al. 2012, as
    SKADA-Bench and skada's ``fetch_amazon_review`` use it) and ``labels``
    (0 or 1, about 1,000 each). The classes keep the file's labels, ``0``
    and ``1`` (label 1 is class 2).

    References
    ----------
    .. [1] J. Blitzer, M. Dredze, F. Pereira. Biographies, Bollywood, Boom-boxes and Blenders: Domain
       Adaptation for Sentiment Classification. ACL 2007.
    .. [2] M. Chen, Z. Xu, K. Weinberger, F. Sha. Marginalized Denoising Autoencoders for Domain
       Adaptation. ICML 2012.
    .. [3] Y. Lalou et al. SKADA-Bench: Benchmarking Unsupervised Domain Adaptation Methods with
       Realistic Validation. 2024.
    """

    family = "amazon-reviews-400"
    domain_files = {d: [f"{d}_400.mat"] for d in ("books", "dvd", "elec", "kitchen")}
    n_features = 400

    def read(self, domain, paths, manifest):
        path = self._path(paths, domain)
        mat = read_mat(path, ["fts", "labels"])
        X, labels = np.asarray(mat["fts"], dtype=np.float64), np.asarray(mat["labels"]).ravel()
        if X.shape[1:] != (self.n_features,) or labels.shape != (X.shape[0],):
            raise ShiftFileError(f"{path}: fts {X.shape} and labels {np.shape(mat['labels'])}, expected n x "
                                 f"{self.n_features} and n labels")
        if not set(np.unique(labels).tolist()) <= {0, 1}:
            raise ShiftFileError(f"{path}: labels must be 0 or 1, found {sorted(np.unique(labels).tolist())}")
        return DomainFeatures(X, labels.astype(np.int64) + 1, ["0", "1"])
