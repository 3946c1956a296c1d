"""What parsing the workflow learns from the library's code, kept between runs: :class:`PlanCache`.

Parsing the Snakefile validates the configuration against the library (every
name it gives is registered, every method's parameters build) and asks the
library about its methods (the registries' names and files, whether a ranker
needs class labels, which sample-selection pairs it ranks). Answering imports
the library's methods and scikit-learn, SciPy and POT beneath them: about 2 s of
CPU at every ``snakemake`` call, dry runs and single-figure rebuilds included,
and at every job step of a cluster run, which parses the workflow again.

Those answers depend on the code and the configuration alone, never on data.
They are kept in one JSON file, ``.snakemake/otfs-plan/<signature>.json``,
whose name is a digest of the code: the size and modification time of every
file of the library, the workflow's package and its schemas, and the
installed distributions (their ``*.dist-info`` names, which carry versions,
and the paths of editable installs, whose files count too). Any edit,
install or upgrade changes the signature, so a stale answer is never read:
the next parse answers afresh and writes a new file (and removes the ones
it wrote for other signatures). Each answer is stored under a key naming
what was asked and its arguments (a configuration by its digest).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from otfs_workflow.codedeps import source_states

__all__ = ["CACHE_DIR", "PlanCache", "code_signature", "digest"]

#: Where the answers are kept (beside Snakemake's own state).
CACHE_DIR = Path(".snakemake") / "otfs-plan"
_SOURCE_SUFFIXES = (".py", ".pyi", ".json", ".yaml", ".yml")


def digest(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys; what JSON cannot hold, by ``str``; a mapping whose
    keys are not all strings, such as a key YAML read as a boolean, with its keys by type and ``repr``, so that
    the configuration's validation, not the digest, names the key)."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    except TypeError:
        text = json.dumps(_typed_keys(value), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _typed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {f"{type(k).__name__}:{k!r}": _typed_keys(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_typed_keys(v) for v in value]
    return value


def _installed(paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """The distributions installed in ``paths`` (their metadata folders' names, versions included) and the
    folders that editable installs (``*.pth`` files) put on the path."""
    dists, editable = [], []
    for entry in paths:
        try:
            names = sorted(os.listdir(entry))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info", ".egg-link")):
                dists.append(name)
            elif name.endswith(".pth"):
                try:
                    lines = Path(entry, name).read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    continue
                editable += [ln.strip() for ln in lines
                             if ln.strip() and not ln.startswith(("#", "import")) and os.path.isdir(ln.strip())]
    return dists, editable


def code_signature(roots: Iterable[str | os.PathLike], path: Iterable[str] | None = None) -> str:
    """A digest that changes with any file of ``roots`` and any installed distribution on ``path``
    (``sys.path`` by default): its metadata, and the files of an editable install."""
    path = [p for p in (sys.path if path is None else path) if p and os.path.isdir(p)]
    site = [p for p in path if os.path.basename(p) in ("site-packages", "dist-packages")]
    dists, editable = _installed(site)
    h = hashlib.sha256()
    h.update(sys.version.encode())
    h.update("\n".join(dists).encode())
    real = dict.fromkeys(os.path.realpath(r) for r in [*map(str, roots), *editable])  # each folder once
    for entry in source_states(real, _SOURCE_SUFFIXES):
        h.update(repr(entry).encode())
    return h.hexdigest()[:32]


class PlanCache:
    """Answers kept under ``folder/<signature>.json``, computed where absent.

    Parameters
    ----------
    signature : str
        :func:`code_signature` of the code the answers depend on.
    folder : path-like, default CACHE_DIR
        Where the file lies (relative to the working directory).
    write : bool, default True
        Whether :meth:`save` writes (the process that schedules jobs does; a job step only reads).
    """

    def __init__(self, signature: str, folder: str | os.PathLike = CACHE_DIR, write: bool = True):
        self.signature = signature
        self.folder = Path(folder)
        self.path = self.folder / f"{signature}.json"
        self.write = write
        self.hits = self.misses = 0
        self._dirty = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self._answers = dict(data["answers"]) if data.get("signature") == signature else {}
        except (OSError, ValueError, KeyError, TypeError):
            self._answers = {}

    def get(self, question: str, args: Any, compute: Callable[[], Any]) -> Any:
        """The answer to ``question`` with ``args`` (JSON-able): the kept one, else ``compute()``, kept.
        An exception of ``compute`` is raised and nothing is kept."""
        key = f"{question}:{digest(args)}"
        if key in self._answers:
            self.hits += 1
            return self._answers[key]
        self.misses += 1
        value = compute()
        # kept as JSON reads it back, so that a kept answer and a fresh one are the same object
        self._answers[key] = json.loads(json.dumps(value))
        self._dirty = True
        return self._answers[key]

    def save(self) -> None:
        """Write the answers, if any is new, atomically (the user's umask); remove the files this cache wrote
        for other signatures."""
        if not (self.write and self._dirty):
            return
        from otfs_workflow.io import write_text

        self.folder.mkdir(parents=True, exist_ok=True)
        # keys in the order given: an answer read back is the same, mappings' order included
        write_text(self.path, json.dumps({"signature": self.signature, "answers": self._answers}))
        self._dirty = False
        for old in self.folder.glob("*.json"):
            if old != self.path and len(old.stem) == len(self.signature):
                try:
                    old.unlink()
                except OSError:
                    pass
