"""POT calls shared by the sample selection, the ranking and the OT adapters."""

from __future__ import annotations

import warnings

import numpy as np
import ot

__all__ = ["exact_coupling", "normalise_cost"]


def normalise_cost(C: np.ndarray, norm: str | None) -> np.ndarray:
    """POT's cost normalisation; ``None`` or ``"none"`` leaves ``C`` unchanged."""
    return C if norm in (None, "none") else ot.utils.cost_normalization(C, norm)


def exact_coupling(a: np.ndarray, b: np.ndarray, M: np.ndarray, max_iter: int) -> np.ndarray:
    """Exact OT coupling (network simplex); reaching ``max_iter`` is an error, not a warning."""
    with warnings.catch_warnings():
        # reported below as an error naming the limit to raise
        warnings.filterwarnings("ignore", message="numItermax reached")
        G, log = ot.emd(a, b, M, numItermax=max_iter, log=True)
    if log["result_code"] != 1:
        raise RuntimeError(
            f"exact OT did not reach optimality ({log['warning']}); "
            f"increase the EMD iteration limit (currently {max_iter})"
        )
    return G
