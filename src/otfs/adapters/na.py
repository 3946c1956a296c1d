"""NA: no adaptation.

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`).
"""

from __future__ import annotations

from otfs.adapters._base import (
    BaseAdapter,
    register_adapter,
)


@register_adapter("NA")
class NoAdaptation(BaseAdapter):
    """No adaptation: both domains are returned unchanged (as copies)."""

    identity = True

    def _fit_adapt(self, Xs, ys, Xt):
        return Xs.copy(), Xt.copy()

    def _transform_source(self, X):
        return X.copy()

    def _transform_target(self, X):
        return X.copy()
