"""The Office/Caltech experimental protocol of the paper, as pure functions.

* 12 adaptation pairs between the four domains;
* per iteration, a source subset of ``n`` samples per class (20, or 8 when
  the source is dslr), all target samples;
* feature counts ``d/32`` then every ``d/16`` up to ``d``;
* seeds derived from (feature set, pair, iteration), never from job order.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Section 5.1 (protocol of Courty et al., ECML PKDD 2014).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ._checks import check_random_state

#: Columns of the tidy results table (a classification job's TSV), in order.
COLUMNS = [
    "feature_set", "pair", "source", "target", "iteration", "ranker", "adapter",
    "grid", "order", "n_features", "accuracy", "seconds",
]

__all__ = [
    "COLUMNS",
    "PAIR_SEPARATOR",
    "derive_seed",
    "draw_source_subset",
    "feature_counts",
    "make_pairs",
    "pair_name",
    "parse_pair",
    "resolve_count",
    "resolve_feature_counts",
    "source_per_class",
]

PAIR_SEPARATOR = "-"


def pair_name(source: str, target: str) -> str:
    """File-system-safe name of an adaptation pair, e.g. ``amazon-dslr``."""
    for name in (source, target):
        if PAIR_SEPARATOR in name:
            raise ValueError(f"domain name {name!r} must not contain {PAIR_SEPARATOR!r}")
    return f"{source}{PAIR_SEPARATOR}{target}"


def parse_pair(pair: str) -> tuple[str, str]:
    """Inverse of :func:`pair_name`."""
    parts = pair.split(PAIR_SEPARATOR)
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"pair {pair!r} is not of the form 'source{PAIR_SEPARATOR}target'")
    return parts[0], parts[1]


def make_pairs(domains: Sequence[str]) -> list[str]:
    """All ordered pairs of distinct domains, source-major as in the paper."""
    return [pair_name(s, t) for s in domains for t in domains if s != t]


def feature_counts(d: int, scheme: str = "paper") -> list[int]:
    """Numbers of features at which the accuracy curves are evaluated.

    Parameters
    ----------
    d : int
        Total number of features.
    scheme : {"paper"}
        ``"paper"``: ``d // 32``, then ``d // 16, 2 * (d // 16), ...`` up to
        ``d`` (17 points when 16 divides ``d``), as in the released code.
    """
    if scheme != "paper":
        raise ValueError(f"unknown feature-count scheme {scheme!r}")
    if d < 32:
        raise ValueError(f"the paper's feature-count scheme needs d >= 32, got d={d}")
    step = d // 16
    counts = [d // 32, *range(step, d + 1, step)]
    if counts[-1] != d:
        counts.append(d)
    return counts


def resolve_count(spec, d: int) -> int:
    """A number of features from an integer or a fraction of ``d``.

    Examples
    --------
    >>> [resolve_count(s, 800) for s in ("d", "d/8", 50)]
    [800, 100, 50]
    """
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        n = int(spec)
    elif isinstance(spec, str) and spec == "d":
        n = d
    elif isinstance(spec, str) and spec.startswith("d/") and spec[2:].isdigit() and int(spec[2:]) > 0:
        n = d // int(spec[2:])
    else:
        raise ValueError(f"number of features {spec!r} is neither an integer nor 'd' or 'd/k'")
    if not 1 <= n <= d:
        raise ValueError(f"number of features {spec!r} gives {n}, outside [1, {d}]")
    return n


def resolve_feature_counts(spec, d: int) -> list[int]:
    """Feature counts of a grid: ``"paper"`` or a list of :func:`resolve_count` specs."""
    if spec == "paper":
        return feature_counts(d, "paper")
    return [resolve_count(s, d) for s in spec]


def source_per_class(source: str, default: int, overrides: Mapping[str, int]) -> int:
    """Source samples drawn per class (20, and 8 when the source is dslr)."""
    return int(overrides.get(source, default))


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


def draw_source_subset(y, per_class: int, random_state=None, classes: Iterable | None = None):
    """Indices of ``per_class`` samples drawn at random from each class.

    Classes with fewer samples contribute all of them, as in the released code.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels of the full source domain.
    per_class : int
    random_state : int, RandomState instance or None
    classes : iterable, optional
        Classes to draw from (default: the sorted unique labels). A class
        with no sample is an error.

    Returns
    -------
    ndarray of int
        Indices grouped by class, in class order.
    """
    y = np.asarray(y).ravel()
    rng = check_random_state(random_state)
    classes = np.unique(y) if classes is None else list(classes)
    out = []
    for c in classes:
        members = np.flatnonzero(y == c)
        if members.size == 0:
            raise ValueError(f"class {c!r} has no sample in the source domain")
        take = min(per_class, members.size)
        out.append(members[rng.permutation(members.size)[:take]])
    return np.concatenate(out)
