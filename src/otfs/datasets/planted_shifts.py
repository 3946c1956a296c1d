"""``planted-shifts``: a seeded two-domain generator whose shifted features are known, one group per kind of shift.

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DatasetReader, DomainFeatures, check_param

#: The kinds of planted shift, in the order of their feature groups.
SHIFT_KINDS = ("mean", "scale", "shape", "class-conditional", "correlation")


@DATASET_READERS.register("planted-shifts")
class PlantedShifts(DatasetReader):
    """Two domains, ``source`` and ``target``, sharing all features but the planted ones.

    Every feature carries class signal: sample ``i`` of class ``c`` has
    ``x_ij = mu_cj + e_ij`` with class means ``mu ~ N(0, separation²)`` and
    noise ``e ~ N(0, 1)``; the classes are balanced. In the target domain,
    ``per_kind`` features of each kind are shifted (features ``0 ..
    5 * per_kind - 1``, grouped by kind in the order of :data:`SHIFT_KINDS`):

    ``mean``
        ``+ 2`` (two noise standard deviations).
    ``scale``
        multiplied by 3 around the feature's mean.
    ``shape``
        a monotone non-linear map, ``x -> sinh(x)`` after centring: the
        marginal's tails stretch, the order of the samples does not change.
    ``class-conditional``
        the class means of the feature are permuted cyclically across the
        classes: each class's distribution changes, the marginal (a balanced
        mixture of the same components) does not.
    ``correlation``
        the feature is ``rho * z + sqrt(1 - rho²) * e`` with ``z`` the noise of
        a shared feature (the last one) and ``rho = 0.9``; in the target
        ``rho`` is ``-0.9``. Its marginal is unchanged; only its joint
        distribution with the shared feature moves.

    Only a ranker that looks at features jointly, or at the classes, can see
    the last two kinds; the per-feature tests cannot, by construction.

    Parameters
    ----------
    n_features : int, default=64
        At least ``5 * per_kind + 1``.
    per_kind : int, default=4
    n_samples : int, default=600
        Samples per domain (a multiple of ``n_classes``).
    n_classes : int, default=3
    separation : float, default=1.0
    seed : int, default=0
    """

    def __init__(self, n_features=64, per_kind=4, n_samples=600, n_classes=3, separation=1.0, seed=0):
        for name, value in (("per_kind", per_kind), ("n_classes", n_classes), ("n_features", n_features),
                            ("n_samples", n_samples), ("seed", seed)):
            check_param(name, value, int)
        for name, value, low in (("n_features", n_features, 5 * per_kind + 1), ("per_kind", per_kind, 1),
                                 ("n_samples", n_samples, 2 * n_classes), ("n_classes", n_classes, 2),
                                 ("seed", seed, 0)):
            if value < low:
                raise ValueError(f"{name}={value!r} must be an integer >= {low}")
        if n_samples % n_classes:
            raise ValueError(f"n_samples={n_samples} must be a multiple of n_classes={n_classes}")
        check_param("separation", separation, float)
        if not separation > 0:
            raise ValueError(f"separation={separation!r} must be > 0")
        self.n_features, self.per_kind, self.n_samples = n_features, per_kind, n_samples
        self.n_classes, self.separation, self.seed = n_classes, separation, seed

    def planted(self) -> dict[str, list[int]]:
        """The shifted features of each kind."""
        return {kind: list(range(i * self.per_kind, (i + 1) * self.per_kind)) for i, kind in enumerate(SHIFT_KINDS)}

    def files(self, domain):
        return []

    def count_features(self, domains, manifest):
        unknown = [d for d in domains if d not in ("source", "target")]
        if unknown:
            raise ValueError(f"planted-shifts has the domains ['source', 'target'], not {unknown}")
        return self.n_features

    def read(self, domain, paths, manifest):
        if domain not in ("source", "target"):
            raise ValueError(f"planted-shifts has the domains ['source', 'target'], not {domain!r}")
        k, d = self.n_classes, self.n_features
        mu = self.separation * np.random.RandomState(self.seed).randn(k, d)
        rng = np.random.RandomState([self.seed, 0 if domain == "source" else 1])
        y = np.repeat(np.arange(1, k + 1), self.n_samples // k)
        noise = rng.randn(y.size, d)
        means = mu[y - 1]
        groups = self.planted()
        z = noise[:, -1]  # the shared feature's noise
        rho = 0.9 if domain == "source" else -0.9
        cols = groups["correlation"]
        noise[:, cols] = rho * z[:, None] + np.sqrt(1 - rho**2) * noise[:, cols]
        if domain == "target":
            cols = groups["class-conditional"]
            means[:, cols] = mu[np.roll(np.arange(k), 1)[y - 1]][:, cols]
        X = means + noise
        if domain == "target":
            centre = mu.mean(axis=0)
            cols = groups["mean"]
            X[:, cols] += 2.0
            cols = groups["scale"]
            X[:, cols] = centre[cols] + 3.0 * (X[:, cols] - centre[cols])
            cols = groups["shape"]
            X[:, cols] = centre[cols] + np.sinh(X[:, cols] - centre[cols])
        return DomainFeatures(X, y, [f"class{c}" for c in range(1, k + 1)])
