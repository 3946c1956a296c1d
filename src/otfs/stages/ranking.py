"""Stage ``ranking``: score and order the features (Algorithm 2)."""

from __future__ import annotations

from collections.abc import Mapping

from ..data.cache import read_cache
from ..io import read_json, write_json
from ..protocol import derive_seed
from ..ranking import feature_coupling_diagonal, feature_orders


def run(cache_path, selection_path, ranking_cfg: Mapping, output) -> dict:
    """Rank features on the pairs found by the selection stage, write JSON.

    Besides the coupling diagonal, the output holds the three feature orders
    used downstream; the Random order's seed derives from (feature set,
    pair, iteration).
    """
    sel = read_json(selection_path)
    cache = read_cache(cache_path, domains=[sel["source"], sel["target"]])
    Xs = cache.domain(sel["source"]).X[sel["source_subset"]]
    Xt = cache.domain(sel["target"]).X
    scores = feature_coupling_diagonal(
        Xs[sel["matched_source"]],
        Xt[sel["matched_target"]],
        reg=ranking_cfg["reg"],
        norm=ranking_cfg["norm"],
        method=ranking_cfg["method"],
        max_iter=ranking_cfg["max_iter"],
        tol=ranking_cfg["tol"],
    )
    order_seed = derive_seed(sel["feature_set"], sel["pair"], sel["iteration"], "random_order")
    orders = feature_orders(scores, random_state=order_seed)
    record = {
        key: sel[key] for key in ("feature_set", "pair", "source", "target", "iteration", "strategy")
    }
    record.update(
        {
            "params": dict(ranking_cfg),
            "seed_random_order": order_seed,
            "scores": scores,
            "orders": orders,
        }
    )
    write_json(output, record)
    return record
