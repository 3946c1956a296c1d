"""Stage ``semfs``: zero-shot feature selection on Office-Caltech (Wang et al.'s Figures 4 and 5).

One job per (feature set, pair, split). A split draws ``n_unseen`` of the 10
classes as unseen, seeded by (feature set, domain, split); every selector of
``semfs.methods`` (:data:`otfs.zero_shot.ZERO_SHOT_SELECTORS`; others join through
:func:`otfs.zero_shot.register_zero_shot_selector`) sees the seen-class samples
only:

- ``SemFS`` and ``SemFS/c`` (alpha = 0) with the class attributes of
  ``data/attributes/office-caltech10.tsv``;
- ``Random``; ``LASSO`` on the seen labels; ``Spectral`` (MCFS-like,
  unsupervised);
- ``OT ranking``: Algorithm 2 between the seen-class samples of another
  domain (the source) and those of this one.

The selected features of each count are then judged by k-means on the unseen
classes' samples (``restarts`` initialisations, each seeded), with ACC
(Hungarian matching) and NMI averaged over the restarts.
:mod:`otfs_workflow.stages.semfs_report` draws the table and the figure.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.data.cache import read_domains
from otfs_workflow.io import write_tsv
from otfs_workflow.protocol import derive_seed

log = logging.getLogger(__name__)

def read_attributes(path, class_names: Sequence[str]) -> np.ndarray:
    """The attribute matrix (one row per class of ``class_names``, in that order) from a TSV."""
    table = pd.read_csv(path, sep="\t", index_col=0)
    missing = [c for c in class_names if c not in table.index]
    if missing:
        raise ValueError(f"{path}: no attributes for the classes {missing} (has {list(table.index)})")
    A = table.loc[list(class_names)]
    bad = A.columns[~np.isfinite(A.to_numpy(dtype=float)).all(axis=0)].tolist()
    if bad:
        raise ValueError(f"{path}: attributes {bad} hold missing or non-numeric values")
    return A.to_numpy(dtype=np.float64)


def seen_unseen(n_classes: int, n_unseen: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels (1-based) of the seen and unseen classes of one split."""
    if not 2 <= n_unseen <= n_classes - 2:
        raise ValueError(f"semfs.n_unseen={n_unseen}: need 2 to {n_classes - 2} unseen classes of {n_classes}")
    perm = np.random.default_rng(seed).permutation(n_classes) + 1
    return np.sort(perm[n_unseen:]), np.sort(perm[:n_unseen])


def score_kmeans(X, y, n_clusters: int, restarts: int, seed: int) -> tuple[float, float, float, float]:
    """Mean and standard deviation of ACC and NMI of k-means over ``restarts`` seeded initialisations."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    from otfs.zero_shot._semfs import clustering_accuracy

    acc, nmi = [], []
    for r in range(restarts):
        labels = KMeans(n_clusters=n_clusters, n_init=1, random_state=derive_seed(seed, r) % (2**31)).fit_predict(X)
        acc.append(clustering_accuracy(y, labels))
        nmi.append(normalized_mutual_info_score(y, labels))
    return float(np.mean(acc)), float(np.std(acc)), float(np.mean(nmi)), float(np.std(nmi))


#: The keys of config ``semfs`` passed to the zero-shot selectors as keyword arguments.
SELECTOR_PARAMS = ("alpha", "gamma", "max_iter", "s_steps", "lasso_alpha", "spectral", "ot_ranking")


def _orders(X_seen, y_seen, A_seen, X_other_seen, cfg: Mapping, seed: int) -> dict[str, tuple[np.ndarray, float]]:
    """Feature order (most important first) and fit time of every method of ``semfs.methods``."""
    from otfs.zero_shot import ZERO_SHOT_SELECTORS

    ZERO_SHOT_SELECTORS.check(cfg["methods"], "semfs.methods")
    out = {}
    for name in cfg["methods"]:
        start = time.perf_counter()
        order = ZERO_SHOT_SELECTORS[name](X_seen, y_seen, A_seen, X_other_seen, seed=derive_seed(seed, name),
                                          **{k: cfg[k] for k in SELECTOR_PARAMS})
        out[name] = (np.asarray(order), time.perf_counter() - start)
    return out


def run(caches: Mapping[str, str], attributes_path, feature_set: str, domain: str, other: str, split: int,
        cfg: Mapping, output) -> pd.DataFrame:
    """ACC and NMI of k-means on the unseen classes for every method and count of one split; writes a TSV."""
    cache = read_domains({d: caches[d] for d in (domain, other)})
    data, src = cache.domain(domain), cache.domain(other)
    A = read_attributes(attributes_path, cache.class_names)
    seed = derive_seed("semfs", feature_set, domain, split)
    seen, unseen = seen_unseen(len(cache.class_names), int(cfg["n_unseen"]), seed)
    s_mask, u_mask = np.isin(data.y, seen), np.isin(data.y, unseen)
    X_seen, y_seen = data.X[s_mask], data.y[s_mask]
    X_unseen, y_unseen = data.X[u_mask], data.y[u_mask]
    A_seen = A[np.unique(y_seen) - 1]
    orders = _orders(X_seen, y_seen, A_seen, src.X[np.isin(src.y, seen)], cfg, seed)
    names = np.asarray(cache.class_names)
    rows = []
    for method, (order, seconds) in orders.items():
        for k in cfg["counts"]:
            cols = np.sort(order[: int(k)])
            acc, acc_sd, nmi, nmi_sd = score_kmeans(X_unseen[:, cols], y_unseen, unseen.size, int(cfg["restarts"]),
                                                    derive_seed(seed, "kmeans", k))
            rows.append({"feature_set": feature_set, "domain": domain, "ot_source": other, "split": split,
                         "method": method,
                         "n_features": int(k), "acc": 100 * acc, "acc_std": 100 * acc_sd, "nmi": 100 * nmi,
                         "nmi_std": 100 * nmi_sd, "seconds": seconds, "seen": ",".join(names[seen - 1]),
                         "unseen": ",".join(names[unseen - 1]), "n_seen": len(y_seen), "n_unseen": len(y_unseen)})
        part = [r for r in rows if r["method"] == method]
        log.info("%s split %d %s: ACC %.1f%% NMI %.1f%% (mean over counts), fit %.2f s", domain, split, method,
                 np.mean([r["acc"] for r in part]), np.mean([r["nmi"] for r in part]), seconds)
    df = pd.DataFrame(rows)
    write_tsv(df, output)
    return df
