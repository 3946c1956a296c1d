"""Stage ``classification``: adapt and score 1-NN along every feature order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ..aggregation import COLUMNS
from ..data.cache import read_domains
from ..io import read_json, write_tsv
from ..protocol import resolve_feature_counts


def run(caches: Mapping[str, str], ranking_path, adapter: str, grid: str,
        orders: Sequence[str],
        counts, output, adapter_params: Mapping | None = None, iterations: int | None = None) -> pd.DataFrame:
    """Write one TSV row per (iteration, order, number of features) of one pair.

    ``adapter_params`` are the adapter's hyper-parameters (config ``adapters``; its defaults where absent).
    ``iterations``: only the first so many iterations of the ranking (the grid's ``iterations``; all by
    default).
    """
    return run_adapters(caches, ranking_path, {adapter: adapter_params}, grid, orders, counts, {adapter: output},
                        iterations=iterations)[adapter]


def run_adapters(caches: Mapping[str, str], ranking_path, adapters: Mapping[str, Mapping | None], grid: str,
                 orders: Sequence[str], counts, outputs: Mapping[str, str],
                 iterations: int | None = None) -> dict[str, pd.DataFrame]:
    """:func:`run` for several adapters of one pair at once: the caches and the ranking are read once.

    ``adapters`` maps each adapter to its hyper-parameters, ``outputs`` each
    adapter to its TSV; each file is the one :func:`run` writes for it.
    """
    # imported here: POT and scikit-learn only where a job adapts or classifies
    from ..adaptation import get_adapter
    from ..classification import accuracy_curve

    if set(adapters) != set(outputs):
        raise ValueError(f"adapters {sorted(adapters)} and outputs {sorted(outputs)} name different adapters")
    rank = read_json(ranking_path)
    cache = read_domains({d: caches[d] for d in (rank["source"], rank["target"])})
    src, tgt = cache.domain(rank["source"]), cache.domain(rank["target"])
    counts = resolve_feature_counts(counts, cache.n_features)
    results = {}
    for adapter, params in adapters.items():
        frames = []
        for r_it in rank["iterations"][:iterations]:
            subset = r_it["source_subset"]  # the iteration's source samples, drawn by the ranking stage
            rows = accuracy_curve(
                src.X[subset], src.y[subset], tgt.X, tgt.y,
                orders={name: r_it["orders"][name] for name in orders},
                n_features=counts,
                adapter=get_adapter(adapter, **(params or {})),
            )
            df = pd.DataFrame(rows)
            df["iteration"] = r_it["iteration"]
            frames.append(df)
        df = pd.concat(frames, ignore_index=True)
        for key, value in (
            ("feature_set", rank["feature_set"]), ("pair", rank["pair"]), ("source", rank["source"]),
            ("target", rank["target"]), ("ranker", rank["ranker"]), ("adapter", adapter), ("grid", grid),
        ):
            df[key] = value
        df = df[COLUMNS]
        write_tsv(df, outputs[adapter])
        results[adapter] = df
    return results
