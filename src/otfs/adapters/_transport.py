"""The shared part of the OT adapters: uniform weights, the cost, the barycentric map (Eq. 6).

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

import numpy as np
import ot

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
    """Shared part of the OT adapters: uniform weights, cost, barycentric map."""

    norm = None

    def _cost(self, Xs, Xt):
        return normalise_cost(ot.dist(Xs, Xt, metric="sqeuclidean"), self.norm)

    def _coupling(self, a, b, M, ys):  # pragma: no cover - interface
        raise NotImplementedError

    def fit_transform(self, Xs, ys, Xt):
        Xs, ys, Xt = self._check(Xs, ys, Xt)
        a, b = ot.unif(Xs.shape[0]), ot.unif(Xt.shape[0])
        G = self._coupling(a, b, self._cost(Xs, Xt), ys)
        self.coupling_ = check_coupling(G, f"{type(self).__name__} ({self.name})", getattr(self, "reg", None))
        return _barycentric_map(G, Xt), Xt.copy()
