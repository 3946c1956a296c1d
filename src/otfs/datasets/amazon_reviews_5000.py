"""``amazon-reviews-5000``: Amazon product reviews by category, 5,000 word counts (Blitzer et al. 2007).

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DomainFeatures, check_param
from otfs.datasets._shift import ShiftFileError, ShiftReader, _existing

#: The domains and their files' prefix.
DOMAINS = ("books", "dvd", "electronics", "kitchen")
SPLITS = ("train", "test")


def read_svmlight(path, n_features: int):
    """The sparse counts (CSR) and +1/-1 labels of an svmlight file; a malformed or truncated file names it."""
    from sklearn.datasets import load_svmlight_file

    path = _existing(path)
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, dtype=np.float64, zero_based=True)
    except ValueError as exc:  # scikit-learn's parser: a bad token, an index beyond n_features
        raise ShiftFileError(f"{path}: not an svmlight file of {n_features} features ({exc}); the file is "
                             "truncated or corrupt") from exc
    if X.shape[0] == 0:
        raise ShiftFileError(f"{path}: no sample")
    with open(path, "rb") as fh:  # a file cut inside its last line parses, shorter: it must end with a newline
        fh.seek(-1, 2)
        if fh.read(1) != b"\n":
            raise ShiftFileError(f"{path}: the last line is cut short (no final newline): the file is truncated")
    labels = sorted(np.unique(y).tolist())
    if not set(labels) <= {-1.0, 1.0}:
        raise ShiftFileError(f"{path}: labels must be +1 or -1, found {labels}")
    return X.tocsr(), y


@DATASET_READERS.register("amazon-reviews-5000")
class AmazonReviews5000(ShiftReader):
    """Amazon reviews of four product categories as domains, 5,000 unigram and bigram counts, binary sentiment.

    Each domain has a ``train`` file (2,000 reviews, 1,000 positive) and a
    ``test`` file (3,586 to 5,945 reviews), svmlight format, label +1
    (positive) or -1 (negative), the counts of the 5,000 most frequent
    unigrams and bigrams of the four domains (Chen et al. 2012's
    preprocessing, as DANN's authors released it). ``split`` picks the file
    (the benchmark reads ``train``: the 2,000 balanced reviews of each
    domain, as the 400-feature version). The classes are ``-1`` and ``+1``.

    The files are sparse (1.3 to 1.8 % non-zeros in the train files) and are read sparse; the
    matrix is densified here, at the end of reading, because the feature
    cache and every ranker and adapter of the benchmark take dense
    matrices (2,000 x 5,000 float64: 80 MB per domain, in memory and in
    the cache). :func:`read_svmlight` returns the sparse
    matrix for a method that can use it.

    Parameters
    ----------
    split : {"train", "test"}, default="train"

    References
    ----------
    .. [1] J. Blitzer, M. Dredze, F. Pereira. Biographies, Bollywood, Boom-boxes and Blenders: Domain
       Adaptation for Sentiment Classification. ACL 2007.
    .. [2] M. Chen, Z. Xu, K. Weinberger, F. Sha. Marginalized Denoising Autoencoders for Domain
       Adaptation. ICML 2012.
    .. [3] Y. Ganin et al. Domain-Adversarial Training of Neural Networks. JMLR 17(59), 2016.
    """

    family = "amazon-reviews-5000"
    n_features = 5000

    def __init__(self, split="train"):
        check_param("split", split, str, choices=list(SPLITS))
        self.split = split
        self.domain_files = {d: [f"{d}_{split}.svmlight"] for d in DOMAINS}

    def read(self, domain, paths, manifest):
        path = self._path(paths, domain)
        X, labels = read_svmlight(path, self.n_features)
        y = np.where(labels > 0, 2, 1).astype(np.int64)
        info = {"split": self.split, "nnz": int(X.nnz), "densified": "on reading (dense cache)"}
        return DomainFeatures(X.toarray(), y, ["-1", "+1"], info=info)
