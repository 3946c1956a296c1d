"""``usps-mnist``: the digits pair of Long et al. (JDA, 2013), USPS and MNIST as two domains of 16 x 16 images.

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DatasetReader, DomainFeatures, check_param

#: The domains and the data sets of :mod:`otfs.datasets._uci` they are read from.
DOMAINS = {"usps": "usps", "mnist": "mnist"}


def area_resize_matrix(n_in: int, n_out: int) -> np.ndarray:
    """The ``(n_out, n_in)`` matrix of area-averaging resampling along one axis.

    Output pixel ``i`` covers the input interval ``[i, i + 1) * n_in / n_out``
    and averages the input pixels with the length of their overlap as weights
    (each row sums to 1): OpenCV's ``INTER_AREA`` for a downscale.
    """
    scale = n_in / n_out
    R = np.zeros((n_out, n_in))
    for i in range(n_out):
        lo, hi = i * scale, (i + 1) * scale
        for j in range(int(np.floor(lo)), min(int(np.ceil(hi)), n_in)):
            R[i, j] = max(0.0, min(hi, j + 1) - max(lo, j))
    return R / scale


@DATASET_READERS.register("usps-mnist")
class USPSMNIST(DatasetReader):
    """USPS and MNIST digits as two domains, after the protocol of Long et al. (JDA, 2013).

    Following [1]_, ``n_usps`` USPS images (of 9,298: the ESL train and test
    files) and ``n_mnist`` MNIST images are drawn at random, and every image
    becomes the vector of its grey values on a 16 x 16 grid. Two departures,
    both forced by the data present: MNIST is drawn from its 10,000-image test
    set (the training set is not in the mirror), and the 28 x 28 MNIST images
    are resized to 16 x 16 by area averaging (:func:`area_resize_matrix`), a
    resampling stated here because [1]_ does not name its own. Grey values
    are scaled to [0, 1] in both domains (USPS's [-1, 1] and MNIST's 0..255).
    Labels are the digits 0..9 as classes 1..10. The draw is seeded by
    ``seed`` and the domain, so both directions of the pair use the same
    images.

    Parameters
    ----------
    n_usps : int, default=1800
    n_mnist : int, default=2000
    seed : int, default=0

    References
    ----------
    .. [1] M. Long, J. Wang, G. Ding, J. Sun, P. S. Yu. Transfer feature
       learning with joint distribution adaptation. ICCV 2013, Section 5.1.
    """

    size = 16

    def __init__(self, n_usps=1800, n_mnist=2000, seed=0):
        check_param("seed", seed, int, low=0)
        for name, value, most in (("n_usps", n_usps, 9298), ("n_mnist", n_mnist, 10000)):
            if not isinstance(value, (int, np.integer)) or not 10 <= value <= most:
                raise ValueError(f"{name}={value!r} must be an integer in [10, {most}]")
        self.n_usps, self.n_mnist, self.seed = n_usps, n_mnist, seed

    def files(self, domain):
        from otfs.datasets._uci import raw_files

        return list(raw_files(self._dataset(domain)))

    def count_features(self, domains, manifest):
        for d in domains:
            self._dataset(d)
        return self.size * self.size

    def read(self, domain, paths, manifest):
        from otfs.datasets._uci import load_dataset

        X, y = load_dataset(self._dataset(domain), [paths[f] for f in self.files(domain)])
        n = self.n_usps if domain == "usps" else self.n_mnist
        rng = np.random.RandomState([self.seed, list(DOMAINS).index(domain)])
        take = np.sort(rng.choice(X.shape[0], n, replace=False))
        X, y = X[take], np.asarray(y)[take].astype(int)
        if domain == "usps":
            X = (X + 1.0) / 2.0
        else:
            R = area_resize_matrix(28, self.size)
            X = np.einsum("ij,njk,lk->nil", R, X.reshape(-1, 28, 28) / 255.0, R).reshape(n, -1)
        return DomainFeatures(X, y + 1, [str(k) for k in range(10)], [f"{domain}:{i}" for i in take])

    @staticmethod
    def _dataset(domain):
        if domain not in DOMAINS:
            raise ValueError(f"usps-mnist has the domains {list(DOMAINS)}, not {domain!r}")
        return DOMAINS[domain]
