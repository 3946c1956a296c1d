"""Stage ``invariance``: Persello & Bruzzone's selector on Office-Caltech, beside the OT ranking.

The method needs labelled samples in both domains: each iteration reuses the
source samples of the selection stage (20 per class, 8 from dslr) and draws
``target_per_class`` labelled target samples per class (default 3), seeded by
(feature set, pair, iteration). The remaining target samples are the target
test set; the source samples not drawn are the source test set. Every subset
is scored by 1-NN trained on the drawn source samples.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..data.cache import read_domains
from ..io import read_json, write_csv, write_json, write_text
from ..protocol import derive_seed
from ..tables import pair_label, render_latex, render_markdown

log = logging.getLogger(__name__)

SELECTORS = ("invariant", "relevance", "knee", "OT ranking")


def _acc(Xtr, ytr, Xte, yte, cols):
    from sklearn.neighbors import KNeighborsClassifier

    clf = KNeighborsClassifier(1).fit(Xtr[:, cols], ytr)
    return 100.0 * float(np.mean(clf.predict(Xte[:, cols]) == yte))


def labelled_target(y, per_class: int, seed: int) -> np.ndarray:
    """Indices of ``per_class`` labelled target samples per class (all of a smaller class)."""
    rng = np.random.default_rng(seed)
    out = []
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        out.append(np.sort(rng.choice(members, min(per_class, members.size), replace=False)))
    return np.concatenate(out)


def run(caches: Mapping[str, str], selection_path, ranking_path, cfg: Mapping, output) -> dict:
    """Fronts and chosen subsets of every iteration of one pair; writes a JSON record."""
    from ..invariance import InvarianceCriteria, RelevantInvariantSelector, knee_point

    sel, rank = read_json(selection_path), read_json(ranking_path)
    cache = read_domains({d: caches[d] for d in (sel["source"], sel["target"])})
    src, tgt = cache.domain(sel["source"]), cache.domain(sel["target"])
    m = int(cfg["n_features"])
    records, fronts = [], []
    for s_it, r_it in list(zip(sel["iterations"], rank["iterations"], strict=True))[: int(cfg["iterations"])]:
        it = s_it["iteration"]
        train = np.asarray(s_it["source_subset"])
        src_test = np.setdiff1d(np.arange(len(src.y)), train)
        seed = derive_seed(sel["feature_set"], sel["pair"], it, "labelled_target")
        lab = labelled_target(tgt.y, int(cfg["target_per_class"]), seed)
        tgt_test = np.setdiff1d(np.arange(len(tgt.y)), lab)
        Xs, ys = src.X[train], src.y[train]
        selector = RelevantInvariantSelector(
            n_features_to_select=m, reg=cfg["reg"], output_kernel=cfg["output_kernel"],
            pop_size=int(cfg["pop_size"]), n_gen=int(cfg["n_gen"]), rule="target_accuracy",
            random_state=derive_seed(sel["feature_set"], sel["pair"], it, "nsga2") % (2**31),
        ).fit(Xs, ys, tgt.X[lab], tgt.y[lab])
        F, masks = selector.front_, selector.front_masks_

        def score(cols):
            return (_acc(Xs, ys, src.X[src_test], src.y[src_test], cols),
                    _acc(Xs, ys, tgt.X[tgt_test], tgt.y[tgt_test], cols))

        front_acc = [score(np.flatnonzero(mk)) for mk in masks]
        picks = {"invariant": selector.chosen_, "relevance": int(np.argmin(F[:, 0])), "knee": knee_point(F)}
        for name, row in picks.items():
            records.append({"iteration": it, "selector": name, "relevance": -F[row, 0], "invariance": F[row, 1],
                            "source_accuracy": front_acc[row][0], "target_accuracy": front_acc[row][1],
                            "features": np.flatnonzero(masks[row]).tolist()})
        ot_cols = np.asarray(r_it["orders"]["Descending"][:m])
        crit = InvarianceCriteria(Xs, ys, tgt.X[lab], tgt.y[lab], reg=cfg["reg"], output=cfg["output_kernel"])
        s_acc, t_acc = score(ot_cols)
        records.append({"iteration": it, "selector": "OT ranking", "relevance": crit.relevance(ot_cols),
                        "invariance": crit.invariance(ot_cols), "source_accuracy": s_acc,
                        "target_accuracy": t_acc, "features": ot_cols.tolist()})
        fronts.append({"iteration": it, "objectives": F.tolist(), "accuracy": front_acc,
                       "chosen": selector.chosen_, "labelled_target_accuracy": selector.target_accuracies_.tolist()})
        log.info("%s iteration %d: front of %d subsets; invariant %.1f%% target, relevance-only %.1f%%, OT %.1f%%",
                 sel["pair"], it, len(F), front_acc[picks["invariant"]][1], front_acc[picks["relevance"]][1], t_acc)
    out = {"feature_set": sel["feature_set"], "pair": sel["pair"], "source": sel["source"], "target": sel["target"],
           "n_features": m, "target_per_class": int(cfg["target_per_class"]), "records": records, "fronts": fronts}
    write_json(output, out)
    return out


def _caption(cfg: Mapping, feature_set: str) -> str:
    return (f"{feature_set}, m = {int(cfg['n_features'])} features; the relevant-and-invariant selector uses "
            f"{int(cfg['target_per_class'])} labelled target samples per class (the OT ranking uses none); "
            "1-NN trained on the source samples, accuracies (%) on the held-out source and target samples")


def table(inputs: Sequence[str], cfg: Mapping, outputs: Mapping, provenance: Mapping) -> pd.DataFrame:
    """Source and target accuracy of the chosen subset against relevance-only, knee and OT ranking."""
    rows, feature_sets = [], []
    for path in inputs:
        rec = read_json(path)
        feature_sets.append(rec["feature_set"])
        for r in rec["records"]:
            rows.append({"pair": rec["pair"], **{k: v for k, v in r.items() if k != "features"}})
    df = pd.DataFrame(rows)
    mean = df.groupby(["pair", "selector"])[["source_accuracy", "target_accuracy", "relevance", "invariance"]].mean()
    write_csv(mean.reset_index(), outputs["csv"])
    wide = pd.DataFrame(index=[*dict.fromkeys(df["pair"]), "Mean"])
    for name in SELECTORS:
        part = mean.xs(name, level="selector")
        for col, short in (("source_accuracy", "source"), ("target_accuracy", "target")):
            values = [*part.loc[wide.index[:-1], col], part[col].mean()]
            wide[f"{name} {short}"] = [f"{v:.1f}" for v in values]
    wide.index = [pair_label(p) if p != "Mean" else p for p in wide.index]
    feature_set = ", ".join(dict.fromkeys(feature_sets))
    caption = ("Relevant and invariant feature selection (Persello & Bruzzone): " + _caption(cfg, feature_set)
               + f"; mean over {df['iteration'].nunique()} iterations. invariant: the front's subset with the best "
               "accuracy on the labelled target samples (the paper's rule); relevance: the front's largest HSIC; "
               "knee: the front's knee; OT ranking: the top m features of Algorithm 2.")
    write_text(outputs["md"], f"{caption}\n\n" + render_markdown(wide, "Pair"))
    write_text(outputs["tex"], render_latex(wide, "Pair", caption))
    write_json(outputs["provenance"], provenance)
    return mean


def figure3(path, cfg: Mapping, outputs: Mapping) -> pd.DataFrame:
    """The estimated Pareto front coloured by source (a) and target (b) test accuracy, as the paper's Figure 3."""
    import matplotlib.pyplot as plt

    from ..plotting import save_outputs  # sets the Agg backend

    rec = read_json(path)
    front = rec["fronts"][0]
    F = np.asarray(front["objectives"])
    acc = np.asarray(front["accuracy"])
    df = pd.DataFrame({"minus_relevance": F[:, 0], "invariance": F[:, 1], "source_accuracy": acc[:, 0],
                       "target_accuracy": acc[:, 1], "chosen": np.arange(len(F)) == front["chosen"]})
    write_csv(df, outputs["csv"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, col, title in zip(axes, ("source_accuracy", "target_accuracy"),
                              ("a) source test accuracy", "b) target test accuracy"), strict=True):
        sc = ax.scatter(df["minus_relevance"], df["invariance"], c=df[col], cmap="viridis", s=30)
        ch = df[df["chosen"]]
        ax.scatter(ch["minus_relevance"], ch["invariance"], facecolors="none", edgecolors="red", s=120,
                   label="chosen (best labelled-target accuracy)")
        fig.colorbar(sc, ax=ax, label="1-NN accuracy (%)")
        ax.set_xlabel("-R (HSIC relevance)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("Θ (conditional shift)")
    axes[0].legend(loc="upper right", fontsize=8)
    fig.suptitle(f"Pareto front, {pair_label(rec['pair'])}, m = {rec['n_features']} "
                 f"({rec['target_per_class']} labelled target samples per class)", fontsize=10)
    fig.tight_layout()
    save_outputs(fig, outputs, "Persello & Bruzzone Figure 3")
    return df
