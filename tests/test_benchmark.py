"""The fast implementations equal the straightforward ones; the suite runs and writes its table."""

import numpy as np
import ot
import pandas as pd
import pytest
from sklearn.neighbors import KNeighborsClassifier

from otfs.adaptation import CORAL, SubspaceAlignment, TransferComponentAnalysis
from otfs.benchmark import reference
from otfs.benchmark.cases import office_like
from otfs.benchmark.harness import aligned_relative_difference, relative_difference
from otfs.benchmark.suite import main, run_suite
from otfs.classification import accuracy_curve, nested_one_nn_accuracies
from otfs.preprocessing import zscore
from otfs.ranking import descending_order, feature_coupling_diagonal, rank_features


@pytest.mark.parametrize("shape", [(30, 45, 80), (60, 70, 12), (25, 40, 25)])
@pytest.mark.parametrize("reg", [1.0, 0.3])
def test_low_rank_coral_equals_sqrtm(shape, reg):
    # n < d (the Gram route), n > d (the covariance route) and n = d
    Xs, ys, Xt, _ = office_like(*shape, seed=3)
    fast = CORAL(reg=reg).fit_transform(Xs, ys, Xt)
    dense = reference.coral(Xs, Xt, reg=reg)
    assert relative_difference(fast, dense) < 1e-9


def test_coral_handles_duplicate_samples():
    # a rank-deficient source (duplicated rows) has exact null directions
    Xs, ys, Xt, _ = office_like(20, 30, 50, seed=4)
    Xs = np.vstack([Xs, Xs])
    fast = CORAL().fit_transform(Xs, np.r_[ys, ys], Xt)
    assert relative_difference(fast, reference.coral(Xs, Xt)) < 1e-9


@pytest.mark.parametrize("shape", [(40, 60, 30), (40, 60, 150)])
def test_tca_equals_the_released_codes_dense_version(shape):
    Xs, ys, Xt, _ = office_like(*shape, seed=5)
    fast = TransferComponentAnalysis(n_components=10).fit_transform(Xs, ys, Xt)
    dense = reference.tca(Xs, Xt, n_components=10)
    assert fast[0].shape == dense[0].shape == (shape[0], 10)
    assert aligned_relative_difference(fast, dense) < 1e-8


@pytest.mark.parametrize("n_source", [30, 120])
def test_subspace_alignment_equals_sklearn_pca(n_source):
    # 30 source samples and 30 components: the last direction lies in the
    # null space of the centred samples, where the SVD fallback is taken
    Xs, ys, Xt, _ = office_like(n_source, 90, 60, seed=6)
    fast = SubspaceAlignment(n_components=30).fit_transform(Xs, ys, Xt)
    dense = reference.subspace_alignment(Xs, Xt, n_components=30)
    assert relative_difference(fast, dense) < 1e-8  # same signs as scikit-learn


def test_nested_accuracies_equal_a_fresh_classifier_with_ties():
    # Binary features make many exact distance ties; the lowest source index wins in both.
    rng = np.random.RandomState(0)
    Xs = rng.randint(0, 2, (60, 40)).astype(float)
    Xt = rng.randint(0, 2, (90, 40)).astype(float)
    ys, yt = rng.randint(1, 4, 60), rng.randint(1, 4, 90)
    order = rng.permutation(40)
    counts = [40, 1, 2, 5, 10, 20, 3]
    fast = nested_one_nn_accuracies(Xs, ys, Xt, yt, order, counts)
    slow = reference.na_curve(Xs, ys, Xt, yt, order, counts)
    assert fast == slow
    assert len(set(fast)) > 2


def test_accuracy_curve_without_adaptation_uses_the_nested_path():
    Xs, ys, Xt, yt = office_like(50, 70, 32, seed=1)
    orders = {"a": np.arange(32), "b": np.arange(32)[::-1]}
    rows = accuracy_curve(Xs, ys, Xt, yt, orders, [1, 8, 32])
    for r in rows:
        cols = orders[r["order"]][: r["n_features"]]
        knn = KNeighborsClassifier(1).fit(Xs[:, cols], ys)
        assert r["accuracy"] == 100.0 * np.mean(knn.predict(Xt[:, cols]) == yt)
        assert r["seconds"] == 0.0


@pytest.mark.parametrize("norm", ["log", "median", "max", "none"])
@pytest.mark.parametrize("max_iter", [1000, 3])
def test_in_place_sinkhorn_equals_pot(norm, max_iter):
    rng = np.random.RandomState(2)
    Su, Tu = rng.randn(25, 60), rng.randn(25, 60) + rng.randn(60)
    fast, n_iter = feature_coupling_diagonal(Su, Tu, norm=norm, max_iter=max_iter, return_n_iter=True)
    Fs, Ft = zscore(Su.T, axis=0), zscore(Tu.T, axis=0)
    C = ot.dist(Fs, Ft, metric="sqeuclidean")
    if norm != "none":
        C = ot.utils.cost_normalization(C, norm)
    w = ot.unif(60)
    G, log = ot.sinkhorn(w, w, C, 1.0, method="sinkhorn", numItermax=max_iter, stopThr=1e-8,
                         warn=False, log=True)
    assert n_iter == log["niter"]
    assert relative_difference(fast, np.diag(G)) < 1e-12
    assert np.array_equal(descending_order(fast), descending_order(np.diag(G)))


def test_ranking_matches_pots_domain_adaptation_classes():
    Xs, _, Xt, _ = office_like(30, 50, 40, seed=8)
    fast = rank_features(Xs, Xt).scores
    slow = reference.rank(Xs, Xt)  # POT's default Sinkhorn solver (log domain)
    assert np.array_equal(descending_order(fast), descending_order(slow))
    assert relative_difference(fast, slow) < 1e-6


def test_quick_suite_every_case_equal():
    df = run_suite("quick", repeats=1, log=lambda *_: None)
    assert len(df) == 11
    bad = df.loc[~(df["difference"] <= df["tolerance"]), ["case", "difference", "note"]]
    assert bad.empty, bad.to_string()
    assert (df["otfs_s"] > 0).all() and (df["reference_peak_mb"] >= 0).all()


def test_suite_command_writes_table_figure_and_provenance(tmp_path, capsys):
    rc = main(["--quick", "--out", str(tmp_path), "--only", "CORAL", "NA curve SURF",
               "--order-check", "--repeats", "1"])
    assert rc == 0
    df = pd.read_csv(tmp_path / "benchmarks.csv")
    assert list(df["case"]) == ["CORAL", "NA curve SURF"]
    assert {"otfs_s", "reference_s", "ratio", "otfs_peak_mb", "difference", "met"} <= set(df.columns)
    assert "| CORAL |" in (tmp_path / "benchmarks.md").read_text()
    assert (tmp_path / "benchmarks.png").stat().st_size > 0
    assert "numpy" in (tmp_path / "provenance.json").read_text()
    assert "| CORAL |" in capsys.readouterr().out
