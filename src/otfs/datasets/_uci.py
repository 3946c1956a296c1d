"""The small classification data sets of the WDA experiment (Flamary et al., Table 1).

Each data set is read from its verified raw files (``data/manifests/uci.tsv``;
the acquisition stage fetches them) or, for iris, wine and digits, from
scikit-learn, which ships them. :data:`UCI_DATASETS` says, for each, which
files it needs, how it is parsed, and whether the WDA paper added 100 Gaussian
noise features to it (every set but the image and speech ones).

Parsing notes (see ``../shared/data/uci/MANIFEST.tsv`` for provenance):

- glass: one header line added by the repository's author; columns id, 9
  features, type (6 classes, no class 4, as in UCI).
- vehicles: the 9 Statlog files concatenated; 18 features and a 3-letter label.
- credit: Statlog Australian (the 690 crx applicants re-encoded as numbers).
  Its row 2 carries a wrong label (1 instead of 0: crx applicant 22.67/7/0.165
  is "-"); it is corrected here after checking that row, giving 383/307.
- ionosphere: one header line added; 34 features (the 2nd constant) + g/b.
- usps: the ESL train and test files together (9,298 digits, 16 x 16).
- isolet: only the 1,560-sample ISOLET1 subset exists here (30 speakers x 26
  letters x 2), not the 7,797-sample UCI set.
- mnist: only the 10,000-sample test set exists here.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["UCI_DATASETS", "UciDataset", "load_dataset", "raw_files"]


@dataclass(frozen=True)
class UciDataset:
    """One data set: its raw files (manifest paths), parser and protocol notes."""

    name: str
    files: tuple[str, ...]
    parse: Callable
    noise: bool
    note: str = ""


def _glass(paths):
    import pandas as pd

    df = pd.read_csv(paths[0], header=0)
    return df.iloc[:, 1:10].to_numpy(float), df.iloc[:, 10].to_numpy()


def _vehicles(paths):
    import pandas as pd

    df = pd.read_csv(paths[0], sep=r"\s+", header=None)
    return df.iloc[:, :18].to_numpy(float), df.iloc[:, 18].astype(str).str.strip().to_numpy()


_AUSTRALIAN_ROW2 = (22.67, 7.0, 0.165)


def _credit(paths):
    data = np.loadtxt(paths[0])
    X, y = data[:, :14], data[:, 14].astype(int)
    row = (X[1, 1], X[1, 2], X[1, 6])
    if not (np.allclose(row, _AUSTRALIAN_ROW2) and y[1] == 1):
        raise ValueError(f"{paths[0]}: row 2 is not the known mislabelled applicant {_AUSTRALIAN_ROW2}")
    y = y.copy()
    y[1] = 0
    return X, y


def _ionosphere(paths):
    import pandas as pd

    df = pd.read_csv(paths[0], header=0)
    return df.iloc[:, :34].to_numpy(float), df.iloc[:, 34].astype(str).to_numpy()


def _usps(paths):
    parts = [np.loadtxt(p) for p in paths]  # numpy reads .gz transparently
    data = np.vstack(parts)
    return data[:, 1:], data[:, 0].astype(int)


def _isolet(paths):
    from scipy.io import loadmat

    mat = loadmat(paths[0])
    return np.asarray(mat["fea"], float), np.asarray(mat["gnd"]).ravel().astype(int)


def _idx(path, magic):
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    found = int.from_bytes(raw[:4], "big")
    if found != magic:
        raise ValueError(f"{path}: not an IDX file with magic {magic} (found {found})")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: {data.size} values, expected {dims}")
    return data.reshape(dims)


def _mnist(paths):
    images = _idx(paths[0], 2051).reshape(-1, 28 * 28).astype(float)
    labels = _idx(paths[1], 2049).astype(int)
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{paths[0]} and {paths[1]}: {images.shape[0]} images, {labels.shape[0]} labels")
    return images, labels


def _sklearn(loader_name):
    def parse(paths):
        import sklearn.datasets

        return getattr(sklearn.datasets, loader_name)(return_X_y=True)

    return parse


UCI_DATASETS: dict[str, UciDataset] = {
    d.name: d
    for d in [
        UciDataset("wine", (), _sklearn("load_wine"), True, "scikit-learn"),
        UciDataset("iris", (), _sklearn("load_iris"), True, "scikit-learn"),
        UciDataset("glass", ("glass/glass.data",), _glass, True),
        UciDataset("vehicles", ("vehicles/vehicle.dat",), _vehicles, True),
        UciDataset("credit", ("credit/australian.dat",), _credit, True,
                   "Statlog Australian, row-2 label corrected"),
        UciDataset("ionosphere", ("ionosphere/ionosphere.data",), _ionosphere, True),
        UciDataset("isolet", ("isolet/isolet.mat",), _isolet, False,
                   "ISOLET1 subset only (1,560 of 7,797 samples)"),
        UciDataset("usps", ("usps/zip.train.gz", "usps/zip.test.gz"), _usps, False),
        UciDataset("mnist", ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"),
                   _mnist, False, "MNIST test set only (10,000 samples)"),
        UciDataset("digits", (), _sklearn("load_digits"), False, "scikit-learn 8x8 digits"),
    ]
}


def raw_files(name: str) -> tuple[str, ...]:
    """Manifest paths of the raw files of data set ``name``."""
    try:
        return UCI_DATASETS[name].files
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(UCI_DATASETS)}") from None


def load_dataset(name: str, paths=()) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of data set ``name`` from its raw files ``paths`` (in :func:`raw_files` order).

    Labels are returned as given by the file (integers or strings); the
    features as a float64 array. A file that does not parse, or non-finite
    values, raise an error naming the file.
    """
    files = raw_files(name)
    paths = [Path(p) for p in paths]
    if len(paths) != len(files):
        raise ValueError(f"{name}: expected {len(files)} files ({', '.join(files)}), got {len(paths)}")
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"{name}: {p} does not exist")
    try:
        X, y = UCI_DATASETS[name].parse([os.fspath(p) for p in paths])
    except (ValueError, IndexError, KeyError, OSError) as exc:
        where = ", ".join(map(str, paths)) or "scikit-learn"
        raise ValueError(f"{name}: cannot parse {where}: {exc}") from exc
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if not np.isfinite(X).all():
        raise ValueError(f"{name}: non-finite values in {', '.join(map(str, paths))}")
    return X, y
