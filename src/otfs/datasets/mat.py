"""``mat``: the released Office-Caltech feature files, one MATLAB file per domain (``<folder>/<domain>.mat``
with ``fts`` and ``labels``), described by the dataset's manifest (class names, and per file its shape and
class counts).

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from otfs.datasets._matfile import load_mat_features
from otfs.datasets._readers import DATASET_READERS, DatasetReader, DomainFeatures


class MatReader(DatasetReader):
    """One ``.mat`` file per domain, ``<folder>/<domain>.mat`` of the dataset's manifest.

    Parameters
    ----------
    folder : str
        The folder of the manifest holding the domains' files (e.g. ``surf``).
    """

    def __init__(self, folder: str):
        path = PurePosixPath(str(folder))
        if not str(folder) or path.is_absolute() or ".." in path.parts or "\\" in str(folder):
            raise ValueError(f"folder {folder!r} must be a relative path inside the dataset's folders "
                             "(no '..', not absolute)")
        self.folder = str(folder)

    def files(self, domain):
        return [f"{self.folder}/{domain}.mat"]

    def count_features(self, domains, manifest):
        if manifest is None:
            raise ValueError("the mat reader needs the dataset's manifest (datasets.<name>.manifest)")
        widths = {d: int(manifest.entry(self.files(d)[0]).extra["d"]) for d in domains}
        if len(set(widths.values())) != 1:
            raise ValueError(f"{manifest.source}: the domains' files in {self.folder}/ disagree on the number "
                             f"of features: {widths}")
        return widths[domains[0]]

    def read(self, domain, paths, manifest):
        (relpath,) = self.files(domain)
        entry = manifest.entry(relpath)
        class_names = manifest.meta["class_names"].split(",")
        counts = [int(c) for c in entry.extra["class_counts"].split(",")]
        X, y = load_mat_features(paths[relpath], n_classes=len(class_names), class_counts=counts)
        expected = (int(entry.extra["n"]), int(entry.extra["d"]))
        if X.shape != expected:
            raise ValueError(f"{paths[relpath]}: features have shape {X.shape}, manifest says {expected}")
        return DomainFeatures(X, y, class_names)


DATASET_READERS.register("mat", MatReader)
