"""The shared part of the OT adapters: uniform weights, the cost, the barycentric map (Eq. 6).

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

import numpy as np

# POT's ot.dist(metric="sqeuclidean") and ot.unif, the same arithmetic (tests/test_job_imports.py): an OT
# adapter's job, and the workflow's parse that reads the adapters' registry, do not import POT
from otfs._ot.emd import sqeuclidean, uniform
from otfs._ot.solvers import check_coupling, normalise_cost
from otfs.adapters._base import (
    BaseAdapter,
)


def _barycentric_map(G: np.ndarray, Xt: np.ndarray) -> np.ndarray:
    """Eq. (6): ``diag(G 1)^{-1} G Xt``; a source sample with no mass maps to 0.

    The row scaling is applied to the ``n_s x d`` product rather than to the
    ``n_s x n_t`` coupling: the same map, with round-off-level differences.
    """
    mass = G.sum(axis=1)
    out = G @ Xt
    has_mass = mass > 0
    out[has_mass] /= mass[has_mass, None]
    out[~has_mass] = 0.0
    return out


class _OTAdapter(BaseAdapter):
    """Shared part of the OT adapters: uniform weights, cost, barycentric map.

    Fitted attributes: ``coupling_``, ``X_source_`` (the training source samples) and ``X_source_mapped_``
    (their images). Target samples stay where they are; a new source sample moves as its nearest training
    source sample does (Ferradans et al. 2014; POT's ``out_of_sample_map="ferradans"``).
    """

    norm = None

    def _cost(self, Xs, Xt):
        return normalise_cost(sqeuclidean(Xs, Xt), self.norm)

    def _coupling(self, a, b, M, ys):  # pragma: no cover - interface
        raise NotImplementedError

    def _fit_adapt(self, Xs, ys, Xt):
        a, b = uniform(Xs.shape[0]), uniform(Xt.shape[0])
        G = self._coupling(a, b, self._cost(Xs, Xt), ys)
        self.coupling_ = check_coupling(G, f"{type(self).__name__} ({self.name})", getattr(self, "reg", None))
        return self._store_map(Xs, _barycentric_map(G, Xt)), Xt.copy()

    def _store_map(self, Xs, Xs_mapped):
        """Keep the training source samples and their images for :meth:`_transform_source`; return the images."""
        self.X_source_, self.X_source_mapped_ = Xs, Xs_mapped
        return Xs_mapped

    def _transform_source(self, X):
        """The barycentric map of the training source samples; a new sample moves as its nearest training
        source sample does (the out-of-sample map of Ferradans et al. 2014, POT's ``BaseTransport.transform``)."""
        if X.shape == self.X_source_.shape and np.array_equal(X, self.X_source_):
            return self.X_source_mapped_.copy()
        nearest = np.argmin(sqeuclidean(X, self.X_source_), axis=1)
        return X - self.X_source_[nearest] + self.X_source_mapped_[nearest]

    def _transform_target(self, X):
        return X.copy()
