"""Input checks shared by the library's public functions.

Every public function takes plain arrays; these helpers turn them into
float64 arrays without touching the caller's data and reject what the
algorithms cannot handle (NaN, infinities, wrong dimensionality) with an
error that names the offending argument.
"""

from __future__ import annotations

import numpy as np


def as_float_matrix(X, name: str) -> np.ndarray:
    """Return ``X`` as a 2-D float64 array, refusing NaN and infinities.

    The result never shares memory with a caller's array that could be
    modified later by the library: callers that need to write must copy.
    """
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (samples x features), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinite values (first at row {bad[0]}, column {bad[1]})"
        )
    return arr


def check_same_features(Xs: np.ndarray, Xt: np.ndarray, names=("Xs", "Xt")) -> None:
    """Raise if two domains do not describe the same features."""
    if Xs.shape[1] != Xt.shape[1]:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same number of features, "
            f"got {Xs.shape[1]} and {Xt.shape[1]}"
        )


def as_label_vector(y, n: int, name: str = "y") -> np.ndarray:
    """Return labels as a 1-D array of length ``n``."""
    arr = np.asarray(y)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a vector of {n} labels, got shape {np.shape(y)}")
    return arr
