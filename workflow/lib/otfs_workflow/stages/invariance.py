"""Stage ``invariance``: Persello & Bruzzone's selector on Office-Caltech, beside the OT ranking.

The method needs labelled samples in both domains: each iteration reuses the
source samples of the ranking stage (20 per class, 8 from dslr) and draws
``target_per_class`` labelled target samples per class (default 3), seeded by
(feature set, pair, iteration). The remaining target samples are the target
test set; the source samples not drawn are the source test set. Every subset
is scored by 1-NN trained on the drawn source samples.
:mod:`otfs_workflow.stages.invariance_report` draws the table and the front.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np

from otfs_workflow.data.cache import read_domains
from otfs_workflow.io import read_json, write_json
from otfs_workflow.protocol import derive_seed, read_iterations

log = logging.getLogger(__name__)

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


def run(caches: Mapping[str, str], ranking_path, cfg: Mapping, output) -> dict:
    """Fronts and chosen subsets of every iteration of one pair; writes a JSON record."""
    from otfs.rankers._relevant_invariant import InvarianceCriteria, RelevantInvariantSelector, knee_point

    rank = read_json(ranking_path)
    cache = read_domains({d: caches[d] for d in (rank["source"], rank["target"])})
    src, tgt = cache.domain(rank["source"]), cache.domain(rank["target"])
    m = int(cfg["n_features"])
    records, fronts = [], []
    for r_it in read_iterations(rank, ranking_path, int(cfg["iterations"])):
        it = r_it["iteration"]
        train = np.asarray(r_it["source_subset"])
        src_test = np.setdiff1d(np.arange(len(src.y)), train)
        seed = derive_seed(rank["feature_set"], rank["pair"], it, "labelled_target")
        lab = labelled_target(tgt.y, int(cfg["target_per_class"]), seed)
        tgt_test = np.setdiff1d(np.arange(len(tgt.y)), lab)
        Xs, ys = src.X[train], src.y[train]
        selector = RelevantInvariantSelector(
            n_features_to_select=m, reg=cfg["reg"], output_kernel=cfg["output_kernel"],
            pop_size=int(cfg["pop_size"]), n_gen=int(cfg["n_gen"]), rule="target_accuracy",
            random_state=derive_seed(rank["feature_set"], rank["pair"], it, "nsga2") % (2**31),
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
                 rank["pair"], it, len(F), front_acc[picks["invariant"]][1], front_acc[picks["relevance"]][1], t_acc)
    out = {"feature_set": rank["feature_set"], "pair": rank["pair"], "source": rank["source"], "target": rank["target"],
           "n_features": m, "target_per_class": int(cfg["target_per_class"]), "records": records, "fronts": fronts}
    write_json(output, out)
    return out
