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

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from otfs._checks import check_random_state, derive_seed

#: Columns of the tidy results table (a classification job's TSV), in order.
COLUMNS = [
    "feature_set", "pair", "source", "target", "iteration", "ranker", "adapter",
    "grid", "order", "n_features", "accuracy", "seconds",
]

#: The optional metric columns of a grid with ``metrics`` (otfs.classification.accuracy_curve), in this order.
METRIC_COLUMNS = ["balanced_accuracy", "second_accuracy", "second_balanced_accuracy", "second_auc"]

__all__ = [
    "COLUMNS",
    "METRIC_COLUMNS",
    "DegenerateDomainError",
    "MIN_DOMAIN_SAMPLES",
    "PAIR_SEPARATOR",
    "check_pair",
    "class_counts",
    "derive_seed",
    "draw_source_subset",
    "draw_stratified_subsample",
    "feature_counts",
    "iteration_source_subset",
    "left_out",
    "make_pairs",
    "pair_name",
    "parse_pair",
    "ranked_iterations",
    "read_iterations",
    "resolve_count",
    "resolve_feature_counts",
    "source_per_class",
    "usable_counts",
]

PAIR_SEPARATOR = "-"


def ranked_iterations(iterations) -> tuple[list[int], int | None]:
    """The iterations a ranking job ranks, and the protocol's count when that is more.

    ``iterations`` is the rule's parameter: the protocol's iterations (a
    list), or ``{"ranked": [...], "protocol": n}`` when every grid that reads
    the feature set's rankings reads only the first few (the data families'
    grids read 5 of 19): the ranking then records ``protocol_iterations`` so
    that a reader of more fails (:func:`read_iterations`).
    """
    if isinstance(iterations, Mapping):
        ranked = [int(i) for i in iterations["ranked"]]
        protocol = int(iterations["protocol"])
        if len(ranked) > protocol:
            raise ValueError(f"iterations: {len(ranked)} ranked of the protocol's {protocol}")
        return ranked, (protocol if len(ranked) < protocol else None)
    return [int(i) for i in iterations], None


def read_iterations(rank: Mapping, path, iterations: int | None = None) -> list:
    """The iteration records of a ranking that a consumer reads: the first ``iterations`` (every one of the
    protocol's when None), or an error naming the file when the ranking holds fewer."""
    held = rank["iterations"]
    protocol = rank.get("protocol_iterations", len(held))
    want = protocol if iterations is None else int(iterations)
    if want > len(held):
        raise ValueError(
            f"{path}: ranked on the first {len(held)} of the protocol's {protocol} iterations (the configuration's "
            f"grids that read it read no more), but {want} are read here: raise the iterations of the grid of the "
            "section that lists this feature set and ranker (leaderboard, model_selection, shift), or name it in a "
            "section whose grid reads them all (docs/feature-shift.md, the leaderboard's cost)")
    return held[:want]


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
        Below 32 features ``d // 32`` is 0 and is left out, and the step is
        1: every count from 1 to ``d``.
    """
    if scheme != "paper":
        raise ValueError(f"unknown feature-count scheme {scheme!r}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"the number of features must be an integer >= 1, got d={d!r}")
    if d < 32:
        return list(range(1, d + 1))
    step = d // 16
    counts = [d // 32, *range(step, d + 1, step)]
    if counts[-1] != d:
        counts.append(d)
    return counts


def _fraction(spec):
    """``k`` of a spec ``"d/k"``, else None."""
    if isinstance(spec, str) and spec.startswith("d/") and spec[2:].isdigit() and int(spec[2:]) > 0:
        return int(spec[2:])
    return None


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
    elif _fraction(spec) is not None:
        n = d // _fraction(spec)
    else:
        raise ValueError(f"number of features {spec!r} is neither an integer nor 'd' or 'd/k'")
    if not 1 <= n <= d:
        raise ValueError(f"number of features {spec!r} gives {n}, outside [1, {d}]")
    return n


def left_out(spec, d: int) -> bool:
    """Whether ``spec`` is a fraction ``"d/k"`` that gives 0 of ``d`` features: too few features for it,
    so the grids and tables leave it out (:func:`usable_counts`) rather than fail."""
    k = _fraction(spec)
    return k is not None and d // k == 0


def usable_counts(specs, d: int) -> list[int]:
    """The counts of ``specs`` for ``d`` features, the fractions that give 0 left out (:func:`left_out`);
    any other count outside ``[1, d]`` is an error."""
    return [resolve_count(s, d) for s in specs if not left_out(s, d)]


def resolve_feature_counts(spec, d: int) -> list[int]:
    """Feature counts of a grid: ``"paper"`` or a list of :func:`resolve_count` specs, the fractions that give
    0 of ``d`` left out (:func:`usable_counts`)."""
    if spec == "paper":
        return feature_counts(d, "paper")
    counts = usable_counts(spec, d)
    if not counts:
        raise ValueError(f"every number of features {list(spec)} gives 0 of the {d} features")
    return counts


def source_per_class(source: str, default, overrides: Mapping[str, object]):
    """Source samples drawn per class (20, and 8 when the source is dslr); ``"all"``: every one."""
    value = overrides.get(source, default)
    return "all" if value == "all" else int(value)


def draw_stratified_subsample(y, max_samples: int, seed: int) -> np.ndarray:
    """Indices (sorted) of at most ``max_samples`` samples, each class in proportion to its share of ``y``.

    A domain of ``max_samples`` samples or fewer is kept whole. Otherwise
    each class gets ``max_samples`` times its share, rounded down, and the
    samples left over go to the classes with the largest remainders (ties:
    the lower label); every class keeps at least one sample. The samples of
    each class are drawn without replacement with ``seed``.
    """
    y = np.asarray(y).ravel()
    n = y.size
    if not isinstance(max_samples, (int, np.integer)) or isinstance(max_samples, bool) or max_samples < 1:
        raise ValueError(f"max_samples: a positive integer, got {max_samples!r}")
    if n <= max_samples:
        return np.arange(n)
    classes, counts = np.unique(y, return_counts=True)
    if classes.size > max_samples:
        raise ValueError(f"max_samples: {max_samples} is fewer than the {classes.size} classes to keep")
    quota = counts * max_samples / n
    take = np.maximum(np.floor(quota).astype(np.int64), 1)
    while take.sum() > max_samples:  # the at-least-one rule overshot: take from the largest classes
        take[np.argmax(take)] -= 1
    order = np.lexsort((classes, -(quota - np.floor(quota))))
    for i in order[: max_samples - int(take.sum())]:
        take[i] += 1
    rng = np.random.RandomState(seed)
    chosen = [rng.choice(np.flatnonzero(y == c), size=int(k), replace=False) for c, k in zip(classes, take, strict=True)]
    return np.sort(np.concatenate(chosen))


def draw_source_subset(y, per_class, random_state=None, classes: Iterable | None = None, class_names=None):
    """Indices of ``per_class`` samples drawn at random from each class.

    Classes with fewer samples contribute all of them, as in the released code.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels of the full source domain.
    per_class : int or "all"
        ``"all"``: every sample of each class (in a random order).
    random_state : int, RandomState instance or None
    classes : iterable, optional
        Classes to draw from (default: the sorted unique labels). A class
        with no sample is an error.
    class_names : sequence of str, optional
        The names of the labels ``1..K`` (the user's labels), for the messages.

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
            name = class_names[int(c) - 1] if class_names is not None else c
            raise ValueError(f"class {name!r} has no sample in the source domain")
        take = members.size if per_class == "all" else min(per_class, members.size)
        out.append(members[rng.permutation(members.size)[:take]])
    return np.concatenate(out)


def iteration_source_subset(feature_set: str, pair: str, iteration: int, y, per_class, classes: Iterable | None = None,
                            class_names=None) -> tuple[np.ndarray, int]:
    """The source samples of one iteration of the protocol (:func:`draw_source_subset`) and their seed.

    The seed derives from (feature set, pair, iteration) alone, so the ranking job and any other job of the
    iteration (the leaderboard's point of all features) draw the same samples.
    """
    seed = derive_seed(feature_set, pair, iteration, "source_subset")
    return draw_source_subset(y, per_class, random_state=seed, classes=classes, class_names=class_names), seed


#: The fewest samples a domain may have: after the per-domain z-score, two samples leave every feature at
#: +1 or -1, so no feature can be told from another.
MIN_DOMAIN_SAMPLES = 3


class DegenerateDomainError(ValueError):
    """A domain (or a pair of domains) has too few samples or classes for the protocol."""


def check_pair(pair: str, source_counts: Mapping[str, int] | None, target_counts: Mapping[str, int] | None, *,
               selection: bool = True, target_rows: int | None = None) -> list[str]:
    """Check that a pair's two domains can run the protocol; return warnings, raise the errors.

    ``source_counts`` and ``target_counts`` count each domain's samples per
    class (the user's label values). Errors (:class:`DegenerateDomainError`),
    each naming the pair, the domain and the minimum: a domain with fewer
    than :data:`MIN_DOMAIN_SAMPLES` samples; a source with a single class
    (there is nothing to classify); source and target with no class in
    common (every accuracy would be 0); with ``selection`` (the OT rankers'
    Algorithm 1), a target with fewer samples than the source has classes.
    Warnings: target classes absent from the source (no classifier trained
    on it can predict them).

    An unlabelled domain has ``None`` counts: an unlabelled source is an
    error; an unlabelled target (its ``target_rows`` samples) gets a note
    that only the label-free recommendation runs on the pair.
    """
    source, target = parse_pair(pair)
    if source_counts is None:
        raise DegenerateDomainError(f"pair {pair}: the source domain {source!r} has no labels (its file has no label "
                                    "column, or an empty one); a source needs its labels (protocol.pairs: list the pairs whose "
                                    f"target it is, such as [{target}-{source}])")
    unlabelled = target_counts is None
    if unlabelled and target_rows is None:
        raise ValueError(f"pair {pair}: an unlabelled target needs its number of samples (target_rows)")
    src = {c: int(n) for c, n in source_counts.items() if n}
    tgt = {} if unlabelled else {c: int(n) for c, n in target_counts.items() if n}
    problems = []
    for role, domain, counts in (("source", source, src), ("target", target, tgt)):
        n = target_rows if role == "target" and unlabelled else sum(counts.values())
        if n < MIN_DOMAIN_SAMPLES:
            problems.append(f"the {role} domain {domain!r} has {n} sample(s); every domain needs at least "
                            f"{MIN_DOMAIN_SAMPLES} (after its z-score, two samples leave every feature at +1 or -1)")
    if len(src) == 1:
        problems.append(f"the source domain {source!r} has a single class ({next(iter(src))!r}); it needs at least 2 "
                        "(with one, there is nothing to classify)")
    common = sorted(set(src) & set(tgt))
    if src and tgt and not common:
        problems.append(f"the source {source!r} (labels {sorted(src)}) and the target {target!r} (labels "
                        f"{sorted(tgt)}) have no label in common: every accuracy would be 0 (are the labels "
                        "written the same way in both files?)")
    n_target = target_rows if unlabelled else sum(tgt.values())
    if selection and len(src) > 1 and n_target < len(src):
        problems.append(f"the target domain {target!r} has {n_target} sample(s), fewer than the {len(src)} classes "
                        f"of the source {source!r}: Algorithm 1 (the OT sample selection) needs at least {len(src)}")
    if problems:
        raise DegenerateDomainError(f"pair {pair}: " + "; ".join(problems))
    if unlabelled:
        return [f"pair {pair}: the target {target!r} has no labels: only the label-free recommendation (snakemake "
                "recommend) runs on this pair; every other target measures accuracies on the target's labels"]
    absent = sorted(set(tgt) - set(src), key=str)
    if absent:
        return [f"pair {pair}: the target {target!r} has labels that the source {source!r} lacks ({absent}, "
                f"{sum(tgt[c] for c in absent)} of {n_target} target samples): no classifier trained on the source "
                "can predict them, so the accuracy is at most "
                f"{100 * (1 - sum(tgt[c] for c in absent) / n_target):.1f} %"]
    return []


def class_counts(y, class_names) -> dict[str, int]:
    """Samples per class name of labels ``1..K`` (classes without samples left out)."""
    values, counts = np.unique(np.asarray(y), return_counts=True)
    return {class_names[int(v) - 1]: int(n) for v, n in zip(values, counts, strict=True)}
