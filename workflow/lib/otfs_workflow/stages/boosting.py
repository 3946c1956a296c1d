"""Stage ``boosting``: Becker et al.'s boosting on binary Office-Caltech problems.

One job per (feature set, pair, binary task, repetition). A task is a set of
positive classes against a set of negative classes; both domains are balanced
by drawing the larger side down to the smaller. The target samples are split
in half, stratified: a pool of labelled samples and a test set. For every
number of labelled target samples ``n`` of ``counts`` (nested draws from the
pool, ``n / 2`` per class) the methods are

- the multi-domain classifiers named in ``boosting.methods`` (default ``DA
  boosting``, :class:`otfs.domain_classifiers.DomainAdaptationBoosting`; others join
  through :func:`otfs.domain_classifiers.register_domain_classifier`): source samples
  and the ``n`` target samples as two tasks;
- ``Pooling``: the same samples as one task;
- ``TD only``: the ``n`` target samples alone;

and, independent of ``n``, ``SD only`` (the source samples alone) and
``Full TD`` (the whole pool). Every one of them is the same booster (one task
for the baselines: ordinary boosting, checked against scikit-learn's trees in
the tests) with the same tree settings. The unsupervised comparison uses no
target label: the top features of the pair's OT ranking (Algorithm 2), an
adapter, then 1-NN trained on the source samples. Seeds derive from (feature
set, pair, task, repetition). :mod:`otfs_workflow.stages.boosting_report` draws the
table and the figure.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.data.cache import read_domains
from otfs_workflow.io import read_json, write_tsv
from otfs_workflow.protocol import derive_seed, read_iterations, resolve_count

log = logging.getLogger(__name__)

#: Baselines fitted at every number of labelled target samples (beside the multi-domain methods of
#: ``boosting.methods``), then the two that do not depend on it.
BASELINES = ("Pooling", "TD only")
FIXED = ("SD only", "Full TD")


def task_samples(y, class_names: Sequence[str], task: Mapping, rng: np.random.Generator):
    """Indices and +1 / -1 labels of a balanced binary task in one domain.

    ``task`` names its ``positive`` classes and its ``negative`` ones (default:
    every other class). The larger side is drawn down to the smaller.
    """
    names = list(class_names)
    unknown = [c for c in [*task["positive"], *task.get("negative", [])] if c not in names]
    if unknown:
        raise ValueError(f"boosting task {task['name']!r}: unknown classes {unknown}; the classes are {names}")
    pos_labels = [names.index(c) + 1 for c in task["positive"]]
    neg_names = task.get("negative") or [c for c in names if c not in task["positive"]]
    neg_labels = [names.index(c) + 1 for c in neg_names]
    if set(pos_labels) & set(neg_labels):
        raise ValueError(f"boosting task {task['name']!r}: a class is both positive and negative")
    pos = np.flatnonzero(np.isin(y, pos_labels))
    neg = np.flatnonzero(np.isin(y, neg_labels))
    k = min(pos.size, neg.size)
    if k < 2:
        raise ValueError(f"boosting task {task['name']!r}: {pos.size} positive and {neg.size} negative samples")
    pos, neg = np.sort(rng.choice(pos, k, replace=False)), np.sort(rng.choice(neg, k, replace=False))
    idx = np.concatenate([pos, neg])
    return idx, np.r_[np.ones(k), -np.ones(k)]


def nested_labelled(labels, counts: Sequence[int], rng: np.random.Generator) -> dict[int, np.ndarray]:
    """For each count ``n``, positions of ``n`` labelled samples (``n / 2`` per class), nested in ``n``."""
    orders = [rng.permutation(np.flatnonzero(labels == c)) for c in (1.0, -1.0)]
    return {n: np.sort(np.concatenate([o[: n // 2] for o in orders])) for n in counts}


def _booster(model: Mapping):
    from otfs.domain_classifiers import DomainAdaptationBoosting

    return DomainAdaptationBoosting(**model)


def _domain_classifier(name: str, model: Mapping):
    from otfs.domain_classifiers import DOMAIN_CLASSIFIERS

    DOMAIN_CLASSIFIERS.check([name], "boosting.methods")
    return DOMAIN_CLASSIFIERS[name](**model)


def _error(clf, X, y, domain=None) -> float:
    pred = clf.predict(X) if domain is None else clf.predict(X, np.full(len(y), domain))
    return 100.0 * float(np.mean(pred != y))


def run(caches: Mapping[str, str], ranking_path, feature_set: str, pair: str, task: Mapping, repetition: int,
        cfg: Mapping, output) -> pd.DataFrame:
    """Test errors of every method and count for one (pair, task, repetition); writes a TSV."""
    from sklearn.model_selection import train_test_split

    from otfs.adapters import get_adapter
    from otfs.classification import one_nn_accuracy

    rank = read_json(ranking_path)
    source, target = rank["source"], rank["target"]
    cache = read_domains({d: caches[d] for d in (source, target)})
    src, tgt = cache.domain(source), cache.domain(target)
    rng = np.random.default_rng(derive_seed("boosting", feature_set, pair, task["name"], repetition))
    s_idx, ys = task_samples(src.y, cache.class_names, task, rng)
    cap = cfg.get("max_source")
    if cap and s_idx.size > int(cap):  # balanced draw down to max_source
        keep = np.sort(np.concatenate([rng.choice(np.flatnonzero(ys == c), int(cap) // 2, replace=False)
                                       for c in (1.0, -1.0)]))
        s_idx, ys = s_idx[keep], ys[keep]
    t_idx, yt_all = task_samples(tgt.y, cache.class_names, task, rng)
    pool, test = train_test_split(np.arange(t_idx.size), train_size=0.5, stratify=yt_all,
                                  random_state=int(rng.integers(2**31)))
    Xs, Xpool, ypool = src.X[s_idx], tgt.X[t_idx[pool]], yt_all[pool]
    Xtest, ytest = tgt.X[t_idx[test]], yt_all[test]
    counts = [int(n) for n in cfg["counts"] if int(n) <= pool.size]
    skipped = [int(n) for n in cfg["counts"] if int(n) > pool.size]
    if skipped:
        log.info("%s %s: counts %s exceed the %d pooled target samples; not run", pair, task["name"], skipped,
                 pool.size)
    labelled = nested_labelled(ypool, counts, rng)
    model = dict(cfg["model"])
    rows = []

    def record(method, n, err, seconds):
        rows.append({"feature_set": feature_set, "pair": pair, "task": task["name"], "repetition": repetition,
                     "method": method, "n_labelled": n, "error": err, "n_source": len(ys), "n_pool": pool.size,
                     "n_test": len(ytest), "seconds": seconds})

    for method, X, y in (("SD only", Xs, ys), ("Full TD", Xpool, ypool)):
        start = time.perf_counter()
        record(method, -1, _error(_booster(model).fit(X, y), Xtest, ytest), time.perf_counter() - start)
    for n in counts:
        Xl, yl = Xpool[labelled[n]], ypool[labelled[n]]
        X, y = np.vstack([Xs, Xl]), np.r_[ys, yl]
        domain = np.r_[np.zeros(len(ys), dtype=int), np.ones(len(yl), dtype=int)]
        for method in (*cfg["methods"], *BASELINES):
            start = time.perf_counter()
            if method not in BASELINES:
                err = _error(_domain_classifier(method, model).fit(X, y, sample_domain=domain), Xtest, ytest,
                             domain=1)
            elif method == "Pooling":
                err = _error(_booster(model).fit(X, y), Xtest, ytest)
            else:
                err = _error(_booster(model).fit(Xl, yl), Xtest, ytest)
            record(method, n, err, time.perf_counter() - start)
        k = len(cfg["methods"]) + len(BASELINES)
        log.info("%s %s rep %d, %d labelled: %s", pair, task["name"], repetition, n,
                 ", ".join(f"{r['method']} {r['error']:.1f}%" for r in rows[-k:]))
    # the unsupervised OT ranking plus adaptation: no target label at all
    its = read_iterations(rank, ranking_path)
    order = np.asarray(its[repetition % len(its)]["orders"]["Descending"])
    m = resolve_count(cfg["ot_features"], cache.n_features)
    cols = np.sort(order[:m])
    for adapter in cfg["ot_adapters"]:
        start = time.perf_counter()
        Zs, Zt = get_adapter(adapter).adapt(Xs[:, cols], ys, Xtest[:, cols])
        record(f"OT ranking + {adapter}", -1, 100.0 - one_nn_accuracy(Zs, ys, Zt, ytest), time.perf_counter() - start)
    df = pd.DataFrame(rows)
    write_tsv(df, output)
    return df
