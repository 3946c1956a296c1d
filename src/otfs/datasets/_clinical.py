"""The clinical experiment of the paper (section 5.2), on voxel tables.

The paper's second experiment adapts a prostate-cancer voxel classifier from
49 multiparametric MRI exams of a 1.5T scanner (source) to 41 exams of a 3T
scanner (target): 95 handcrafted features per voxel, labels Cancer / Non
cancer (about 86% Non cancer). Those exams are not public. This module holds

* :func:`make_clinical_data`, a seeded generator of voxel tables with the
  same structure, documented below, in which a few *planted* features are
  shifted between the scanners;
* :func:`read_voxel_table` / :func:`write_voxel_table`, so that a user's own
  voxels (HDF5 or CSV with the columns ``exam``, ``domain``, ``label`` and
  the features) go through the same pipeline;
* the protocol's sampling steps (:func:`sample_source_voxels`,
  :func:`sample_target_voxels`) and its classifier (:func:`svm_auc`).

The generator
-------------
Each voxel ``i`` of exam ``e`` with label ``y`` (1 = Cancer) has features::

    x_i = s_e * y * delta + L z_i + b_e + eps_i,
    z_i ~ N(0, I_k),  eps_i ~ N(0, I),  b_e ~ N(0, exam_sd^2 I),  log s_e ~ N(0, 0.2^2)

``delta`` is the class signal: ``n_informative`` features get a weak
effect (``U(0.1, 0.3)`` with a random sign), the others none.
``L z`` correlates the features as handcrafted descriptors are; ``b_e`` and
``s_e`` make exams differ in offset and lesion contrast. The source and the
target draw from the same model, except the ``n_shifted`` planted features
(chosen among the informative ones): in the source they carry a strong
signal (``shifted_effect``, the most discriminant features there); in the
target their signal is multiplied by ``-target_effect_ratio`` (inverted,
weaker) and the feature is passed through ``exp(skew * u)``, which changes
its distribution's shape (right-skewed, as the 3T feature of the paper's
Figure 3) and not only its mean. A classifier trained on the source leans on
the planted features and fails on the target; without them it transfers.
Class and domain sizes are the paper's Table 4 counts times ``scale``.

References
----------
L. Gautheron, I. Redko, C. Lartizien. Feature Selection for Unsupervised
Domain Adaptation using Optimal Transport. ECML PKDD 2018, section 5.2,
Table 4 and Figures 3-4.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import h5py
import numpy as np

from otfs._checks import check_random_state

if TYPE_CHECKING:
    import pandas as pd

# pandas and scikit-learn are imported by the functions that use them: the
# workflow imports this module when it is parsed (voxel_table_width), and
# every Snakemake process (a dry run, each cluster job step) parses it.

__all__ = [
    "CLASS_NAMES",
    "EXAMS",
    "TABLE4",
    "VoxelTable",
    "VoxelTableError",
    "make_clinical_data",
    "read_voxel_table",
    "voxel_table_width",
    "sample_source_voxels",
    "sample_target_voxels",
    "svm_auc",
    "write_voxel_table",
]

#: Label 0 and label 1.
CLASS_NAMES = ("Non cancer", "Cancer")
#: Voxels per domain and class in the paper's Table 4.
TABLE4 = {
    "1.5T": {"Non cancer": 363_222, "Cancer": 56_126},
    "3T": {"Non cancer": 846_556, "Cancer": 140_840},
}
#: Exams per domain (section 5.2).
EXAMS = {"1.5T": 49, "3T": 41}
VOXEL_FORMAT = "otfs-voxel-table/1"


class VoxelTableError(ValueError):
    """A voxel table is missing, malformed or unusable."""


@dataclass(frozen=True)
class VoxelTable:
    """Voxels of one or more domains.

    Attributes
    ----------
    X : ndarray of shape (n, d)
        Features.
    label : ndarray of shape (n,)
        1 for Cancer, 0 for Non cancer.
    domain, exam : ndarray of str, shape (n,)
    feature_names : list of str
    meta : dict
        How the table was made (for synthetic data: the generator's
        parameters and the planted ``shifted_features``).
    """

    X: np.ndarray
    label: np.ndarray
    domain: np.ndarray
    exam: np.ndarray
    feature_names: list
    meta: dict = field(default_factory=dict)

    def in_domain(self, name: str) -> np.ndarray:
        """Indices of the voxels of domain ``name``."""
        idx = np.flatnonzero(self.domain == name)
        if idx.size == 0:
            raise VoxelTableError(f"no voxel of domain {name!r} (domains: {sorted(set(self.domain))})")
        return idx

    def counts(self) -> pd.DataFrame:
        """Voxels and exams per domain and class (Table 4's layout)."""
        import pandas as pd

        df = pd.DataFrame({"domain": self.domain, "label": self.label, "exam": self.exam})
        rows = []
        for dom in dict.fromkeys(self.domain):
            part = df[df["domain"] == dom]
            for lab, name in enumerate(CLASS_NAMES):
                rows.append({"domain": dom, "class": name, "voxels": int((part["label"] == lab).sum()),
                             "exams": int(part["exam"].nunique())})
        return pd.DataFrame(rows)


def _scaled(total: int, scale: float) -> int:
    return max(1, int(round(total * scale)))


def make_clinical_data(
    *,
    scale: float = 0.025,
    n_features: int = 95,
    n_shifted: int = 3,
    n_informative: int = 60,
    informative_effect: tuple[float, float] = (0.1, 0.3),
    shifted_effect: float = 2.0,
    target_effect_ratio: float = 0.5,
    skew: float = 1.0,
    n_latent: int = 8,
    exam_sd: float = 0.3,
    source: str = "1.5T",
    target: str = "3T",
    random_state=0,
) -> VoxelTable:
    """Generate a voxel table shaped like the paper's clinical data.

    Parameters
    ----------
    scale : float
        Voxels per domain and class are the paper's Table 4 counts times
        ``scale`` (0.025 gives 10,484 source and 24,685 target voxels).
    n_features : int
        Features per voxel (95 in the paper).
    n_shifted : int
        Planted features shifted between the domains (3, as Figure 4 finds).
    n_informative : int
        Features with class signal, the planted ones included.
    informative_effect : (float, float)
        Range of the class effect of the informative features (random sign).
    shifted_effect : float
        Class effect of the planted features in the source.
    target_effect_ratio : float
        In the target the planted features' class effect is
        ``-target_effect_ratio * shifted_effect``: inverted and weaker.
    skew : float
        Shape change of the planted features in the target: ``exp(skew * u)``.
    n_latent : int
        Latent factors correlating the features.
    exam_sd : float
        Standard deviation of the per-exam feature offsets.
    source, target : str
        Domain names (the paper's scanners).
    random_state : int, RandomState instance or None

    Returns
    -------
    VoxelTable
        Source voxels first, then target voxels; ``meta["shifted_features"]``
        lists the planted features' indices.

    References
    ----------
    Gautheron, Redko & Lartizien, ECML PKDD 2018, section 5.2.
    """
    if not 0 <= n_shifted <= n_informative <= n_features:
        raise ValueError(f"need 0 <= n_shifted ({n_shifted}) <= n_informative ({n_informative}) "
                         f"<= n_features ({n_features})")
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    rng = check_random_state(random_state)
    informative = np.sort(rng.choice(n_features, size=n_informative, replace=False))
    shifted = np.sort(rng.choice(informative, size=n_shifted, replace=False))
    delta = np.zeros(n_features)
    delta[informative] = rng.choice([-1.0, 1.0], size=n_informative) * rng.uniform(*informative_effect, n_informative)
    delta[shifted] = np.sign(delta[shifted]) * shifted_effect
    loadings = rng.normal(0.0, 0.5, size=(n_features, n_latent))

    blocks = []
    for dom, table_dom in ((source, "1.5T"), (target, "3T")):
        n_exams = EXAMS[table_dom]
        weights = rng.dirichlet(np.full(n_exams, 5.0))
        for lab, cname in enumerate(CLASS_NAMES):
            n = _scaled(TABLE4[table_dom][cname], scale)
            if n < n_exams:
                raise ValueError(f"scale {scale} leaves {n} {cname} voxels for {n_exams} exams of {dom}")
            per_exam = 1 + rng.multinomial(n - n_exams, weights)
            blocks.append((dom, lab, per_exam))

    exam_offsets = {}
    exam_contrast = {}
    Xs, labels, domains, exams = [], [], [], []
    for dom, lab, per_exam in blocks:
        for e, n in enumerate(per_exam):
            key = (dom, e)
            if key not in exam_offsets:
                exam_offsets[key] = rng.normal(0.0, exam_sd, n_features)
                exam_contrast[key] = float(np.exp(rng.normal(0.0, 0.2)))
            effect = exam_contrast[key] * lab * delta
            u = effect + rng.standard_normal((n, n_latent)) @ loadings.T + exam_offsets[key] \
                + rng.standard_normal((n, n_features))
            if dom == target and n_shifted:
                # inverted, weaker signal, then a change of shape
                v = u[:, shifted] - effect[shifted] * (1.0 + target_effect_ratio)
                u[:, shifted] = np.exp(skew * v)
            Xs.append(u)
            labels.append(np.full(n, lab, dtype=np.int8))
            domains.append(np.full(n, dom, dtype=object))
            exams.append(np.full(n, f"{dom}-{e + 1:02d}", dtype=object))
    meta = {
        "generator": "otfs.datasets.make_clinical_data",
        "params": {
            "scale": scale, "n_features": n_features, "n_shifted": n_shifted, "n_informative": n_informative,
            "informative_effect": list(informative_effect), "shifted_effect": shifted_effect,
            "target_effect_ratio": target_effect_ratio, "skew": skew,
            "n_latent": n_latent, "exam_sd": exam_sd, "source": source, "target": target,
            "random_state": random_state if isinstance(random_state, (int, type(None))) else "RandomState",
        },
        "shifted_features": shifted.tolist(),
        "informative_features": informative.tolist(),
        "source": source,
        "target": target,
    }
    return VoxelTable(
        X=np.concatenate(Xs).astype(np.float64),
        label=np.concatenate(labels),
        domain=np.concatenate(domains).astype(str),
        exam=np.concatenate(exams).astype(str),
        feature_names=[f"f{j + 1:02d}" for j in range(n_features)],
        meta=meta,
    )


# --- reading and writing ----------------------------------------------------------


def write_voxel_table(path: str | os.PathLike, table: VoxelTable) -> None:
    """Write ``table`` to HDF5 at ``path`` (datasets X, label, domain, exam).

    The file is written in place; the pipeline writes to a temporary name and
    renames it (``otfs_workflow.io.atomic_path``).
    """
    with h5py.File(path, "w") as h5:
        h5.attrs["format"] = VOXEL_FORMAT
        h5.attrs["feature_names"] = json.dumps(list(table.feature_names))
        h5.attrs["meta"] = json.dumps(table.meta, sort_keys=True)
        h5.create_dataset("X", data=table.X.astype(np.float32), track_times=False)
        h5.create_dataset("label", data=table.label.astype(np.int8), track_times=False)
        for name in ("domain", "exam"):
            h5.create_dataset(name, data=getattr(table, name).astype(object), dtype=h5py.string_dtype(),
                              track_times=False)


_LABELS = {"0": 0, "1": 1, "non cancer": 0, "cancer": 1}


_ID_COLUMNS = ("exam", "domain", "label")


def _empty_cells(values) -> np.ndarray:
    """Mask of the missing or blank cells of a column."""
    import pandas as pd

    series = pd.Series(values)
    return (series.isna() | (series.astype(str).str.strip() == "")).to_numpy()


def _check_id_columns(columns: Mapping, source, first_line: int) -> None:
    """Every ``exam``, ``domain`` and ``label`` cell is filled; else an error naming the column and line."""
    for name in _ID_COLUMNS:
        empty = _empty_cells(columns[name])
        if empty.any():
            first = int(np.flatnonzero(empty)[0])
            where = f"line {first + first_line}" if first_line else f"row {first}"
            raise VoxelTableError(f"{source}: column {name!r} has {int(empty.sum())} empty cell(s), the first at "
                                  f"{where}; every voxel needs an exam, a domain and a label")


def voxel_table_width(path: str | os.PathLike) -> int:
    """Number of feature columns of a voxel table, read from its header (no data loaded)."""
    path = Path(path)
    if path.suffix.lower() in (".h5", ".hdf5"):
        try:
            with h5py.File(path, "r") as h5:
                if "X" not in h5 or h5["X"].ndim != 2:
                    raise VoxelTableError(f"{path}: no 2-D dataset 'X'")
                return int(h5["X"].shape[1])
        except OSError as exc:
            raise VoxelTableError(f"{path}: not a readable HDF5 file ({exc})") from exc
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    with open(path, encoding="utf-8", errors="replace") as fh:
        header = fh.readline()
    if not header.strip():
        raise VoxelTableError(f"{path}: empty file: a voxel table has a header line (exam, domain, label, then "
                              "one column per feature) and one line per voxel")
    return len([c for c in header.rstrip("\r\n").split(sep) if c.strip() not in _ID_COLUMNS])


def _labels(values, source) -> np.ndarray:
    import pandas as pd

    text = pd.Series(values).astype(str).str.strip().str.lower()
    bad = sorted(set(text) - set(_LABELS))
    if bad:
        raise VoxelTableError(f"{source}: column 'label' has values {bad[:5]}; use 0/1 or 'Non cancer'/'Cancer'")
    return text.map(_LABELS).to_numpy(dtype=np.int8)


def read_voxel_table(path: str | os.PathLike, domains: Sequence[str] | None = None) -> VoxelTable:
    """Read a voxel table from HDF5 (as written by :func:`write_voxel_table`) or CSV/TSV.

    A CSV or TSV file has the columns ``exam``, ``domain`` and ``label``
    (0/1, or ``Non cancer``/``Cancer``); every other column is a feature.

    Raises
    ------
    VoxelTableError
        Missing file or column, non-numeric or missing feature values, a
        domain of ``domains`` absent or without both classes. The message
        names the file and the column.
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise VoxelTableError(f"{path}: voxel table not found")
    if path.suffix.lower() in (".h5", ".hdf5"):
        try:
            with h5py.File(path, "r") as h5:
                missing = [k for k in ("X", "label", "domain", "exam") if k not in h5]
                if missing:
                    raise VoxelTableError(f"{path}: missing dataset(s) {missing}")
                X = h5["X"][()].astype(np.float64)
                raw_label = h5["label"][()]
                domain = h5["domain"].asstr()[()].astype(str)
                exam = h5["exam"].asstr()[()].astype(str)
                _check_id_columns({"exam": exam, "domain": domain,
                                   "label": raw_label.astype(str) if raw_label.dtype.kind in "SUO" else raw_label},
                                  f"{path}", first_line=0)
                label = _labels(raw_label, path)
                names = json.loads(h5.attrs.get("feature_names", "[]")) or [f"f{j + 1:02d}" for j in range(X.shape[1])]
                meta = json.loads(h5.attrs.get("meta", "{}"))
        except OSError as exc:
            raise VoxelTableError(f"{path}: not a readable HDF5 file ({exc})") from exc
    elif path.suffix.lower() in (".csv", ".tsv", ".txt"):
        sep = "\t" if path.suffix.lower() == ".tsv" else ","
        try:
            # only an empty cell is missing: "NA" may name an exam or a domain
            df = pd.read_csv(path, sep=sep, keep_default_na=False, na_values=[""])
        except pd.errors.EmptyDataError:
            raise VoxelTableError(f"{path}: empty file: a voxel table has a header line (exam, domain, label, "
                                  "then one column per feature) and one line per voxel") from None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise VoxelTableError(f"{path}: cannot parse ({exc})") from exc
        missing = [c for c in _ID_COLUMNS if c not in df.columns]
        if missing:
            raise VoxelTableError(f"{path}: missing column(s) {missing}; has {list(df.columns)[:10]}")
        names = [c for c in df.columns if c not in _ID_COLUMNS]
        if not names:
            raise VoxelTableError(f"{path}: no feature column")
        if df.empty:
            raise VoxelTableError(f"{path}: no voxel: the file has a header line and no data line")
        _check_id_columns(df, path, first_line=2)  # line 1 is the header
        feats = df[names]
        non_numeric = [c for c in names if not pd.api.types.is_numeric_dtype(feats[c])]
        if non_numeric:
            raise VoxelTableError(f"{path}: non-numeric feature column(s) {non_numeric[:5]}")
        X = feats.to_numpy(dtype=np.float64)
        label = _labels(df["label"], path)
        domain = df["domain"].astype(str).to_numpy()
        exam = df["exam"].astype(str).to_numpy()
        meta = {"source_file": path.name}
    else:
        raise VoxelTableError(f"{path}: unknown voxel table format (use .h5, .hdf5, .csv or .tsv)")
    if X.ndim != 2 or X.shape[0] != label.shape[0]:
        raise VoxelTableError(f"{path}: X has shape {X.shape} for {label.shape[0]} labels")
    bad = ~np.isfinite(X)
    if bad.any():
        cols = [names[j] for j in np.flatnonzero(bad.any(axis=0))[:5]]
        first = int(np.flatnonzero(bad.any(axis=1))[0])
        where = f"line {first + 2}" if path.suffix.lower() in (".csv", ".tsv", ".txt") else f"row {first}"
        raise VoxelTableError(f"{path}: {int(bad.any(axis=1).sum())} voxels have empty, NaN or infinite "
                              f"values, in column(s) {cols}, the first at {where}")
    table = VoxelTable(X=X, label=label, domain=domain, exam=exam, feature_names=list(names), meta=meta)
    for dom in domains or ():
        idx = np.flatnonzero(domain == dom)
        if idx.size == 0:
            raise VoxelTableError(f"{path}: no voxel of domain {dom!r} (column 'domain' has "
                                  f"{sorted(set(domain))[:10]})")
        present = set(label[idx].tolist())
        if present != {0, 1}:
            lacking = [CLASS_NAMES[k] for k in (0, 1) if k not in present]
            raise VoxelTableError(f"{path}: domain {dom!r} has no {' / '.join(lacking)} voxel")
    return table


# --- the protocol -------------------------------------------------------------------


def sample_source_voxels(label, exam, n: int = 1500, random_state=None) -> np.ndarray:
    """``n`` voxels, half of each class, spread as evenly as possible over exams.

    For each class, exams are visited in a random order, round after round,
    each giving one voxel drawn without replacement until it runs out; so
    every exam contributes the same number of voxels of a class, give or
    take one, unless it has fewer.

    Returns sorted indices into ``label``.
    """
    label = np.asarray(label)
    exam = np.asarray(exam)
    rng = check_random_state(random_state)
    chosen = []
    for lab, quota in ((0, n // 2), (1, n - n // 2)):
        idx = np.flatnonzero(label == lab)
        if idx.size < quota:
            raise VoxelTableError(f"{quota} {CLASS_NAMES[lab]} voxels wanted, {idx.size} available")
        pools = {}
        for e in np.unique(exam[idx]):
            members = idx[exam[idx] == e]
            pools[e] = list(rng.permutation(members))
        order = list(rng.permutation(sorted(pools)))
        taken = 0
        while taken < quota:
            for e in order:
                if pools[e] and taken < quota:
                    chosen.append(pools[e].pop())
                    taken += 1
            order = [e for e in order if pools[e]]
    return np.sort(np.asarray(chosen, dtype=np.intp))


def sample_target_voxels(n_available: int, n: int = 20000, random_state=None) -> np.ndarray:
    """``min(n, n_available)`` target voxels drawn without replacement, sorted."""
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n_available, size=min(n, n_available), replace=False))


def svm_auc(Xs, ys, Xt, yt, C: float = 1.0, max_iter: int = 10_000) -> float:
    """Train a linear SVM on the source, return its ROC AUC on the target.

    The SVM is scikit-learn's ``LinearSVC`` (liblinear, primal problem, so no
    random state is involved) with ``C``; the AUC uses its decision function.
    """
    from sklearn.metrics import roc_auc_score
    from sklearn.svm import LinearSVC

    clf = LinearSVC(C=C, dual=False, max_iter=max_iter)
    clf.fit(Xs, ys)
    return float(roc_auc_score(yt, clf.decision_function(Xt)))


def shifted_detection(scores_per_iteration: Sequence[Sequence[float]], planted: Sequence[int]) -> dict:
    """How often the planted features are exactly the lowest-scored ones."""
    planted = set(int(j) for j in planted)
    k = len(planted)
    hits = []
    for scores in scores_per_iteration:
        lowest = set(np.argsort(np.asarray(scores), kind="stable")[:k].tolist()) if k else set()
        hits.append(lowest == planted)
    return {"planted": sorted(planted), "repetitions": len(hits), "hits": int(sum(hits)),
            "rate": float(np.mean(hits)) if hits else float("nan")}


def summarise_counts(table: VoxelTable, paper: Mapping = TABLE4) -> pd.DataFrame:
    """Table 4: voxels per class and domain here, beside the paper's counts."""
    counts = table.counts()
    src, tgt = table.meta.get("source"), table.meta.get("target")
    names = {src: "1.5T", tgt: "3T"}
    counts["paper_voxels"] = [paper.get(names.get(d, d), {}).get(c, np.nan)
                              for d, c in zip(counts["domain"], counts["class"], strict=True)]
    return counts
