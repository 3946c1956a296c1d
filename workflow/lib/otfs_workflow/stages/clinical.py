"""Stage ``clinical``: the paper's section 5.2 protocol on a voxel table.

``prepare`` writes the voxel table (generated, or a user's file checked and
converted); ``rank`` runs one repetition's sampling, Algorithm 1 and
Algorithm 2; ``classify`` its AUC curves for one adapter; ``aggregate``
averages the repetitions. :mod:`otfs_workflow.stages.clinical_report` draws the
paper's Table 4 and Figures 3 and 4.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs.adapters import get_adapter
from otfs.datasets._clinical import (
    make_clinical_data,
    read_voxel_table,
    sample_source_voxels,
    sample_target_voxels,
    shifted_detection,
    svm_auc,
    write_voxel_table,
)
from otfs.preprocessing import apply_steps
from otfs.rankers import feature_coupling_diagonal, feature_orders
from otfs.sample_selection import select_samples
from otfs_workflow.io import atomic_path, read_json, read_tsv, write_json, write_tsv
from otfs_workflow.protocol import derive_seed, resolve_count
from otfs_workflow.provenance import provenance_record

log = logging.getLogger(__name__)

#: Name of the experiment in seeds: seeds derive from (this, pair, repetition, purpose).
EXPERIMENT = "clinical"


def pair(cfg: Mapping) -> str:
    return f"{cfg['source']}->{cfg['target']}"


def prepare(cfg: Mapping, output, user_file=None) -> None:
    """Write the voxel table: generated with ``cfg['synthetic']``, or read from ``user_file``."""
    if user_file:
        table = read_voxel_table(user_file, domains=[cfg["source"], cfg["target"]])
        table.meta.setdefault("source", cfg["source"])
        table.meta.setdefault("target", cfg["target"])
    else:
        params = dict(cfg["synthetic"])
        seed = params.pop("seed")
        table = make_clinical_data(source=cfg["source"], target=cfg["target"], random_state=seed, **params)
    log.info("voxel table: %d voxels x %d features; %s", *table.X.shape,
             table.counts().to_dict(orient="records"))
    with atomic_path(output) as tmp:
        write_voxel_table(tmp, table)


def _domains(voxels, cfg: Mapping):
    """Preprocessed source and target of the voxel table, with labels and exams."""
    table = read_voxel_table(voxels, domains=[cfg["source"], cfg["target"]])
    out = {}
    for role in ("source", "target"):
        idx = table.in_domain(cfg[role])
        out[role] = (apply_steps(table.X[idx], cfg["preprocessing"]), table.label[idx], table.exam[idx])
    return table, out


def rank(voxels, cfg: Mapping, repetition: int, ranking_cfg: Mapping, tie_break: str, output) -> dict:
    """One repetition: sample S and T, Algorithm 1 (T_u), Algorithm 2 (feature scores)."""
    table, dom = _domains(voxels, cfg)
    Xs, ys, es = dom["source"]
    Xt, _, _ = dom["target"]
    p = pair(cfg)
    seeds = {k: derive_seed(EXPERIMENT, p, repetition, k)
             for k in ("source_voxels", "target_voxels", "selection", "random_order")}
    S = sample_source_voxels(ys, es, cfg["source_voxels"], random_state=seeds["source_voxels"])
    T = sample_target_voxels(Xt.shape[0], cfg["target_voxels"], random_state=seeds["target_voxels"])
    start = time.perf_counter()
    matching = select_samples(Xs[S], Xt[T], "ot", tie_break=tie_break, emd_max_iter=cfg["emd_max_iter"],
                              random_state=seeds["selection"])
    t_select = time.perf_counter() - start
    scores, n_iter = feature_coupling_diagonal(
        Xs[S][matching.source_index], Xt[T][matching.target_index],
        reg=ranking_cfg["reg"], norm=ranking_cfg["norm"], method=ranking_cfg["method"],
        max_iter=ranking_cfg["max_iter"], tol=ranking_cfg["tol"], return_n_iter=True,
    )
    out = {
        "pair": p,
        "repetition": int(repetition),
        "seeds": seeds,
        "source_sample": S,
        "target_sample": T,
        "matched_source": matching.source_index,
        "matched_target": matching.target_index,
        "flipped": matching.flipped,
        "seconds_selection": t_select,
        "sinkhorn_iterations": n_iter,
        "scores": scores,
        "orders": feature_orders(scores, random_state=seeds["random_order"]),
        "feature_names": table.feature_names,
        "planted_shifted_features": table.meta.get("shifted_features", []),
    }
    lowest = np.argsort(scores, kind="stable")[:len(out["planted_shifted_features"])]
    log.info("repetition %d: Algorithm 1 in %.1f s; lowest-scored features %s (planted %s)", repetition,
             t_select, sorted(lowest.tolist()), out["planted_shifted_features"])
    write_json(output, out)
    return out


def counts_for(cfg: Mapping, d: int) -> list[int]:
    counts = sorted({resolve_count(c, d) for c in cfg["feature_counts"]} | {d})
    return counts


def classify(voxels, ranking_path, cfg: Mapping, adapter: str, output,
             adapter_params: Mapping | None = None) -> pd.DataFrame:
    """AUC of a linear SVM on all target voxels, per order and number of features.

    The adapter maps the source sample S onto T_u (the target voxels that
    Algorithm 1 matched); the SVM is trained on the adapted S and tested on
    every target voxel.
    """
    _, dom = _domains(voxels, cfg)
    Xs, ys, _ = dom["source"]
    Xt, yt, _ = dom["target"]
    run = read_json(ranking_path)
    S = np.asarray(run["source_sample"])
    Tu = np.asarray(run["target_sample"])[np.asarray(run["matched_target"])]
    d = Xs.shape[1]
    rows = []
    done = {}
    for order in cfg["orders"]:
        feats = np.asarray(run["orders"][order])
        for n in counts_for(cfg, d):
            subset = feats[:n]
            key = frozenset(subset.tolist()) if n == d else (order, n)
            if key in done:  # all features: the same for every order
                auc, seconds = done[key]
            else:
                start = time.perf_counter()
                Xs_a, _ = get_adapter(adapter, **(adapter_params or {})).adapt(
                    Xs[S][:, subset], ys[S], Xt[Tu][:, subset])
                seconds = time.perf_counter() - start
                auc = svm_auc(Xs_a, ys[S], Xt[:, subset], yt, C=cfg["svm_C"])
                done[key] = (auc, seconds)
            rows.append({"repetition": run["repetition"], "adapter": adapter, "order": order, "n_features": n,
                         "auc": auc, "seconds": seconds})
    df = pd.DataFrame(rows)
    write_tsv(df, output)
    log.info("repetition %d, %s: AUC all features %.3f, best Descending %.3f", run["repetition"], adapter,
             df.loc[df["n_features"] == d, "auc"].iloc[0], df.loc[df["order"] == "Descending", "auc"].max())
    return df


def aggregate(classifications: Sequence[str], rankings: Sequence[str], cfg: Mapping, outputs: Mapping,
              voxels=None, params: Mapping | None = None) -> pd.DataFrame:
    """Mean and std of the AUC over repetitions; the planted features' detection rate."""
    long = pd.concat([read_tsv(p) for p in classifications], ignore_index=True)
    long = long.sort_values(["adapter", "order", "n_features", "repetition"], kind="stable")
    g = long.groupby(["adapter", "order", "n_features"], sort=True)
    summary = g["auc"].agg(auc="mean", std=lambda s: float(np.std(s)), repetitions="size").reset_index()
    summary["seconds_total"] = g["seconds"].sum().to_numpy()
    runs = [read_json(p) for p in rankings]
    planted = runs[0]["planted_shifted_features"] if runs else []
    detection = shifted_detection([r["scores"] for r in runs], planted) if planted else {"planted": []}
    write_tsv(long, outputs["long"])
    write_tsv(summary, outputs["summary"])
    record = provenance_record(inputs=[voxels] if voxels else [], params=params, config={"clinical": dict(cfg)})
    record.update({"detection": detection, "repetitions": sorted({r["repetition"] for r in runs})})
    write_json(outputs["provenance"], record)
    return summary
