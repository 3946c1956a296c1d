"""Stage ``clinical``: the paper's section 5.2 protocol on a voxel table.

``prepare`` writes the voxel table (generated, or a user's file checked and
converted); ``rank`` runs one repetition's sampling, Algorithm 1 and
Algorithm 2; ``classify`` its AUC curves for one adapter; ``aggregate``
averages the repetitions; ``table4``, ``figure3`` and ``figure4`` draw the
paper's targets.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..adaptation import get_adapter
from ..clinical import (
    CLASS_NAMES,
    make_clinical_data,
    read_voxel_table,
    sample_source_voxels,
    sample_target_voxels,
    shifted_detection,
    summarise_counts,
    svm_auc,
    write_voxel_table,
)
from ..io import read_json, read_tsv, write_csv, write_json, write_text, write_tsv
from ..plotting import plot_accuracy_curves, plot_feature_distributions, plot_feature_similarity, save_outputs
from ..preprocessing import apply_steps
from ..protocol import derive_seed, resolve_count
from ..provenance import provenance_record
from ..ranking import feature_coupling_diagonal, feature_orders
from ..selection import select_samples
from ..tables import render_latex, render_markdown

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
    write_voxel_table(output, table)


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


def classify(voxels, ranking_path, cfg: Mapping, adapter: str, output) -> pd.DataFrame:
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
                Xs_a, _ = get_adapter(adapter).fit_transform(Xs[S][:, subset], ys[S], Xt[Tu][:, subset])
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


def table4(voxels, cfg: Mapping, outputs: Mapping, caption: str) -> pd.DataFrame:
    """Voxels per class and domain (Table 4), beside the paper's counts."""
    table = read_voxel_table(voxels)
    counts = summarise_counts(table)
    write_csv(counts, outputs["csv"])
    wide = pd.DataFrame(index=[*CLASS_NAMES, "Total"])
    for dom in dict.fromkeys(counts["domain"]):
        part = counts[counts["domain"] == dom].set_index("class")
        here = [int(part.loc[c, "voxels"]) for c in CLASS_NAMES]
        paper = [part.loc[c, "paper_voxels"] for c in CLASS_NAMES]
        wide[f"#voxels {dom}"] = [f"{v:,}" for v in [*here, sum(here)]]
        if not any(pd.isna(paper)):
            wide[f"paper {dom}"] = [f"{int(v):,}" for v in [*paper, sum(paper)]]
    write_text(outputs["md"], f"{caption}\n\n" + render_markdown(wide, "Class"))
    write_text(outputs["tex"], render_latex(wide, "Class", caption))
    return counts


def _figure_feature_picks(table, cfg: Mapping) -> tuple[int, int]:
    picks = cfg.get("figure3_features")
    if picks:
        names = list(table.feature_names)
        return tuple(names.index(p) if isinstance(p, str) else int(p) for p in picks)
    planted = table.meta.get("shifted_features") or []
    informative = set(table.meta.get("informative_features") or [])
    shifted = planted[0] if planted else 0
    others = [j for j in range(table.X.shape[1]) if j not in planted and j in informative] or \
        [j for j in range(table.X.shape[1]) if j != shifted]
    return shifted, others[0]


def figure3(voxels, cfg: Mapping, outputs: Mapping) -> pd.DataFrame:
    """Distributions of one shifted and one unshifted feature in both domains (Figure 3)."""
    table = read_voxel_table(voxels)
    picks = _figure_feature_picks(table, cfg)
    planted = set(table.meta.get("shifted_features") or [])
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    rows = []
    for ax, j in zip(axes, picks, strict=True):
        values = {cfg[r]: table.X[table.domain == cfg[r], j] for r in ("source", "target")}
        kind = "planted shifted" if j in planted else "shared"
        plot_feature_distributions(values, ax=ax, title=f"{table.feature_names[j]} ({kind})")
        for dom, v in values.items():
            q = np.quantile(v, [0.05, 0.25, 0.5, 0.75, 0.95])
            rows.append({"feature": table.feature_names[j], "kind": kind, "domain": dom, "mean": v.mean(),
                         "std": v.std(), "skewness": float(pd.Series(v).skew()),
                         **{f"q{int(100 * p):02d}": x for p, x in zip((.05, .25, .5, .75, .95), q, strict=True)}})
    title = "Figure 3: distributions of a shifted and an unshifted feature in the two domains"
    fig.suptitle(title)
    fig.tight_layout()
    save_outputs(fig, outputs, title)
    df = pd.DataFrame(rows)
    write_csv(df, outputs["csv"], float_format="%.5g")
    return df


def figure4(aggregates: Mapping[str, str], rankings: Sequence[str], outputs: Mapping) -> pd.DataFrame:
    """AUC curves per adapter (top) and the log-scaled coupling diagonal (bottom): Figure 4."""
    adapters = list(aggregates)
    fig = plt.figure(figsize=(6.0 * len(adapters), 8.0))
    grid = fig.add_gridspec(2, len(adapters), height_ratios=[1.6, 1.0])
    frames = []
    for k, (adapter, prefix) in enumerate(aggregates.items()):
        summary = read_tsv(f"{prefix}/summary.tsv")
        ax = fig.add_subplot(grid[0, k])
        plot_accuracy_curves(summary, ax=ax, title=adapter, value="auc", ylabel="Mean AUC over repetitions",
                             fmt=".3f")
        ax.axhline(0.5, color="red", linewidth=0.8, linestyle=":")
        frames.append(summary.assign(panel=adapter))
    runs = [read_json(p) for p in rankings]
    scores = np.array([r["scores"] for r in runs])
    planted = runs[0]["planted_shifted_features"]
    ax = fig.add_subplot(grid[1, :])
    plot_feature_similarity(scores, planted, ax=ax, names=runs[0]["feature_names"])
    detection = shifted_detection(scores, planted) if planted else None
    sub = f"{len(runs)} repetitions"
    if detection:
        sub += (f"; planted features lowest-scored in {detection['hits']} of {detection['repetitions']} "
                "repetitions")
    ax.set_title(f"Similarity of each feature across the domains ({sub})")
    title = "Figure 4: AUC against the number of selected features, and feature similarity"
    fig.suptitle(title)
    fig.tight_layout()
    save_outputs(fig, outputs, title)
    plotted = pd.concat(frames, ignore_index=True)
    sims = pd.DataFrame({"panel": "similarity", "feature": runs[0]["feature_names"],
                         "log10_score_mean": np.log10(scores).mean(axis=0),
                         "planted": [j in set(planted) for j in range(scores.shape[1])]})
    out = pd.concat([plotted, sims], ignore_index=True)
    write_csv(out, outputs["csv"], float_format="%.5g")
    return out

