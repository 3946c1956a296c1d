"""Stage ``wda``: the runs behind the WDA paper's Table 1 and Figure 2.

``evaluate`` runs every split of one (data set, method); ``curves`` the
error-against-k curves of Figure 2. :mod:`otfs.stages.wda_report` aggregates
them, and tabulates the Office-Caltech adapters beside WDA.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pandas as pd

from ..io import write_tsv

log = logging.getLogger(__name__)


def _dataset_settings(cfg: Mapping, dataset: str) -> dict:
    out = {k: cfg[k] for k in ("train_fraction", "max_train", "max_test", "noise_features")}
    out.update(cfg.get("overrides", {}).get(dataset, {}))
    return out


def _splits(dataset: str, paths: Sequence[str], cfg: Mapping, n_splits: int):
    """The data set's first ``n_splits`` splits; its files are read once."""
    from ..data.uci import UCI_DATASETS, load_dataset
    from ..dimred import make_split

    X, y = load_dataset(dataset, paths)
    s = _dataset_settings(cfg, dataset)
    noise = int(s["noise_features"]) if UCI_DATASETS[dataset].noise else 0
    for split in range(n_splits):
        yield split, make_split(X, y, dataset, split, noise_features=noise, train_fraction=s["train_fraction"],
                                max_train=s["max_train"], max_test=s["max_test"])


def evaluate(dataset: str, paths: Sequence[str], method: str, cfg: Mapping, output) -> pd.DataFrame:
    """One row per split: the cross-validated ``p`` and ``k`` and the test error of ``method``."""
    from ..dimred import evaluate_split

    rows = []
    for split, data in _splits(dataset, paths, cfg, int(cfg["splits"])):
        rec = evaluate_split(data, method, p_grid=cfg["p_grid"], k_grid=cfg["k_grid"],
                             cv_folds=int(cfg["cv_folds"]), params=cfg["methods"].get(method) or {})
        rows.append({"dataset": dataset, "split": split, **rec})
        log.info("%s %s split %d: p=%d k=%d error %.2f%% (%.1f s)", dataset, method, split, rec["p"],
                 rec["k"], rec["error"], rec["seconds"])
    df = pd.DataFrame(rows)
    write_tsv(df, output)
    return df


def curves(dataset: str, paths: Sequence[str], method: str, cfg: Mapping, output) -> pd.DataFrame:
    """Test error against k for each ``p`` of Figure 2, over the figure's splits."""
    from ..dimred import knn_error_curve

    fig = cfg["figure2"]
    rows = []
    for split, data in _splits(dataset, paths, cfg, int(fig["splits"])):
        for p in fig["p"]:
            rec = knn_error_curve(data, method, int(p), fig["k"], params=cfg["methods"].get(method) or {})
            rows += [{"dataset": dataset, "split": split, "method": method, "p": int(p), "p_used": rec["p_used"],
                      "k": k, "error": e} for k, e in zip(rec["k"], rec["error"], strict=True)]
    df = pd.DataFrame(rows)
    write_tsv(df, output)
    return df
