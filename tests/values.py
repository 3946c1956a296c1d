"""The values of a pipeline run's outputs, for comparing two runs: a digest of each file's values, with what
changes from run to run by nature (times, dates, versions, commits, provenance, figures' bytes) left out.

``python -m tests.values FOLDER`` prints the digests of a finished run (``tests/data/available_values.tsv``
holds those of the test configuration's ``available``; tests/test_pipeline.py compares a run with them).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
from pathlib import Path

#: The folders of a run whose files are outputs of `available`.
ROOTS = ("results", "data/cache", "data/features")
#: Files whose bytes are not their values: figures (drawn from the tables beside them), provenance records.
SKIPPED = re.compile(r"(^|/)\.|\.(pdf|png|svg|log)$|(^|/)provenance[^/]*\.json$")
#: Columns and JSON keys that record when, how fast, or with what a run was made, not what it found.
VOLATILE = {"seconds", "provenance", "versions", "git_commit", "learned_on", "created", "date", "elapsed_s",
            "wall_s", "core_s"}


def _table(path: Path, sep: str) -> bytes:
    import pandas as pd

    df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    return df.drop(columns=[c for c in df.columns if c in VOLATILE]).to_csv(index=False).encode()


def _json(obj):
    if isinstance(obj, dict):
        return {k: _json(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_json(v) for v in obj]
    return obj


def _h5(path: Path) -> bytes:
    import h5py
    import numpy as np

    out = io.BytesIO()

    def visit(name, node):
        if isinstance(node, h5py.Dataset):
            value = np.asarray(node[()])
            out.write(f"{name}\t{value.dtype.str}\t{value.shape}\n".encode())
            out.write(value.tobytes() if value.dtype.kind != "O" else repr(value.tolist()).encode())

    with h5py.File(path, "r") as fh:
        fh.visititems(visit)
    return out.getvalue()


def canonical(path: Path) -> bytes:
    """The bytes that stand for the values of ``path``."""
    suffix = path.suffix
    if suffix in (".csv", ".tsv"):
        return _table(path, "," if suffix == ".csv" else "\t")
    if suffix == ".json":
        return json.dumps(_json(json.loads(path.read_text(encoding="utf-8"))), sort_keys=True).encode()
    if suffix == ".h5":
        return _h5(path)
    if suffix == ".parquet":
        import pandas as pd

        return pd.read_parquet(path).to_csv(index=False).encode()
    return path.read_bytes()


def digests(folder: Path) -> dict[str, str]:
    """``{path relative to folder: SHA-256 of its values}`` of every output under :data:`ROOTS`."""
    folder = Path(folder)
    out = {}
    for root in ROOTS:
        for path in sorted((folder / root).rglob("*")):
            rel = path.relative_to(folder).as_posix()
            if path.is_file() and not SKIPPED.search(rel):
                out[rel] = hashlib.sha256(canonical(path)).hexdigest()
    return out


def read_digests(path: Path) -> dict[str, str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return dict(line.split("\t") for line in lines if line and not line.startswith("#"))


if __name__ == "__main__":
    for rel, digest in digests(Path(sys.argv[1])).items():
        print(f"{rel}\t{digest}")
