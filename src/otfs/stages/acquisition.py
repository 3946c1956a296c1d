"""Stage ``acquisition``: place one verified raw data file under ``data/raw/``."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from ..config import mirror_dirs
from ..data.acquisition import Sources, acquire
from ..data.manifest import read_manifest

log = logging.getLogger(__name__)


def sources_for(dataset: str, dataset_cfg: Mapping, upstream_url: str | None) -> Sources:
    """The ordered sources of a dataset, from its configuration."""
    return Sources(
        local_dir=Path(dataset_cfg["local_dir"]),
        mirror_dirs=tuple(mirror_dirs(dataset_cfg)),
        upstream_url=upstream_url if dataset_cfg["download"] else None,
        timeout=float(dataset_cfg.get("download_timeout_s", 60)),
        config_prefix=f"datasets.{dataset}",
        mirror_env=dataset_cfg.get("mirror_env"),
    )


def run(manifest_path, relpath: str, output, dataset: str, dataset_cfg: Mapping) -> str:
    """Fetch ``relpath`` of the manifest into ``output``; return the source used."""
    manifest = read_manifest(manifest_path)
    entry = manifest.entry(relpath)
    sources = sources_for(dataset, dataset_cfg, manifest.meta.get("upstream_url"))
    origin = acquire(entry, output, sources)
    log.info("%s: verified git blob %s, from %s", relpath, entry.git_blob_sha1, origin)
    return origin
