"""Stage ``ranking``: score and order the features of every iteration (Algorithm 2)."""

from __future__ import annotations

from collections.abc import Mapping

from ..data.cache import read_domains
from ..io import read_json, write_json
from ..protocol import derive_seed
from ..ranking import feature_coupling_diagonal, feature_orders

_HEADER = ("feature_set", "pair", "source", "target", "strategy")


def run(caches: Mapping[str, str], selection_path, ranking_cfg: Mapping, output) -> dict:
    """Rank features on the sample pairs of the selection stage; write JSON.

    Besides the coupling diagonal, each iteration holds the three feature
    orders used downstream; the Random order's seed derives from (feature
    set, pair, iteration).
    """
    sel = read_json(selection_path)
    cache = read_domains({d: caches[d] for d in (sel["source"], sel["target"])})
    Xs_full = cache.domain(sel["source"]).X
    Xt = cache.domain(sel["target"]).X
    records = []
    for it in sel["iterations"]:
        Xs = Xs_full[it["source_subset"]]
        scores, n_iter = feature_coupling_diagonal(
            Xs[it["matched_source"]],
            Xt[it["matched_target"]],
            reg=ranking_cfg["reg"],
            norm=ranking_cfg["norm"],
            method=ranking_cfg["method"],
            max_iter=ranking_cfg["max_iter"],
            tol=ranking_cfg["tol"],
            return_n_iter=True,
        )
        order_seed = derive_seed(sel["feature_set"], sel["pair"], it["iteration"], "random_order")
        records.append({
            "iteration": it["iteration"],
            "sinkhorn_iterations": n_iter,
            "seed_random_order": order_seed,
            "scores": scores,
            "orders": feature_orders(scores, random_state=order_seed),
        })
    out = {key: sel[key] for key in _HEADER}
    out.update({"params": dict(ranking_cfg), "iterations": records})
    write_json(output, out)
    return out
