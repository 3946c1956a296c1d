"""Stage ``wda``: the runs behind the WDA paper's Table 1 and Figure 2.

``evaluate`` runs every split of one (data set, method); ``curves`` the
error-against-k curves of Figure 2; ``ablation`` one variant of the study of
what separates our Table 1 from the paper's (``docs/wda.md``). :mod:`otfs_workflow.stages.wda_report` aggregates
them, and tabulates the Office-Caltech adapters beside WDA.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pandas as pd

from otfs_workflow.io import write_tsv

log = logging.getLogger(__name__)


def _dataset_settings(cfg: Mapping, dataset: str) -> dict:
    out = {k: cfg[k] for k in ("train_fraction", "max_train", "max_test", "noise_features")}
    out.update(cfg.get("overrides", {}).get(dataset, {}))
    return out


def _splits(dataset: str, paths: Sequence[str], cfg: Mapping, n_splits: int, settings: Mapping | None = None):
    """The data set's first ``n_splits`` splits; its files are read once. ``settings`` override the data ones."""
    from otfs.datasets import UCI_DATASETS, load_dataset
    from otfs.reducers._base import make_split

    X, y = load_dataset(dataset, paths)
    s = {**_dataset_settings(cfg, dataset), **(settings or {})}
    noise = int(s["noise_features"]) if UCI_DATASETS[dataset].noise else 0
    for split in range(n_splits):
        yield split, make_split(X, y, dataset, split, noise_features=noise, train_fraction=s["train_fraction"],
                                max_train=s["max_train"], max_test=s["max_test"])


def _evaluate(dataset: str, paths: Sequence[str], cfg: Mapping, n_splits: int, method: str, params: Mapping,
              output, settings: Mapping | None = None, label: Mapping | None = None) -> pd.DataFrame:
    """Table 1's protocol on the first ``n_splits`` splits: one row per split, after ``label``'s columns."""
    from otfs.reducers._base import evaluate_split

    rows = []
    for split, data in _splits(dataset, paths, cfg, n_splits, settings):
        rec = evaluate_split(data, method, p_grid=cfg["p_grid"], k_grid=cfg["k_grid"],
                             cv_folds=int(cfg["cv_folds"]), params=params)
        rows.append({"dataset": dataset, "split": split, **(label or {}), **rec})
        log.info("%s %s split %d: p=%d k=%d candidate %d error %.2f%% objective %.4g after %s iterations (%.1f s)",
                 dataset, ", ".join(map(str, (label or {"method": method}).values())), split, rec["p"], rec["k"],
                 rec["candidate"], rec["error"], rec["objective"], rec["n_iter"], rec["seconds"])
    df = pd.DataFrame(rows)
    write_tsv(df, output)
    return df


def evaluate(dataset: str, paths: Sequence[str], method: str, cfg: Mapping, output) -> pd.DataFrame:
    """One row per split: the cross-validated ``p`` and ``k`` and the test error of ``method``."""
    return _evaluate(dataset, paths, cfg, int(cfg["splits"]), method, cfg["methods"].get(method) or {}, output)


def ablation_variant(cfg: Mapping, variant: str) -> tuple[str, dict, dict]:
    """``(method, params, data settings)`` of one variant of ``cfg["ablation"]["variants"]``.

    A variant's ``params`` are complete: nothing is inherited from
    ``cfg["methods"]``, so each row of the ablation states exactly what ran.
    """
    variants = cfg["ablation"]["variants"]
    if variant not in variants:
        raise ValueError(f"wda.ablation.variants: unknown variant {variant!r}; configured: {sorted(variants)}")
    spec = variants[variant]
    return spec.get("method", "WDA"), dict(spec.get("params") or {}), dict(spec.get("data") or {})


def ablation(dataset: str, paths: Sequence[str], variant: str, cfg: Mapping, output) -> pd.DataFrame:
    """Table 1's protocol for one variant (method, parameters, training size) on the ablation's splits.

    The splits are Table 1's first ones (the same seeds), unless the variant
    changes the training size; ``p`` and ``k`` are cross-validated as there.
    """
    method, params, settings = ablation_variant(cfg, variant)
    return _evaluate(dataset, paths, cfg, int(cfg["ablation"]["splits"]), method, params, output, settings,
                     label={"variant": variant})


def curves(dataset: str, paths: Sequence[str], method: str, cfg: Mapping, output) -> pd.DataFrame:
    """Test error against k for each ``p`` of Figure 2, over the figure's splits."""
    from otfs.reducers._base import knn_error_curve

    fig = cfg["figure2"]
    rows = []
    for split, data in _splits(dataset, paths, cfg, int(fig["splits"])):
        for p in fig["p"]:
            rec = knn_error_curve(data, method, int(p), fig["k"], params=cfg["methods"].get(method) or {},
                                  cv_folds=int(cfg["cv_folds"]))
            rows += [{"dataset": dataset, "split": split, "method": method, "p": int(p), "p_used": rec["p_used"],
                      "candidate": rec["candidate"], "k": k, "error": e}
                     for k, e in zip(rec["k"], rec["error"], strict=True)]
    df = pd.DataFrame(rows)
    write_tsv(df, output)
    return df
