"""Stage ``extraction``: deep features of one domain's images, in the cache format.

The output is a feature cache (:mod:`otfs_workflow.data.cache`) with no preprocessing
applied, keyed by extractor rather than feature set: the feature sets built
from it (rule ``build_cache``) add their own preprocessing, so a change of
preprocessing never reruns the network.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from otfs.extractors import extract_features, get_extractor
from otfs_workflow.data.acquisition import Sources, acquire, verify_file
from otfs_workflow.data.cache import DomainData, write_cache
from otfs_workflow.data.images import check_class_counts, domain_images, images_digest
from otfs_workflow.data.manifest import Manifest, git_blob_sha1, read_manifest
from otfs_workflow.provenance import package_versions

log = logging.getLogger(__name__)


def expected_class_counts(feature_manifest: Manifest, domain: str) -> list[int] | None:
    """Per-class sample counts of ``domain`` in the released ``.mat`` files.

    Every feature file of the domain must agree; None when the manifest has
    no file of this domain.
    """
    found = {
        path: [int(c) for c in e.extra["class_counts"].split(",")]
        for path, e in feature_manifest.entries.items()
        if Path(path).name == f"{domain}.mat" and e.extra.get("class_counts")
    }
    if not found:
        return None
    distinct = {tuple(v) for v in found.values()}
    if len(distinct) != 1:
        raise ValueError(f"{feature_manifest.source}: the files of {domain!r} disagree on class counts: {found}")
    return list(distinct.pop())


def run(extractor: str, dataset: str, domain: str, image_manifest, images_dir, output,
        feature_manifest=None, batch_size: int = 4, threads: int = 1, progress: bool = True,
        sources: Sources | None = None) -> np.ndarray:
    """Extract features of every image of ``domain`` under ``images_dir`` into ``output``.

    Labels are checked against the released features: the class names must
    be those of ``feature_manifest`` (alphabetical, labels 1..K) and the
    images per class must equal its ``class_counts`` for this domain.

    Every image is verified against its hash first. An image missing from
    ``images_dir`` (say, a corrupt one the user deleted, as the hash error
    advises) is acquired again from ``sources`` (the dataset's local folder,
    mirrors or upstream) and verified; a corrupt one is an error naming it,
    and nothing is deleted.
    """
    ex = get_extractor(extractor)
    manifest = read_manifest(image_manifest)
    records = domain_images(manifest, domain)
    class_names = manifest.meta["class_names"].split(",")
    if feature_manifest is not None:
        features = read_manifest(feature_manifest)
        if features.meta.get("class_names", "").split(",") != class_names:
            raise ValueError(
                f"{image_manifest} and {feature_manifest} disagree on class_names: the labels "
                "of the extracted features would not match the released features"
            )
        expected = expected_class_counts(features, domain)
        if expected is not None:
            check_class_counts(records, expected, f"{image_manifest}, domain {domain!r}")
    images_dir = Path(images_dir)
    paths = [images_dir / r.relpath for r in records]
    for r, p in zip(records, paths, strict=True):
        if not p.is_file():
            if sources is None:
                raise FileNotFoundError(f"{p}: image {r.entry.path} is missing from {images_dir}; delete the "
                                        "folder to acquire the domain again")
            origin = acquire(r.entry, p, sources)
            log.info("%s: missing, acquired again from %s", r.entry.path, origin)
        verify_file(p, r.entry)  # verified when acquired; again in case of edits since
    log.info("%s/%s: %d images, %s, batch size %d, %d threads", dataset, domain, len(paths), ex.name,
             batch_size, threads)
    X = extract_features(paths, ex, batch_size=batch_size, threads=threads, progress=progress,
                         desc=f"{ex.name} {domain}")
    y = np.array([r.label for r in records], dtype=np.int64)
    write_cache(
        output,
        feature_set=ex.name,
        dataset=dataset,
        domains={domain: DomainData(domain, X.astype(np.float64), y, str(images_dir), images_digest(records),
                                    sample_ids=tuple(r.entry.path for r in records))},
        class_names=class_names,
        preprocessing=[],
        extra_attrs={
            "extractor": ex.describe(),
            "batch_size": int(batch_size),
            "threads": int(threads),
            "image_manifest": Path(image_manifest).name,
            "image_manifest_git_blob_sha1": git_blob_sha1(image_manifest),
            "extracted_dtype": "float32",
            "extraction_versions": package_versions(ex.distributions),
        },
    )
    log.info("%s/%s: features %s, mean %.4f", dataset, domain, X.shape, float(X.mean()))
    return X

