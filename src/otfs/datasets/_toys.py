"""Toy data of the paper's supplementary figures.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Supplementary material, Figures 5 and 6.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import make_moons
from sklearn.utils import check_random_state

__all__ = ["diamond_rings", "gaussian_classes", "moons_halves"]


def gaussian_classes(n_per_class: int = 10, noise: float = 0.4, random_state=None):
    """Three classes on a vertical line, shifted horizontally in the target (Figure 5).

    Class ``c`` (1, 2, 3) is centred at ``(0, c)`` in the source and at
    ``(2, c)`` in the target, with isotropic Gaussian noise.

    Returns
    -------
    Xs, ys, Xt, yt : arrays
    """
    rng = check_random_state(random_state)
    y = np.repeat([1, 2, 3], n_per_class)
    centres_s = np.column_stack([np.zeros(3), [1.0, 2.0, 3.0]])
    centres_t = np.column_stack([np.full(3, 2.0), [1.0, 2.0, 3.0]])
    Xs = centres_s[y - 1] + noise * rng.randn(y.size, 2)
    Xt = centres_t[y - 1] + noise * rng.randn(y.size, 2)
    return Xs, y.copy(), Xt, y.copy()


def _diamond(outer: int, inner: int, step: int) -> np.ndarray:
    pts = []
    for y in range(-outer, outer + 1, step):
        half = outer - abs(y)
        for x in range(-half, half + 1, step):
            if abs(x) >= inner or abs(y) >= inner:
                pts.append((x, y))
    return np.array(pts, dtype=float)


def diamond_rings():
    """First toy of Figure 6: a small dense source diamond inside a large sparse target one.

    Both are diamond-shaped grids with a square hole; the source is smaller
    and denser, so 1-NN matching piles onto the target's inner border.

    Returns
    -------
    S, T : arrays of shape (n, 2)
    """
    return _diamond(14, 8, 2), _diamond(32, 16, 4)


def moons_halves(n_samples: int = 150, n_source: int = 35, noise: float = 0.05, random_state=None):
    """Second toy of Figure 6: a sample of one moon as source, the other moon as target."""
    rng = check_random_state(random_state)
    X, y = make_moons(n_samples, shuffle=False, noise=noise, random_state=rng)
    first = X[y == 0]
    S = first[rng.choice(first.shape[0], size=n_source, replace=False)]
    return S, X[y == 1]
