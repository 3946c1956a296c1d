"""Raw image datasets: which images make up a domain, and their labels.

An image manifest (see :mod:`otfs_workflow.data.manifest`) lists files named
``images/<domain>/<class>/<file>``. Labels follow the released ``.mat``
feature files: class ``k`` (1-based) is the ``k``-th of the manifest's
``class_names``, which are in alphabetical order, and images are ordered by
label, then file name.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from otfs_workflow.data.manifest import Manifest, ManifestEntry

__all__ = ["ImageRecord", "check_class_counts", "domain_images", "images_digest"]


@dataclass(frozen=True)
class ImageRecord:
    """One image of a domain: its manifest entry, class and label (1..K)."""

    entry: ManifestEntry
    domain: str
    class_name: str
    label: int

    @property
    def relpath(self) -> str:
        """Path under the domain's folder: ``<class>/<file>``."""
        return str(PurePosixPath(self.entry.path).relative_to(f"images/{self.domain}"))


def _class_names(manifest: Manifest) -> list[str]:
    names = [c for c in manifest.meta.get("class_names", "").split(",") if c]
    if not names:
        raise ValueError(f"{manifest.source}: the header has no 'class_names' line")
    if names != sorted(names) or len(set(names)) != len(names):
        raise ValueError(
            f"{manifest.source}: class_names must be distinct and alphabetical, as the labels "
            f"1..K of the released .mat files are; got {names}"
        )
    return names


def domain_images(manifest: Manifest, domain: str) -> list[ImageRecord]:
    """The images of ``domain``, ordered by label, then file name.

    Raises
    ------
    ValueError
        A path that is not ``images/<domain>/<class>/<file>``, a class not in
        ``class_names``, a class with no image, or a domain with no image; the
        message names the manifest and the path.
    """
    names = _class_names(manifest)
    label = {c: i + 1 for i, c in enumerate(names)}
    out = []
    for path, entry in manifest.entries.items():
        parts = PurePosixPath(path).parts
        if len(parts) != 4 or parts[0] != "images":
            raise ValueError(f"{manifest.source}: {path!r} is not images/<domain>/<class>/<file>")
        if parts[1] != domain:
            continue
        if parts[2] not in label:
            raise ValueError(f"{manifest.source}: {path!r}: class {parts[2]!r} is not one of {names}")
        out.append(ImageRecord(entry, domain, parts[2], label[parts[2]]))
    if not out:
        raise ValueError(f"{manifest.source}: no image of domain {domain!r}")
    missing = sorted(set(names) - {r.class_name for r in out})
    if missing:
        raise ValueError(f"{manifest.source}: domain {domain!r} has no image of class(es) {missing}")
    return sorted(out, key=lambda r: (r.label, r.entry.path))


def check_class_counts(records: Sequence[ImageRecord], expected: Sequence[int], where: str) -> None:
    """Raise ``ValueError`` unless ``records`` has ``expected[k-1]`` images of label ``k``."""
    got = Counter(r.label for r in records)
    counts = [got.get(k, 0) for k in range(1, len(expected) + 1)]
    if counts != list(expected) or set(got) - set(range(1, len(expected) + 1)):
        raise ValueError(f"{where}: images per class {counts}, expected {list(expected)}")


def images_digest(records: Sequence[ImageRecord]) -> str:
    """SHA-1 over the records' paths and git blob SHA-1s: identifies an image set."""
    h = hashlib.sha1()
    for r in records:
        h.update(f"{r.entry.path}\t{r.entry.git_blob_sha1}\n".encode())
    return h.hexdigest()
