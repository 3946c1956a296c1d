"""Data manifests: what each input file is, where it lives upstream, its hash.

A manifest is a TSV file with ``# key: value`` header lines followed by a
table with at least the columns ``path`` and ``git_blob_sha1``. The git blob
SHA-1 (what ``git hash-object FILE`` prints) identifies each file exactly and
is checked before any file is used. An optional ``size`` column gives each
file's size in bytes, the limit of a download (:meth:`ManifestEntry.max_bytes`).

Paths are relative to the dataset's folders: an absolute path or one with
``..`` is an error, so no manifest can make the pipeline read or write
outside them.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

__all__ = ["DEFAULT_MAX_BYTES", "Manifest", "ManifestEntry", "check_relative_path", "git_blob_sha1", "read_manifest"]

_CHUNK = 1 << 20


def git_blob_sha1(path: str | os.PathLike) -> str:
    """Git blob SHA-1 of a file: ``sha1(b"blob <size>\\0" + content)``."""
    path = Path(path)
    size = path.stat().st_size
    h = hashlib.sha1(f"blob {size}\0".encode())
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


#: Download limit of a file whose manifest row gives neither ``size`` nor ``n`` and ``d``.
DEFAULT_MAX_BYTES = 1 << 30


@dataclass(frozen=True)
class ManifestEntry:
    """One file of a manifest; ``extra`` holds the remaining columns as text."""

    path: str
    git_blob_sha1: str
    extra: dict = field(default_factory=dict)

    def max_bytes(self) -> tuple[int, str]:
        """The most bytes a download of this file may have, and where the limit comes from.

        The ``size`` column when the manifest gives it (the exact size);
        else, for a feature matrix with ``n`` samples of ``d`` features, 8
        bytes per value and per label plus 1 MiB of header; else
        :data:`DEFAULT_MAX_BYTES`.
        """
        size = (self.extra.get("size") or "").strip()
        if size:
            return int(size), f"the manifest's size, {int(size):,} bytes"
        n, d = (self.extra.get(k, "").strip() for k in ("n", "d"))
        if n.isdigit() and d.isdigit():
            limit = 8 * int(n) * (int(d) + 1) + (1 << 20)
            return limit, f"{limit:,} bytes, from the manifest's n = {n} and d = {d}"
        return DEFAULT_MAX_BYTES, f"the default limit of {DEFAULT_MAX_BYTES:,} bytes (no size in the manifest)"


def check_relative_path(path: str, where: str) -> str:
    """Return ``path`` if it is relative and stays inside its base folder; else a ``ValueError`` naming ``where``."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or PureWindowsPath(path).is_absolute() or ".." in p.parts or "\\" in path:
        raise ValueError(f"{where}: path {path!r} must be relative and stay inside its folder (no '..', not "
                         "absolute)")
    return path


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest: header metadata and entries by relative path."""

    source: Path
    meta: dict
    entries: dict

    def entry(self, path: str) -> ManifestEntry:
        try:
            return self.entries[path]
        except KeyError:
            raise KeyError(
                f"{path!r} is not listed in the manifest {self.source}; "
                f"listed: {sorted(self.entries)}"
            ) from None


def read_manifest(path: str | os.PathLike) -> Manifest:
    """Parse a manifest file, naming the file and line on malformed input (once per state of the file: its
    size and modification time; a parse reads the images' manifest for each of its domains)."""
    path = Path(path)
    st = path.stat()
    return _read_manifest_at(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _read_manifest_at(path_text: str, size: int, mtime_ns: int) -> Manifest:
    path = Path(path_text)
    meta: dict[str, str] = {}
    rows: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                key, sep, value = line[1:].partition(":")
                if sep and key.strip() and " " not in key.strip():
                    meta[key.strip()] = value.strip()
            elif line.strip():
                rows.append(line)
    reader = csv.DictReader(rows, delimiter="\t")
    required = {"path", "git_blob_sha1"}
    if reader.fieldnames is None or not required <= set(reader.fieldnames):
        raise ValueError(f"{path}: manifest must have the columns {sorted(required)}")
    entries = {}
    for lineno, row in enumerate(reader, start=2):
        sha = row["git_blob_sha1"].strip()
        if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
            raise ValueError(f"{path}: row {lineno}: invalid git_blob_sha1 {sha!r}")
        check_relative_path(row["path"] or "", f"{path}: row {lineno}")
        extra = {k: v for k, v in row.items() if k not in required}
        size = (extra.get("size") or "").strip()
        if size and not size.isdigit():
            raise ValueError(f"{path}: row {lineno}: invalid size {size!r} (bytes, an integer)")
        entries[row["path"]] = ManifestEntry(row["path"], sha, extra)
    return Manifest(source=path, meta=meta, entries=entries)
