"""Feature preprocessing as the paper's released protocol applies it.

The released experiment script normalises each SURF bag-of-words histogram
to sum to one, then z-scores every feature within each domain, for every
feature set. Both steps are delegated to scikit-learn
(:func:`sklearn.preprocessing.normalize` and :func:`sklearn.preprocessing.scale`),
which leave all-zero rows and constant columns finite instead of producing
NaN.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from otfs._checks import as_float_matrix

__all__ = ["STEPS", "l2_normalize", "row_sum_normalize", "zscore", "apply_steps"]


def row_sum_normalize(X) -> np.ndarray:
    """Divide each row by its sum (histograms become frequencies).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Non-negative histogram counts.

    Returns
    -------
    ndarray of shape (n_samples, n_features)
        A new array whose rows sum to one; an all-zero row stays zero.
    """
    X = as_float_matrix(X, "X")
    if (X < 0).any():
        raise ValueError("row_sum_normalize expects non-negative histogram counts")
    # scikit-learn's normalize(X, norm="l1", axis=1), step for step (its import costs seconds per job): a
    # copy in the input's memory layout (which decides the order of the row sums), rows whose sum is below
    # 10 eps left as they are; tests/test_preprocessing_and_evaluation.py compares the bits
    X = np.array(X, dtype=np.float64, copy=True, order="K")
    norms = np.sum(np.abs(X), axis=1)
    norms[norms < 10 * np.finfo(norms.dtype).eps] = 1.0
    X /= norms[:, None]
    return X


def l2_normalize(X) -> np.ndarray:
    """Divide each row by its Euclidean norm (text: cosine geometry); an all-zero row stays zero.

    scikit-learn's ``normalize(X, norm="l2")``: rows whose norm is below
    ``10 * eps`` are left as they are. Bag-of-words counts keep their
    heavy tails under a per-feature z-score (a word in 1 document of 1,000
    becomes a value near 31), which makes a few documents far from all
    others; row normalisation is the usual preprocessing of text instead.
    """
    X = np.array(as_float_matrix(X, "X"), dtype=np.float64, copy=True, order="K")
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    norms[norms < 10 * np.finfo(norms.dtype).eps] = 1.0
    X /= norms[:, None]
    return X


def zscore(X, axis: int = 0) -> np.ndarray:
    """Centre and scale to unit variance along ``axis`` (population std).

    A constant column (``axis=0``) becomes all zeros, never NaN. This is
    ``sklearn.preprocessing.scale(X, axis=axis)``, the paper's z-score, step
    for step: the same NumPy reductions on the same memory layout, the same
    second centring where the first leaves a mean that is not close to 0
    (with scikit-learn's warnings), and near-constant columns (a std below
    ``10 * eps``) left unscaled. It is written out because importing
    scikit-learn costs seconds per pipeline job, more than a ranking job
    computes; ``tests/test_preprocessing_and_evaluation.py`` checks it
    against scikit-learn's, bit for bit.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    axis : {0, 1}
        0 standardises each column (feature), 1 each row.

    Returns
    -------
    ndarray
        A new standardised array.
    """
    if axis not in (0, 1):
        raise ValueError(f"axis must be 0 or 1, got {axis!r}")
    X = np.array(as_float_matrix(X, "X"), dtype=np.float64, copy=True, order="K")
    mean_ = np.nanmean(X, axis)
    scale_ = np.nanstd(X, axis)
    Xr = np.rollaxis(X, axis)  # a view: the rows of Xr are the slices standardised together
    Xr -= mean_
    mean_1 = np.nanmean(Xr, axis=0)
    if not np.allclose(mean_1, 0):
        warnings.warn("Numerical issues were encountered when centering the data and might not be solved. "
                      "Dataset may contain too large values. You may need to prescale your features.",
                      stacklevel=2)
        Xr -= mean_1
    scale_[scale_ < 10 * np.finfo(scale_.dtype).eps] = 1.0
    Xr /= scale_
    mean_2 = np.nanmean(Xr, axis=0)
    if not np.allclose(mean_2, 0):
        warnings.warn("Numerical issues were encountered when scaling the data and might not be solved. The "
                      "standard deviation of the data is probably very close to 0. ", stacklevel=2)
        Xr -= mean_2
    return X


#: Named preprocessing steps, in the vocabulary used by ``config.yaml``.
STEPS = {
    "l2_normalize": l2_normalize,
    "row_sum_normalize": row_sum_normalize,
    "zscore": zscore,
}


def apply_steps(X, steps: Sequence[str]) -> np.ndarray:
    """Apply named preprocessing steps in order; the input is never modified.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    steps : sequence of str
        Keys of :data:`STEPS`.
    """
    out = as_float_matrix(X, "X").copy()
    for step in steps:
        try:
            fn = STEPS[step]
        except KeyError:
            raise ValueError(
                f"unknown preprocessing step {step!r}; known steps: {sorted(STEPS)}"
            ) from None
        out = fn(out)
    return out
