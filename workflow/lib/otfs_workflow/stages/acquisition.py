"""Stage ``acquisition``: place verified raw data under ``data/raw/``.

``run`` fetches one file (a ``.mat`` feature file); ``run_images`` fetches
the images of one domain into one folder.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from otfs_workflow.data.acquisition import Sources, acquire, acquire_tree, mirror_dirs
from otfs_workflow.data.images import domain_images
from otfs_workflow.data.manifest import read_manifest

log = logging.getLogger(__name__)


def sources_for(dataset: str, dataset_cfg: Mapping, upstream_url: str | None) -> Sources:
    """The ordered sources of a dataset, from its configuration."""
    return Sources(
        local_dir=Path(dataset_cfg["local_dir"]),
        mirror_dirs=tuple(mirror_dirs(dataset_cfg)),
        upstream_url=upstream_url if dataset_cfg["download"] else None,
        download=bool(dataset_cfg["download"]),
        timeout=float(dataset_cfg.get("download_timeout_s", 60)),
        # a dataset named with its config path (e.g. "wda.data") is reported as such
        config_prefix=dataset if "." in dataset else f"datasets.{dataset}",
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


def run_images(manifest_path, domain: str, output, dataset: str, dataset_cfg: Mapping, threads: int = 1) -> dict:
    """Fetch every image of ``domain`` into the folder ``output`` (``<class>/<file>``).

    Returns the number of files per kind of source.
    """
    manifest = read_manifest(manifest_path)
    records = domain_images(manifest, domain)
    sources = sources_for(dataset, dataset_cfg, manifest.meta.get("upstream_url"))
    origins = acquire_tree([(r.entry, r.relpath) for r in records], output, sources, threads=threads)
    log.info("%s: %d images verified, by source: %s", domain, len(records), dict(origins))
    return dict(origins)
