"""Data acquisition: fetch each input file from the first source that has it.

Sources are tried in order:

1. a local folder (by default ``data/local/<dataset>/``), for files a user
   placed by hand;
2. mirror folders, from the configuration and from an environment variable
   (CI and the developers' machines point it at a shared copy);
3. the upstream URL, pinned to one commit, when downloads are allowed.

Every file is checked against its git blob SHA-1 before it is moved into its
final place. A download may use https (or file, for tests) only, and is cut
off as soon as it is larger than the manifest says the file is. A file with the wrong hash is never used, and nothing is moved
or deleted at its source, so a failure loses nothing; the error names the
file, the source and both hashes. A file that no source has is an error that
lists every place that was searched and says where to put the file.
"""

from __future__ import annotations

import os
import shutil
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from otfs_workflow.data.manifest import ManifestEntry, check_relative_path, git_blob_sha1
from otfs_workflow.io import atomic_path

__all__ = [
    "ALLOWED_SCHEMES",
    "AcquisitionError",
    "DownloadRefusedError",
    "HashMismatchError",
    "MissingDataError",
    "Sources",
    "acquire",
    "acquire_tree",
    "check_url",
    "mirror_dirs",
    "verify_file",
]


class AcquisitionError(RuntimeError):
    """Base class of data-acquisition errors."""


class HashMismatchError(AcquisitionError):
    """A file's content does not match its manifest hash."""


class MissingDataError(AcquisitionError):
    """No source has the file."""


class DownloadRefusedError(AcquisitionError):
    """A download that is not allowed: a URL scheme other than https, or a body larger than expected."""


#: URL schemes a download may use (file: for tests and local mirrors given as URLs).
ALLOWED_SCHEMES = ("https", "file")


@dataclass(frozen=True)
class Sources:
    """Where to look for the files of one dataset.

    Attributes
    ----------
    local_dir : Path or None
        Folder a user fills by hand, with the manifest's relative paths.
    mirror_dirs : sequence of Path
        Mirror folders with the manifest's relative paths.
    upstream_url : str or None
        Base URL; the manifest path is appended (a manifest row with its own
        ``upstream_url`` column uses that instead).
    download : bool
        Whether downloads are allowed at all.
    timeout : float
        Seconds before a download attempt is abandoned.
    config_prefix : str
        Where these settings live in the configuration, for error messages.
    mirror_env : str or None
        Environment variable adding mirror folders, for error messages.
    """

    local_dir: Path | None = None
    mirror_dirs: Sequence[Path] = ()
    upstream_url: str | None = None
    download: bool = True
    timeout: float = 60.0
    config_prefix: str = "datasets.<dataset>"
    mirror_env: str | None = "OTFS_DATA_MIRROR"

    def folders(self) -> list[tuple[str, Path]]:
        out = []
        if self.local_dir is not None:
            out.append(("local folder", Path(self.local_dir)))
        out.extend(("mirror", Path(m)) for m in self.mirror_dirs)
        return out


def verify_file(path: str | os.PathLike, entry: ManifestEntry, origin: str | None = None) -> None:
    """Raise :class:`HashMismatchError` unless ``path`` has ``entry``'s hash."""
    path = Path(path)
    actual = git_blob_sha1(path)
    if actual != entry.git_blob_sha1:
        where = f" (from {origin})" if origin else ""
        raise HashMismatchError(
            f"{entry.path}: hash mismatch for {path}{where}: expected git blob "
            f"{entry.git_blob_sha1}, got {actual} ({path.stat().st_size} bytes). "
            "The file is truncated, corrupt or a different version; it was not "
            "used. Replace or delete it and rerun."
        )


def check_url(url: str, what: str) -> str:
    """Return ``url`` if its scheme is allowed; else a :class:`DownloadRefusedError` naming ``what``."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise DownloadRefusedError(f"{what}: URL {url!r} has the scheme {scheme or '(none)'!r}; downloads use "
                                   f"{' or '.join(ALLOWED_SCHEMES)} only")
    return url


def _download(url: str, dest: Path, timeout: float, max_bytes: int = 1 << 30, limit_source: str = "") -> None:
    """Stream ``url`` into ``dest``, refusing a body of more than ``max_bytes`` bytes."""
    check_url(url, str(dest.name))
    too_big = f"{url}: the body is larger than expected ({limit_source or f'{max_bytes:,} bytes'}); refused"
    with urllib.request.urlopen(url, timeout=timeout) as response, open(dest, "wb") as out:
        length = response.headers.get("Content-Length") if hasattr(response, "headers") else None
        if length and length.isdigit() and int(length) > max_bytes:
            raise DownloadRefusedError(f"{too_big} (Content-Length {int(length):,})")
        written = 0
        while chunk := response.read(1 << 20):
            written += len(chunk)
            if written > max_bytes:
                raise DownloadRefusedError(f"{too_big} (more than {max_bytes:,} bytes received)")
            out.write(chunk)


def acquire(entry: ManifestEntry, dest: str | os.PathLike, sources: Sources) -> str:
    """Place a verified copy of ``entry`` at ``dest``.

    Parameters
    ----------
    entry : ManifestEntry
        The file to fetch (its relative path and hash).
    dest : path
        Final location; written atomically, only after verification.
    sources : Sources

    Returns
    -------
    str
        A description of the source that supplied the file.

    Raises
    ------
    HashMismatchError
        A source holds the file with the wrong content.
    MissingDataError
        No source has the file.
    """
    check_relative_path(entry.path, "manifest entry")
    dest = Path(dest)
    searched = []
    for kind, folder in sources.folders():
        candidate = folder / entry.path
        searched.append(f"{kind} {candidate}")
        if candidate.is_file():
            verify_file(candidate, entry, origin=f"{kind} {folder}")
            with atomic_path(dest) as tmp:
                shutil.copyfile(candidate, tmp)
                verify_file(tmp, entry, origin=f"copy of {candidate}")
            return f"{kind} {candidate}"

    # a manifest row may pin its own URL (column upstream_url), else base URL + path
    url = entry.extra.get("upstream_url") or None
    if url is None and sources.upstream_url:
        url = sources.upstream_url.rstrip("/") + "/" + entry.path
    if url is not None and sources.download:
        check_url(url, entry.path)
        searched.append(f"upstream {url}")
        max_bytes, limit_source = entry.max_bytes()
        try:
            with atomic_path(dest) as tmp:
                _download(url, tmp, sources.timeout, max_bytes, limit_source)
                verify_file(tmp, entry, origin=url)
            return f"upstream {url}"
        except OSError as exc:  # URLError, timeouts and refused connections
            searched[-1] += f" (failed: {exc})"

    local_hint = (
        f" Put it at {Path(sources.local_dir) / entry.path}," if sources.local_dir else ""
    )
    env_hint = f" or the environment variable {sources.mirror_env}" if sources.mirror_env else ""
    raise MissingDataError(
        f"{entry.path}: no source has this file (git blob {entry.git_blob_sha1}).{local_hint}"
        f" or set a mirror folder (config {sources.config_prefix}.mirror_dirs{env_hint}),"
        f" or allow downloads (config {sources.config_prefix}.download). "
        "Searched: " + "; ".join(searched)
    )


def acquire_tree(
    entries: Sequence[tuple[ManifestEntry, str]],
    dest_dir: str | os.PathLike,
    sources: Sources,
    threads: int = 1,
) -> Counter:
    """Place verified copies of many files in a folder, as a whole.

    The folder is assembled as ``.<name>.partial`` next to ``dest_dir`` and
    renamed to ``dest_dir`` once every file is in place and verified. After an
    interruption or a failure the partial folder is kept, and the next call
    verifies and reuses what it holds, so finished downloads are never lost.

    Parameters
    ----------
    entries : sequence of (ManifestEntry, relpath)
        Each file and its path under ``dest_dir``.
    dest_dir : path
        The folder to create; it must not exist, or be empty.
    sources : Sources
    threads : int
        Files fetched at once.

    Returns
    -------
    Counter
        Files per kind of source (``local``, ``mirror``, ``upstream``,
        ``partial`` for files reused from an earlier attempt).

    Raises
    ------
    HashMismatchError, MissingDataError
        After trying every file, naming the failed ones (the first few) and
        how many failed.
    """
    dest_dir = Path(dest_dir)
    if dest_dir.exists() and (not dest_dir.is_dir() or any(dest_dir.iterdir())):
        raise AcquisitionError(f"{dest_dir}: exists and is not an empty folder; delete it and rerun")
    partial = dest_dir.with_name(f".{dest_dir.name}.partial")
    partial.mkdir(parents=True, exist_ok=True)

    def one(item):
        entry, rel = item
        target = partial / rel
        if target.is_file():
            try:
                verify_file(target, entry)
                return "partial"
            except HashMismatchError:
                target.unlink()
        try:
            return acquire(entry, target, sources).split(" ", 1)[0]
        except AcquisitionError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=max(1, int(threads))) as pool:
        results = list(pool.map(one, entries))
    errors = [r for r in results if isinstance(r, Exception)]
    if errors:
        kind = HashMismatchError if any(isinstance(e, HashMismatchError) for e in errors) else MissingDataError
        first = [e for e in errors if isinstance(e, kind)]
        raise kind(
            f"{dest_dir}: {len(errors)} of {len(entries)} files could not be acquired "
            f"(the {len(entries) - len(errors)} others are kept in {partial} for the next run). "
            f"First: {first[0]}" + "".join(f"\n{e}" for e in first[1:5])
        )
    if dest_dir.exists():
        dest_dir.rmdir()
    os.replace(partial, dest_dir)
    return Counter(results)


def mirror_dirs(dataset_cfg: Mapping, environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Mirror folders of a dataset: those of the config, then the environment's."""
    dirs = [Path(p) for p in dataset_cfg.get("mirror_dirs", [])]
    env = dataset_cfg.get("mirror_env")
    if env and environ.get(env):
        dirs.extend(Path(p) for p in environ[env].split(os.pathsep) if p)
    return dirs
