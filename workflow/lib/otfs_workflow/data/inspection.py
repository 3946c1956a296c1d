"""What the workflow checks in a user's data files when it is parsed, remembered between parses."""

from __future__ import annotations

from pathlib import Path

from otfs.datasets import DatasetReader

__all__ = ["inspect_files"]


def inspect_files(reader: DatasetReader, memo_dir=None) -> dict | None:
    """What ``reader.inspect()`` finds in its files (a reader without ``inspect``: None), remembered in
    ``memo_dir`` while its parameters and every file's size and modification time stay the same.

    The workflow runs it when it is parsed, so a user's bad table stops the
    run before any job; the memo keeps a second parse from reading the files
    again. An error is never remembered.
    """
    import hashlib
    import json

    inspect = getattr(reader, "inspect", None)
    if inspect is None:
        return None
    domains = list(getattr(reader, "files_", {}) or [])
    files = [Path(str(p)) for d in domains for p in reader.local_files(d)]
    stats = [(str(p), *((p.stat().st_size, p.stat().st_mtime_ns) if p.is_file() else (None, None))) for p in files]
    params = {k: v for k, v in vars(reader).items() if not k.startswith("_")}
    key = hashlib.sha256(json.dumps({"reader": type(reader).__name__, "params": params, "files": stats},
                                    sort_keys=True, default=str).encode()).hexdigest()
    memo = Path(memo_dir) / f"{key}.json" if memo_dir else None
    if memo is not None and memo.is_file():
        try:
            return json.loads(memo.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    result = inspect()
    if memo is not None:
        from otfs_workflow.io import write_json

        try:
            write_json(memo, result, sealed=False)  # a memo of the parse, read by nothing but this
        except OSError:  # a read-only working directory: inspect again next time
            pass
    return result
