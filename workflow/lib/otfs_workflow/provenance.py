"""Provenance recorded with every result: versions, configuration, input hashes."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["PACKAGES", "file_sha256", "git_commit", "package_versions", "provenance_record"]

#: Distributions whose versions can change a result.
PACKAGES = ("otfs", "numpy", "scipy", "POT", "scikit-learn", "pandas", "h5py", "matplotlib")


def package_versions(packages=PACKAGES) -> dict[str, str]:
    """Installed versions of ``packages`` (``"not installed"`` when absent)."""
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (:func:`otfs._checks.file_sha256`, the library's one helper for it)."""
    from otfs._checks import file_sha256 as digest

    return digest(path)


def git_commit(repo: str | os.PathLike | None = None) -> str:
    """The commit of the checkout holding this library (``<sha>-dirty`` with uncommitted changes to tracked
    files; ``"unknown"`` outside a git checkout or without git)."""
    import subprocess

    repo = Path(repo) if repo is not None else Path(__file__).resolve().parents[3]
    try:
        sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha}-dirty" if dirty else sha


def provenance_record(inputs=(), params=None, config=None) -> dict:
    """A JSON-serialisable provenance record.

    Parameters
    ----------
    inputs : iterable of path
        Files whose SHA-256 is recorded.
    params : dict, optional
        Parameters of the step.
    config : dict, optional
        The (validated) configuration of the run.
    """
    return {
        "versions": package_versions(),
        "git_commit": git_commit(),
        "platform": platform.platform(),
        "executable": sys.executable,
        "inputs": {str(p): file_sha256(p) for p in inputs if Path(p).is_file()},
        "params": params or {},
        "config": config or {},
    }
