"""``corn-nir``: near-infrared spectra of 80 corn samples on three instruments (calibration transfer).

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from otfs.datasets._readers import DATASET_READERS, check_param
from otfs.datasets._shift import ShiftFileError, ShiftReader, read_mat

INSTRUMENTS = ("m5", "mp5", "mp6")
#: The four responses, the columns of ``Y``.
RESPONSES = ("moisture", "oil", "protein", "starch")
#: The 700 wavelengths in nm, 1100 to 2498 every 2 nm (Eigenvector Research's description of the data).
WAVELENGTHS = tuple(range(1100, 2500, 2))


@dataclass(frozen=True)
class RegressionFeatures:
    """What a regression reader returns for one domain: features, a real-valued response, names."""

    X: np.ndarray
    y: np.ndarray
    response: str
    feature_names: tuple = field(default_factory=tuple)
    info: dict = field(default_factory=dict)

    def check(self, where: str) -> RegressionFeatures:
        """The same, validated: a finite 2-D float matrix and one finite response per row."""
        X = np.asarray(self.X, dtype=np.float64)
        y = np.asarray(self.y, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] == 0:
            raise ValueError(f"{where}: the features must be a 2-D matrix of 2 or more rows, got {X.shape}")
        if y.shape != (X.shape[0],):
            raise ValueError(f"{where}: {y.shape} responses for {X.shape[0]} samples")
        if not (np.isfinite(X).all() and np.isfinite(y).all()):
            raise ValueError(f"{where}: features or responses are NaN or infinite")
        return RegressionFeatures(X, y, self.response, tuple(self.feature_names), dict(self.info))


@DATASET_READERS.register("corn-nir")
class CornNIR(ShiftReader):
    """The corn NIR spectra of Eigenvector Research: 80 samples, 700 wavelengths, three instruments as domains.

    The same 80 corn samples were measured on three spectrometers (``m5``,
    ``mp5``, ``mp6``: the file's ``ftAll`` cells, 80 x 700 absorbances,
    1100-2498 nm every 2 nm), with four reference values per sample
    (``Y``: moisture, oil, protein, starch, in %). Transferring a
    calibration from one instrument to another is the textbook case of
    feature (wavelength) selection under shift. The task is a regression
    of ``response``: :meth:`read` returns :class:`RegressionFeatures`, not
    class labels, so this family has no place in the benchmark's
    classification grid (its feature cache refuses it by name); its metric
    is the RMSE. The file's ``trList`` (50 indices per response, from the
    repository the file comes from) is not used.

    Parameters
    ----------
    response : one of :data:`RESPONSES`, default="moisture"

    References
    ----------
    .. [1] Eigenvector Research. Corn data set (NIR spectra of 80 corn samples on three instruments).
    .. [2] J. S. Shenk, M. O. Westerhaus. New standardization and calibration procedures for NIRS analytical
       systems. Crop Science 31(6), 1991 (calibration transfer).
    """

    family = "corn-nir"
    domain_files = {i: ["cornData.mat"] for i in INSTRUMENTS}
    n_features = len(WAVELENGTHS)
    problem = "regression"

    def __init__(self, response="moisture"):
        check_param("response", response, str, choices=list(RESPONSES))
        self.response = response

    def read(self, domain, paths, manifest):
        self._check_domain(domain)
        path = self._path(paths, domain)
        mat = read_mat(path, ["ftAll", "Y"])
        cells, Y = mat["ftAll"], np.asarray(mat["Y"], dtype=np.float64)
        if cells.shape != (1, len(INSTRUMENTS)) or Y.shape[1:] != (len(RESPONSES),):
            raise ShiftFileError(f"{path}: ftAll {cells.shape} and Y {Y.shape}, expected 1 x 3 cells and n x 4")
        X = np.asarray(cells[0, INSTRUMENTS.index(domain)], dtype=np.float64)
        if X.shape != (Y.shape[0], self.n_features):
            raise ShiftFileError(f"{path}: ftAll{{{INSTRUMENTS.index(domain) + 1}}} ({domain}) is {X.shape}, "
                                 f"expected {Y.shape[0]} x {self.n_features}")
        y = Y[:, RESPONSES.index(self.response)]
        return RegressionFeatures(X, y, self.response, tuple(f"{w}nm" for w in WAVELENGTHS),
                                  {"instrument": domain})
