"""Shared fixtures: generated data and the location of the real data mirror."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


def mirror_dir() -> Path:
    """The Office-Caltech mirror: $OTFS_DATA_MIRROR, else ../shared beside the repo."""
    env = os.environ.get("OTFS_DATA_MIRROR")
    candidates = [Path(p) for p in env.split(os.pathsep)] if env else []
    candidates.append(REPO.parent / "shared" / "data" / "office-caltech")
    for c in candidates:
        if (c / "surf" / "dslr.mat").is_file():
            return c.resolve()
    raise RuntimeError(
        "the Office-Caltech mirror was not found: set OTFS_DATA_MIRROR to the folder "
        "holding surf/*.mat (CI uses ../shared/data/office-caltech)"
    )


@pytest.fixture(scope="session")
def mirror() -> Path:
    return mirror_dir()


def shifted_domains(n_s=120, n_t=150, d=40, k=4, n_classes=5, seed=0):
    """Two domains sharing class structure, with ``k`` features shifted in the target.

    Every feature carries class signal (a class mean) plus noise. In the
    target domain the last ``k`` features carry the opposite signal: the
    feature that was high for a class is low for it, as when an acquisition
    change inverts a contrast. Per-domain z-scoring cannot undo this.
    """
    rng = np.random.RandomState(seed)
    means = 2.0 * rng.randn(n_classes, d)
    ys = rng.randint(n_classes, size=n_s)
    yt = rng.randint(n_classes, size=n_t)
    Xs = means[ys] + 0.5 * rng.randn(n_s, d)
    Xt = means[yt] + 0.5 * rng.randn(n_t, d)
    shifted = np.arange(d - k, d)
    Xt[:, shifted] = -means[yt][:, shifted] + 0.5 * rng.randn(n_t, k)
    return Xs, ys, Xt, yt, shifted
