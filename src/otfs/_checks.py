"""Input checks shared by the library's public functions.

Every public function takes plain arrays; these helpers turn them into
float64 arrays without touching the caller's data and reject what the
algorithms cannot handle (NaN, infinities, wrong dimensionality, sparse or
complex matrices, missing labels) with an error that names the offending
argument.

Sparse matrices are refused rather than densified: the OT solvers need the
dense ``n x n`` cost matrix anyway, and a silent ``toarray()`` of a large
sparse input could exhaust the memory. Complex values are refused: NumPy
would drop their imaginary part when casting to float.
"""

from __future__ import annotations

import hashlib
import numbers
import sys

import numpy as np


class DegenerateResultWarning(UserWarning):
    """A result that is computed but says nothing (for example, every feature with the same score)."""


#: Scores whose spread is at most this fraction of their magnitude are equal up to round-off.
EQUAL_SCORES_RTOL = 1e-10


def scores_all_equal(scores) -> bool:
    """Whether one score per feature says nothing: every score equal, up to round-off
    (``ptp <= EQUAL_SCORES_RTOL * max |score|``; the exact spread of constant data is often a few ulps)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size < 2:
        return False
    return bool(np.ptp(scores) <= EQUAL_SCORES_RTOL * np.max(np.abs(scores)))


def constant_columns(X, rtol: float = 1e-12) -> np.ndarray:
    """Indices of the columns of ``X`` that are constant up to round-off (spread at most ``rtol`` times
    their magnitude)."""
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] == 0:
        return np.arange(0)
    spread = np.ptp(X, axis=0)
    return np.flatnonzero(spread <= rtol * np.abs(X).max(axis=0))


def check_random_state(seed) -> np.random.RandomState:
    """scikit-learn's ``check_random_state``, without importing scikit-learn (a second or two per job).

    ``None`` (or ``np.random``) is NumPy's global RandomState, an integer
    seeds a new one, a RandomState is returned as it is; the same seed gives
    the same stream as scikit-learn's (``tests/test_checks.py``).
    """
    if seed is None or seed is np.random:
        return np.random.mtrand._rand
    if isinstance(seed, numbers.Integral):
        return np.random.RandomState(seed)
    if isinstance(seed, np.random.RandomState):
        return seed
    raise ValueError(f"{seed!r} cannot be used to seed a numpy.random.RandomState instance")


def _refuse_sparse_or_complex(X, name: str):
    """``X`` as an array; a sparse matrix or complex values are an error naming ``name``."""
    sparse = sys.modules.get("scipy.sparse")  # not imported: X cannot be a SciPy sparse matrix
    if sparse is not None and sparse.issparse(X):
        raise TypeError(
            f"{name} is a SciPy sparse matrix ({X.shape[0]} x {X.shape[1]}); otfs needs a dense array: "
            f"pass {name}.toarray()"
        )
    arr = np.asarray(X)
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} has complex values; otfs works on real features (pass its real part "
                         "or its modulus explicitly)")
    return arr


def as_float_matrix(X, name: str, columns=None) -> np.ndarray:
    """Return ``X`` as a 2-D float64 array, refusing NaN, infinities and values whose squares overflow or
    underflow (:func:`check_square_scale`); every error names ``name`` (and the column, by its name in
    ``columns`` where given).

    The result never shares memory with a caller's array that could be
    modified later by the library: callers that need to write must copy.
    """
    arr = np.asarray(_refuse_sparse_or_complex(X, name), dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (samples x features), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    # each column's largest and smallest value: a NaN propagates into both and an infinity is one of them, so
    # they tell whether the matrix is finite and give its magnitudes, in two passes and no temporary matrix
    hi, lo = arr.max(axis=0), arr.min(axis=0)
    if not (np.isfinite(hi).all() and np.isfinite(lo).all()):
        bad = np.argwhere(~np.isfinite(arr))[0]
        col = repr(str(columns[bad[1]])) if columns is not None else bad[1]
        raise ValueError(
            f"{name} contains NaN or infinite values (first at row {bad[0]}, column {col})"
        )
    _check_magnitudes(np.maximum(hi, -lo), name, columns)
    return arr


#: The largest magnitude whose squares, summed over ``d`` features and doubled twice (``|a - b|^2 <= 4 d
#: max^2``), stay finite is ``sqrt(max / (4 d))``; the smallest whose squares keep full precision is
#: ``sqrt(tiny / eps)``, about 1e-146: below it a squared distance is subnormal or 0.
_FLOAT = np.finfo(np.float64)
SMALLEST_SCALE = float(np.sqrt(_FLOAT.tiny / _FLOAT.eps))


def largest_scale(d: int) -> float:
    """The largest feature magnitude whose squared distances over ``d`` features stay finite."""
    return float(np.sqrt(_FLOAT.max / (4.0 * max(int(d), 1))))


def check_square_scale(X: np.ndarray, name: str, columns=None) -> None:
    """Refuse values whose squares overflow or underflow float64 (``X`` finite, 2-D).

    Every method of the library compares samples by squared Euclidean
    distances (exact OT, Sinkhorn, 1-NN, z-scores). A value above
    :func:`largest_scale` (about 1e151 for 10,000 features) makes them
    infinite; a matrix whose largest value is below ``SMALLEST_SCALE``
    (about 1e-146) makes them 0 or subnormal, and the result would differ
    from that of the same data in other units. Both are errors naming the
    argument and the column (``columns``: the column names, if known).
    """
    if X.size == 0:
        return
    _check_magnitudes(np.maximum(X.max(axis=0), -X.min(axis=0)), name, columns)


def _check_magnitudes(big: np.ndarray, name: str, columns=None) -> None:
    """:func:`check_square_scale` from each column's largest magnitude ``big`` (``|X|.max(axis=0)``)."""
    top = float(big.max())
    limit = largest_scale(big.shape[0])
    if top > limit:
        col = int(np.argmax(big))
        label = repr(columns[col]) if columns is not None else col
        raise ValueError(
            f"{name} has values up to {top:.3g} (column {label}), whose squared distances overflow float64 "
            f"(values must stay below {limit:.3g} for {big.shape[0]} features): rescale the features first, "
            "e.g. divide that column by a power of ten or standardise it"
        )
    if 0.0 < top < SMALLEST_SCALE:
        raise ValueError(
            f"{name}: every value is below {SMALLEST_SCALE:.3g} in magnitude (the largest is {top:.3g}), so "
            "squared distances underflow to 0 or lose their precision: rescale the features first, e.g. "
            "multiply them by a power of ten or standardise them"
        )


def check_same_features(Xs: np.ndarray, Xt: np.ndarray, names=("Xs", "Xt")) -> None:
    """Raise if two domains do not describe the same features."""
    if Xs.shape[1] != Xt.shape[1]:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same number of features, "
            f"got {Xs.shape[1]} and {Xt.shape[1]}"
        )


def as_label_vector(y, n: int, name: str = "y") -> np.ndarray:
    """Return labels as a 1-D array of length ``n``; a missing label (NaN, None) is an error."""
    arr = _refuse_sparse_or_complex(y, name)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a vector of {n} labels, got shape {np.shape(y)}")
    if arr.dtype.kind == "f":
        missing = ~np.isfinite(arr)
    elif arr.dtype.kind == "O":
        missing = np.array([v is None or (isinstance(v, float) and not np.isfinite(v)) for v in arr], dtype=bool)
    else:
        missing = np.zeros(n, dtype=bool)
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} has {int(missing.sum())} missing label(s) (NaN or None), the first at index "
                         f"{first}; every sample needs a class")
    return arr


def source_mask(sample_domain, n: int) -> np.ndarray:
    """Boolean mask of the source rows by skada's ``sample_domain`` convention (positive: source, negative:
    target); a scalar applies to all ``n`` rows."""
    sd = np.asarray(sample_domain)
    if sd.ndim == 0:
        sd = np.full(n, sd)
    if sd.ndim != 1 or sd.shape[0] != n:
        raise ValueError(f"sample_domain must have one value per sample of X ({n}), got shape {sd.shape}")
    if sd.size and not np.issubdtype(sd.dtype, np.integer) and not np.all(np.mod(sd, 1) == 0):
        raise ValueError("sample_domain must hold integers (skada: positive for source, negative for target)")
    if np.any(sd == 0):
        raise ValueError("sample_domain has 0 entries: skada's convention is positive for source, negative for target")
    return sd > 0


def split_domains(X, sample_domain, y=None):
    """Split stacked samples by skada's ``sample_domain`` convention: positive values are source
    samples, negative ones target samples (one source and one target domain here).

    Returns ``(Xs, Xt, ys, yt, source_mask)``; ``ys``/``yt`` are None without ``y``.
    """
    X = as_float_matrix(X, "X")
    source = source_mask(sample_domain, X.shape[0])
    sd = np.asarray(sample_domain)
    sources, targets = np.unique(sd[source]), np.unique(sd[~source])
    if sources.size != 1 or targets.size != 1:
        raise ValueError(f"sample_domain must name one source domain (> 0) and one target domain (< 0); got "
                         f"sources {sources.tolist()} and targets {targets.tolist()}")
    ys = yt = None
    if y is not None:
        y = np.asarray(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries for the {X.shape[0]} samples of X")
        ys, yt = y[source], y[~source]
    return X[source], X[~source], ys, yt, source


def file_sha256(path) -> str:
    """The SHA-256 of a file's bytes, in hex (the standard library's streaming ``hashlib.file_digest``)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def derive_seed(*keys: object) -> int:
    """A 32-bit seed determined by ``keys`` alone.

    The seed is the first four bytes of the SHA-256 of the keys joined by
    ``"|"``, so it does not depend on job order, process or platform.

    Examples
    --------
    >>> derive_seed("surf", "amazon-dslr", 3, "source_subset")
    2835922011
    """
    text = "|".join(str(k) for k in keys)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")
