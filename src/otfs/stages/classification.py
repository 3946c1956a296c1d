"""Stage ``classification``: adapt and score 1-NN along every feature order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ..aggregation import COLUMNS
from ..data.cache import read_domains
from ..io import read_json, write_tsv
from ..protocol import resolve_feature_counts


def run(caches: Mapping[str, str], selection_path, ranking_path, adapter: str, grid: str,
        orders: Sequence[str],
        counts, output, adapter_params: Mapping | None = None) -> pd.DataFrame:
    """Write one TSV row per (iteration, order, number of features) of one pair.

    ``adapter_params`` are the adapter's hyper-parameters (config ``adapters``; its defaults where absent).
    """
    # imported here: POT and scikit-learn only where a job adapts or classifies
    from ..adaptation import get_adapter
    from ..classification import accuracy_curve

    sel = read_json(selection_path)
    rank = read_json(ranking_path)
    sel_its = [it["iteration"] for it in sel["iterations"]]
    rank_its = [it["iteration"] for it in rank["iterations"]]
    if rank["pair"] != sel["pair"] or rank_its != sel_its:
        raise ValueError(f"{ranking_path} and {selection_path} describe different runs")
    cache = read_domains({d: caches[d] for d in (sel["source"], sel["target"])})
    src, tgt = cache.domain(sel["source"]), cache.domain(sel["target"])
    counts = resolve_feature_counts(counts, cache.n_features)
    frames = []
    for s_it, r_it in zip(sel["iterations"], rank["iterations"], strict=True):
        subset = s_it["source_subset"]
        rows = accuracy_curve(
            src.X[subset], src.y[subset], tgt.X, tgt.y,
            orders={name: r_it["orders"][name] for name in orders},
            n_features=counts,
            adapter=get_adapter(adapter, **(adapter_params or {})),
        )
        df = pd.DataFrame(rows)
        df["iteration"] = s_it["iteration"]
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    for key, value in (
        ("feature_set", sel["feature_set"]), ("pair", sel["pair"]), ("source", sel["source"]),
        ("target", sel["target"]), ("selection", sel["strategy"]), ("adapter", adapter), ("grid", grid),
    ):
        df[key] = value
    df = df[COLUMNS]
    write_tsv(df, output)
    return df
