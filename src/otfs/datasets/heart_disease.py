"""``heart-disease``: heart disease (yes or no) in four hospitals, with the hospitals' own missing values.

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DomainFeatures, check_param
from otfs.datasets._shift import ShiftFileError, ShiftReader, read_numeric_table

#: The 13 features of the processed files, in column order (the UCI documentation's names).
FEATURES = ("age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak", "slope",
            "ca", "thal")
#: Features for which the files write a missing value as 0 (a serum cholesterol of 0 mg/dl: all of
#: Switzerland's and 49 of VA's).
ZERO_IS_MISSING = ("chol",)


@DATASET_READERS.register("heart-disease")
class HeartDisease(ShiftReader):
    """The UCI heart-disease data of four hospitals (Cleveland, Hungary, Switzerland, VA Long Beach) as domains.

    Each file has one patient per line, no header: the 13 features of
    :data:`FEATURES` and ``num`` (0: no disease, 1-4: disease), missing
    values written ``NaN`` (UCI's ``?``). The task is disease or not
    (``num > 0``); the hospitals differ in prevalence (46 %, 36 %, 94 % and
    75 %: strong label shift) and in what they measured.

    Missing values (the documented strategy, fitted without any label):
    a cholesterol of 0 is missing (:data:`ZERO_IS_MISSING`); each missing
    value is replaced by the median of the same feature over the observed
    values of the same hospital; a feature a hospital never measured
    (Switzerland's cholesterol) is 0 there, a constant that the per-domain
    z-score leaves at 0. ``features`` keeps a subset: the three most often
    missing (``slope``, ``ca``, ``thal``: 291 of Hungary's 294 patients lack
    ``ca``) can be left out. What was imputed is kept in the cache's notes
    (``info``: per feature, the number of values imputed and the median
    used).

    Parameters
    ----------
    features : list of str, default=all 13
        The features kept, by name, in the files' order.

    References
    ----------
    .. [1] R. Detrano et al. International application of a new probability algorithm for the diagnosis of
       coronary artery disease. American Journal of Cardiology 64(5), 1989.
    """

    family = "heart-disease"
    domain_files = {d: [f"processed.{d}.data"] for d in ("cleveland", "hungarian", "switzerland", "va")}

    def __init__(self, features=None):
        if features is not None:
            if not isinstance(features, (list, tuple)) or not features:
                raise ValueError(f"features: a non-empty list of feature names, got {features!r}")
            unknown = [f for f in features if f not in FEATURES]
            if unknown:
                raise ValueError(f"features: unknown feature(s) {unknown}; the features: {list(FEATURES)}")
            for f in features:
                check_param("features[]", f, str)
        self.features = features

    @property
    def kept(self) -> list[str]:
        return [f for f in FEATURES if self.features is None or f in self.features]

    @property
    def n_features(self) -> int:
        return len(self.kept)

    def read(self, domain, paths, manifest):
        path = self._path(paths, domain)
        table = read_numeric_table(path, len(FEATURES) + 1)
        num = table[:, -1]
        if np.isnan(num).any() or not np.all(np.isin(num, [0, 1, 2, 3, 4])):
            raise ShiftFileError(f"{path}: the last column (num) must hold 0-4 for every patient")
        X = table[:, :-1]
        for name in ZERO_IS_MISSING:
            column = FEATURES.index(name)
            X[X[:, column] == 0, column] = np.nan
        imputed = {}
        for column, name in enumerate(FEATURES):
            missing = np.isnan(X[:, column])
            if not missing.any():
                continue
            observed = X[~missing, column]
            fill = float(np.median(observed)) if observed.size else 0.0
            X[missing, column] = fill
            imputed[name] = {"imputed": int(missing.sum()), "value": fill, "observed": int(observed.size)}
        keep = [FEATURES.index(f) for f in self.kept]
        detail = {k: v for k, v in imputed.items() if k in self.kept}
        # the keys of the tabular reader's notes, which the cache stage logs; the values used beside them
        info = {"missing": "median", "impute_from": "domain (0 where the hospital observed none)",
                "imputed": {k: v["imputed"] for k, v in detail.items()}, "imputation": detail}
        return DomainFeatures(X[:, keep], np.where(num > 0, 2, 1), ["no disease", "disease"],
                              feature_names=self.kept, info=info)
