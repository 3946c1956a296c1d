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

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        return Xs.copy(), Xt.copy()
