"""Stage ``aggregation``: one tidy table per configuration, with summaries and provenance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ..aggregation import COLUMNS, mean_over_pairs, per_pair_summary
from ..data.cache import read_cache
from ..io import read_tsv, write_json, write_tsv
from ..provenance import provenance_record


def run(run_tables: Sequence[str], caches: Sequence[str], outputs: Mapping[str, str], params: Mapping,
        config: Mapping) -> pd.DataFrame:
    """Concatenate per-run tables; write the long table, summaries and provenance.

    Parameters
    ----------
    run_tables : paths of the classification stage's TSV files
    caches : the feature caches used (their hashes and source hashes are recorded)
    outputs : mapping with keys ``long``, ``per_pair``, ``summary``, ``provenance``
    params : the wildcards and protocol values of this aggregate
    config : the validated configuration, recorded verbatim
    """
    if not run_tables:
        raise ValueError("aggregation needs at least one run table")
    frames = [read_tsv(p) for p in run_tables]
    long = pd.concat(frames, ignore_index=True)
    missing = [c for c in COLUMNS if c not in long.columns]
    if missing:
        raise ValueError(f"run tables lack the columns {missing}")
    long = long[COLUMNS].sort_values(
        ["pair", "iteration", "order", "n_features"], kind="stable"
    ).reset_index(drop=True)
    write_tsv(long, outputs["long"])
    write_tsv(per_pair_summary(long), outputs["per_pair"])
    write_tsv(mean_over_pairs(long), outputs["summary"])

    record = provenance_record(inputs=caches, params=dict(params), config=dict(config))
    record["raw_files"] = {}
    for path in caches:
        for name, dom in read_cache(path).domains.items():
            record["raw_files"][name] = {
                "path": dom.source_path, "git_blob_sha1": dom.source_git_blob_sha1
            }
    record["runs"] = {"tables": len(run_tables), "rows": int(len(long))}
    write_json(outputs["provenance"], record)
    return long


def collect(tables: Sequence[str], output) -> pd.DataFrame:
    """Concatenate several long tables into the single tidy results table."""
    frames = [read_tsv(p) for p in tables]
    long = pd.concat(frames, ignore_index=True)[COLUMNS] if frames else pd.DataFrame(columns=COLUMNS)
    write_tsv(long, output)
    return long
