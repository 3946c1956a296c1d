"""Stage ``aggregation``: one tidy table per configuration, with summaries and provenance."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from otfs_workflow.aggregation import COLUMNS, mean_over_pairs, per_pair_summary
from otfs_workflow.data.cache import read_cache
from otfs_workflow.io import read_tsv, write_json, write_tsv
from otfs_workflow.protocol import METRIC_COLUMNS
from otfs_workflow.provenance import file_sha256, provenance_record


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
    # the grid's optional metrics, where every run table has them
    extra = [c for c in METRIC_COLUMNS if all(c in f.columns for f in frames)]
    long = long[COLUMNS + extra].sort_values(
        ["pair", "iteration", "order", "n_features"], kind="stable"
    ).reset_index(drop=True)
    write_tsv(long, outputs["long"])
    write_tsv(per_pair_summary(long), outputs["per_pair"])
    write_tsv(mean_over_pairs(long), outputs["summary"])

    record = provenance_record(params=dict(params), config=dict(config))
    recorded = [(path, *_cache_provenance(path)) for path in caches]
    record["inputs"] = {str(path): sha for path, sha, _ in recorded}
    record["raw_files"] = {}
    for _, _, raw_files in recorded:
        record["raw_files"].update(raw_files)
    record["runs"] = {"tables": len(run_tables), "rows": int(len(long))}
    write_json(outputs["provenance"], record)
    return long


def _cache_provenance(path) -> tuple[str, dict]:
    """A feature cache's SHA-256 and its domains' raw files (path and git blob SHA-1), read once per state of
    the file (its size and modification time) in a process: a batch job aggregates every (ranker, adapter) of a
    feature set from the same caches. A missing cache is :func:`read_cache`'s error."""
    path = Path(path)
    if not path.is_file():
        read_cache(path)
    st = path.stat()
    return _cache_provenance_at(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _cache_provenance_at(path: str, size: int, mtime_ns: int) -> tuple[str, dict]:
    raw = {name: {"path": dom.source_path, "git_blob_sha1": dom.source_git_blob_sha1}
           for name, dom in read_cache(path).domains.items()}
    return file_sha256(path), raw


def collect(tables: Sequence[str], output) -> pd.DataFrame:
    """Concatenate several long tables into the single tidy results table."""
    frames = [read_tsv(p) for p in tables]
    long = pd.concat(frames, ignore_index=True)[COLUMNS] if frames else pd.DataFrame(columns=COLUMNS)
    write_tsv(long, output)
    return long


def feature_table(rankings: Sequence[str], output) -> pd.DataFrame:
    """The features of one ranker's rankings, by name, from the most to the least similar on average.

    One row per feature: ``rank`` (1 = the first kept on average), ``feature`` (its name: a user's
    column, else its index), ``index`` (its column, from 0), ``mean_rank`` and ``mean_score`` over every
    pair and every iteration ranked (a ranker that only the leaderboard reads: its first 5), then
    ``rank:<pair>``, its mean rank in each pair. A feature's rank in one iteration is its position in the
    Descending order (1 = kept first).
    """
    import numpy as np

    from otfs_workflow.io import read_json

    if not rankings:
        raise ValueError("feature_table needs at least one ranking")
    names, ranks, scores, per_pair = None, [], [], {}
    for path in rankings:
        rank = read_json(path)
        d = len(rank["iterations"][0]["scores"])
        found = rank.get("feature_names") or [str(i) for i in range(d)]
        if names is None:
            names = list(found)
        elif list(found) != names:
            raise ValueError(f"{path}: its features {found[:5]}... are not those of {rankings[0]} ({names[:5]}...)")
        pair_ranks = []
        for it in rank["iterations"]:  # every iteration ranked (the leaderboard's zoo: the first 5)
            r = np.empty(d)
            r[np.asarray(it["orders"]["Descending"], dtype=int)] = np.arange(1, d + 1)
            pair_ranks.append(r)
            scores.append(np.asarray(it["scores"], dtype=float))
        ranks += pair_ranks
        per_pair[f"rank:{rank['pair']}"] = np.mean(pair_ranks, axis=0)
    table = pd.DataFrame({"feature": names, "index": np.arange(len(names)), "mean_rank": np.mean(ranks, axis=0),
                          "mean_score": np.mean(scores, axis=0), **per_pair})
    table = table.sort_values(["mean_rank", "index"], kind="stable").reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    write_tsv(table, output)
    return table
