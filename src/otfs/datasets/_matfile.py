"""Reading the released Office-Caltech ``.mat`` feature files.

Each file holds ``fts`` (samples x features; uint8 SURF counts or float32
CNN activations) and ``labels`` (classes 1..K, stored as a row or a column).
Every problem is reported with the file's path.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = ["MatFileError", "load_mat_features"]


class MatFileError(ValueError):
    """A ``.mat`` feature file is unreadable or inconsistent."""


def load_mat_features(
    path: str | os.PathLike,
    *,
    features_key: str = "fts",
    labels_key: str = "labels",
    n_classes: int | None = None,
    class_counts: list[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Load features and labels from a MATLAB file, validating both.

    Parameters
    ----------
    path : path
    features_key, labels_key : str
        Variable names in the file.
    n_classes : int, optional
        Labels must be exactly ``1..n_classes``, each present.
    class_counts : list of int, optional
        Expected number of samples of each class, in label order.

    Returns
    -------
    X : ndarray of float64, shape (n, d)
    y : ndarray of int64, shape (n,)
    """
    import scipy.io  # here, not at the top: planning reads a reader's files without loading them (0.1-0.3 s)

    path = Path(path)
    if not path.is_file():
        raise MatFileError(f"{path}: file not found")
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # scipy raises many types on corrupt input
        raise MatFileError(
            f"{path}: cannot read MATLAB data ({type(exc).__name__}: {exc}); "
            "the file is truncated or corrupt"
        ) from exc
    for key in (features_key, labels_key):
        if key not in mat:
            found = sorted(k for k in mat if not k.startswith("__"))
            raise MatFileError(f"{path}: variable {key!r} missing (found {found})")
    X = np.asarray(mat[features_key])
    y = np.asarray(mat[labels_key])
    if X.ndim != 2:
        raise MatFileError(f"{path}: {features_key!r} must be 2-D, got shape {X.shape}")
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise MatFileError(
            f"{path}: {labels_key!r} has shape {mat[labels_key].shape}, "
            f"expected {X.shape[0]} labels"
        )
    X = X.astype(np.float64)
    if not np.isfinite(X).all():
        bad = np.argwhere(~np.isfinite(X))
        raise MatFileError(
            f"{path}: {features_key!r} holds {len(bad)} NaN or infinite values "
            f"(first at sample {bad[0][0]}, feature {bad[0][1]})"
        )
    if not np.issubdtype(y.dtype, np.number) or not np.all(np.mod(y, 1) == 0):
        raise MatFileError(f"{path}: {labels_key!r} must hold integer class labels")
    y = y.astype(np.int64)
    if n_classes is not None:
        present = set(np.unique(y).tolist())
        expected = set(range(1, n_classes + 1))
        if missing := sorted(expected - present):
            raise MatFileError(f"{path}: class label(s) {missing} have no sample")
        if unknown := sorted(present - expected):
            raise MatFileError(f"{path}: unexpected class label(s) {unknown}")
    if class_counts is not None:
        counts = np.bincount(y, minlength=len(class_counts) + 1)[1:].tolist()
        if counts != list(class_counts):
            raise MatFileError(
                f"{path}: per-class sample counts {counts} differ from the manifest's "
                f"{list(class_counts)}"
            )
    return X, y
