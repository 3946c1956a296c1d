"""The fast implementations equal the straightforward ones; the suite runs and writes its table."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import ot
import pandas as pd
import pytest
from sklearn.neighbors import KNeighborsClassifier

from otfs.adapters import CorrelationAlignment, LinearTransferComponentAnalysis, PCASubspaceAlignment
from otfs.classification import accuracy_curve, nested_one_nn_accuracies, one_nn_accuracy
from otfs.preprocessing import zscore
from otfs.rankers._base import descending_order, feature_coupling_diagonal, rank_features
from otfs_benchmarks import reference
from otfs_benchmarks.cases import office_like, word_counts
from otfs_benchmarks.harness import aligned_relative_difference, relative_difference
from otfs_benchmarks.suite import main

from .conftest import REPO


@pytest.mark.parametrize("shape", [(30, 45, 80), (60, 70, 12), (25, 40, 25)])
@pytest.mark.parametrize("reg", [1.0, 0.3])
def test_low_rank_coral_equals_sqrtm(shape, reg):
    # n < d (the Gram route), n > d (the covariance route) and n = d
    Xs, ys, Xt, _ = office_like(*shape, seed=3)
    fast = CorrelationAlignment(reg=reg).adapt(Xs, ys, Xt)
    dense = reference.coral(Xs, Xt, reg=reg)
    assert relative_difference(fast, dense) < 1e-9


def test_coral_handles_duplicate_samples():
    # a rank-deficient source (duplicated rows) has exact null directions
    Xs, ys, Xt, _ = office_like(20, 30, 50, seed=4)
    Xs = np.vstack([Xs, Xs])
    fast = CorrelationAlignment().adapt(Xs, np.r_[ys, ys], Xt)
    assert relative_difference(fast, reference.coral(Xs, Xt)) < 1e-9


@pytest.mark.parametrize("shape", [(40, 60, 30), (40, 60, 150)])
def test_tca_equals_the_released_codes_dense_version(shape):
    Xs, ys, Xt, _ = office_like(*shape, seed=5)
    fast = LinearTransferComponentAnalysis(n_components=10).adapt(Xs, ys, Xt)
    dense = reference.tca(Xs, Xt, n_components=10)
    assert fast[0].shape == dense[0].shape == (shape[0], 10)
    assert aligned_relative_difference(fast, dense) < 1e-8


@pytest.mark.parametrize(("shape", "auto_is"), [
    ((40, 400, 12), "arpack"),   # 12 components, n = 440: Lanczos through the features
    ((60, 500, 40), "arpack"),
    ((30, 200, 150), "dense"),   # d > n / 2: auto stays dense; forced ARPACK goes through the kernel
    ((30, 40, 10), "dense"),     # 8 m > n
])
def test_tca_lanczos_equals_the_dense_eigensolver(shape, auto_is):
    Xs, ys, Xt, _ = office_like(*shape, seed=7)
    out = {es: LinearTransferComponentAnalysis(eigen_solver=es).adapt(Xs, ys, Xt)
           for es in ("dense", "arpack", "auto")}
    # the same signs whichever solver: no alignment needed
    assert relative_difference(out["arpack"], out["dense"]) < 1e-10
    assert aligned_relative_difference(out["arpack"], reference.tca(Xs, Xt)) < 1e-8
    assert all(np.array_equal(a, b) for a, b in zip(out["auto"], out[auto_is], strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(out["arpack"], out["dense"], strict=True))


@pytest.mark.parametrize(("density", "sparse"), [(0.03, True), (0.6, False)])
def test_tca_lanczos_goes_through_sparse_word_counts(monkeypatch, density, sparse):
    """With at least 0.4 n features, auto takes ARPACK through the features as a sparse matrix where they are
    mostly zeros (4 nnz <= 0.8 n^2): the same embedding as LAPACK's dense solver and the released code's."""
    import scipy.sparse.linalg

    Xs, ys, Xt = word_counts(40, 400, 600, density, seed=11)
    nnz = np.count_nonzero(np.vstack([Xs, Xt]))
    assert (4 * nnz <= 0.8 * 440**2) == sparse
    seen, eigsh = [], scipy.sparse.linalg.eigsh

    def spy(op, *args, **kwargs):
        seen.append(op)
        return eigsh(op, *args, **kwargs)

    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", spy)
    auto = LinearTransferComponentAnalysis(n_components=12).adapt(Xs, ys, Xt)
    assert bool(seen) == sparse
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", eigsh)
    dense = LinearTransferComponentAnalysis(n_components=12, eigen_solver="dense").adapt(Xs, ys, Xt)
    assert relative_difference(auto, dense) < 1e-10
    assert aligned_relative_difference(auto, reference.tca(Xs, Xt, n_components=12)) < 1e-8
    forced = LinearTransferComponentAnalysis(n_components=12, eigen_solver="arpack").adapt(Xs, ys, Xt)
    assert relative_difference(forced, dense) < 1e-10


@pytest.mark.parametrize("case", ["sparse", "dense", "rank below k + 1"])
def test_principal_directions_of_word_counts_equal_sklearn_pca(monkeypatch, case):
    """More words than documents, mostly zeros: Lanczos on the never-formed Gram matrix, scikit-learn's exact
    PCA's directions and signs. Dense samples, or fewer independent documents than k + 1 (an arbitrary basis
    of the null space), keep LAPACK's."""
    import scipy.sparse.linalg
    from sklearn.decomposition import PCA

    from otfs.adapters._base import principal_directions

    _, _, X = word_counts(10, 300, 900, 0.6 if case == "dense" else 0.03, seed=12)
    if case == "rank below k + 1":
        X = np.vstack([X[:20]] * 15)
    seen, eigsh = [], scipy.sparse.linalg.eigsh
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", lambda *a, **k: seen.append(1) or eigsh(*a, **k))
    V = principal_directions(X, 30)
    assert bool(seen) == (case != "dense")
    ref = PCA(30, svd_solver="full").fit(X).components_.T
    if case == "rank below k + 1":  # only the 19 directions of nonzero variance are defined
        V, ref = V[:, :19], ref[:, :19]
    np.testing.assert_allclose(V, ref, rtol=0, atol=1e-10)


def test_tca_components_have_a_fixed_sign_and_arpack_failure_falls_back(monkeypatch):
    import scipy.sparse.linalg

    Xs, ys, Xt, _ = office_like(40, 400, 12, seed=8)
    tca = LinearTransferComponentAnalysis(eigen_solver="arpack")
    Zs, _ = tca.adapt(Xs, ys, Xt)
    W = tca.components_
    assert (W[np.argmax(np.abs(W), axis=0), np.arange(W.shape[1])] > 0).all()

    def no_convergence(*args, **kwargs):
        raise scipy.sparse.linalg.ArpackNoConvergence("no convergence", np.empty(0), np.empty((0, 0)))

    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", no_convergence)
    fallback, _ = LinearTransferComponentAnalysis(eigen_solver="arpack").adapt(Xs, ys, Xt)
    dense, _ = LinearTransferComponentAnalysis(eigen_solver="dense").adapt(Xs, ys, Xt)
    assert np.array_equal(fallback, dense) and not np.array_equal(Zs, dense)


def test_tca_lanczos_restarts_are_capped(monkeypatch):
    # Amazon 5,000 (books-dvd, fisher-divergence's first 312 words, rank 71 for 81 eigenpairs): with SciPy's
    # default of 10 n restarts ARPACK ran 452,186 mat-vecs (565 s) before it converged; capped, it stops and the
    # dense solver's embedding is kept (0.7 s)
    import scipy.sparse.linalg

    from otfs.adapters._base import ARPACK_MAX_RESTARTS

    seen, eigsh = [], scipy.sparse.linalg.eigsh

    def spy(*args, **kwargs):
        seen.append(kwargs.get("maxiter"))
        return eigsh(*args, **kwargs)

    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", spy)
    Xs, ys, Xt, _ = office_like(40, 400, 12, seed=8)
    LinearTransferComponentAnalysis(eigen_solver="arpack").adapt(Xs, ys, Xt)
    assert seen == [ARPACK_MAX_RESTARTS] and 1 <= ARPACK_MAX_RESTARTS <= 100


@pytest.mark.parametrize("case", ["one constant feature", "a repeated eigenvalue"])
def test_tca_lanczos_falls_back_where_the_eigenspace_is_degenerate(case):
    # heart disease's pairs at d/8 = 1 feature: a feature constant in both domains makes the matrix 0, and ARPACK
    # stopped with "starting vector is zero"; with the same samples in both domains and a constant feature, the m-th
    # eigenvalue is the repeated 0, whose eigenvectors are an arbitrary basis: LAPACK's is kept in both cases
    rng = np.random.RandomState(9)
    if case == "one constant feature":
        Xs, Xt = np.zeros((40, 1)), np.zeros((200, 1))
    else:
        Xs = rng.randn(150, 6)
        Xs[:, 2] = 1.0
        Xt = Xs.copy()
    ys = rng.randint(0, 2, len(Xs))
    out = {es: LinearTransferComponentAnalysis(eigen_solver=es).adapt(Xs, ys, Xt) for es in ("dense", "arpack")}
    assert all(np.array_equal(a, b) for a, b in zip(out["arpack"], out["dense"], strict=True))


@pytest.mark.parametrize("n_source", [30, 120])
def test_subspace_alignment_equals_sklearn_pca(n_source):
    # 30 source samples and 30 components: the last direction lies in the
    # null space of the centred samples, where the SVD fallback is taken
    Xs, ys, Xt, _ = office_like(n_source, 90, 60, seed=6)
    fast = PCASubspaceAlignment(n_components=30).adapt(Xs, ys, Xt)
    dense = reference.subspace_alignment(Xs, Xt, n_components=30)
    assert relative_difference(fast, dense) < 1e-8  # same signs as scikit-learn


@pytest.mark.subprocess
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


@pytest.mark.subprocess
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
    printed = capsys.readouterr().out
    assert "| CORAL |" in printed and "test_implementation[CORAL-skada]" in printed  # pytest-benchmark's table
    timings = json.loads((tmp_path / "pytest_benchmark.json").read_text())
    timed = {(b["extra_info"]["case"], b["extra_info"]["implementation"]): b["stats"] for b in timings["benchmarks"]}
    assert set(timed) == {("CORAL", "otfs"), ("CORAL", "reference"), ("CORAL", "skada"),
                          ("NA curve SURF", "otfs"), ("NA curve SURF", "reference")}
    assert timed["CORAL", "otfs"]["median"] == pytest.approx(df.loc[0, "otfs_s"], rel=1e-5)
    assert all(stats["rounds"] == 1 for stats in timed.values())

    # docs/performance.md's comparison of two runs, run as written (its .venv/bin is this interpreter's)
    block = re.search(r"```bash\n(\.venv/bin/pytest-benchmark compare .*?)\n```",
                      (REPO / "docs" / "performance.md").read_text(encoding="utf-8")).group(1)
    for run in ("old", "results/benchmarks"):
        (tmp_path / "runs" / run).mkdir(parents=True)
        shutil.copy(tmp_path / "pytest_benchmark.json", tmp_path / "runs" / run / "pytest_benchmark.json")
    argv = shlex.split(block)
    argv[0] = str(Path(sys.executable).parent / Path(argv[0]).name)
    proc = subprocess.run(argv, cwd=tmp_path / "runs", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "test_implementation[CORAL-otfs] (old/" in proc.stdout and "(results/benchmarks/" in proc.stdout


@pytest.mark.subprocess  # pytest-benchmark's session asks git for the commit
def test_scaling_study_fits_power_laws(tmp_path):
    from otfs_benchmarks.scaling import fit_slope, plot_scaling, run_scaling

    k, a = fit_slope([10, 100, 1000], [3e-4, 3e-2, 3.0])
    assert k == pytest.approx(2.0) and a == pytest.approx(3e-6)
    df = run_scaling(d_values=(32, 128), nt_values=(60, 120), n_source=20, n_target=40, d_fixed=16,
                     log=lambda *_: None)
    assert list(df["series"]) == ["d", "d", "n_t", "n_t"]
    assert (df["seconds"] > 0).all() and (df["peak_mb"] > 0).all() and (df["runs"] == 3).all()
    # the d x d feature coupling: 128 features need more memory than 32
    assert df["peak_mb"].iloc[1] > df["peak_mb"].iloc[0]
    slopes = plot_scaling(df, tmp_path / "scaling.pdf")
    assert {"seconds vs d", "peak_mb vs n_t"} <= set(slopes)
    assert (tmp_path / "scaling.png").stat().st_size > 0


def test_pipeline_profile_groups_benchmark_files(tmp_path):
    from otfs_workflow.time_profile import collect_benchmarks, plot_profile, summarise

    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    files = {"rank_features/surf/ot/a-b.tsv": (2.0, 150.0), "rank_features/surf/ot/b-a.tsv": (4.0, 250.0),
             "classify/surf/ot/OT3/curves/a-b.tsv": (10.0, 300.0), "clinical_rank/0.tsv": (1.0, 90.0)}
    for rel, (s, rss) in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(header + f"{s}\t0:00:0{int(s)}\t{rss}\t1\t1\t1\t0\t0\t50\t{s}\n")
    summary = summarise(collect_benchmarks(tmp_path)).set_index("group")
    assert summary.loc["rank_features", "jobs"] == 2 and summary.loc["rank_features", "total_s"] == 6.0
    assert summary.loc["rank_features", "max_rss_mb"] == 250.0
    assert summary.loc["classify OT3", "share"] == pytest.approx(10 / 17)
    assert "clinical_rank" in summary.index
    plot_profile(summary.reset_index(), tmp_path / "profile.pdf")
    (tmp_path / "rank_features" / "bad.tsv").write_text("not a benchmark\n")
    with pytest.raises(ValueError, match="bad.tsv: not a Snakemake benchmark file"):
        collect_benchmarks(tmp_path)


@pytest.mark.subprocess  # timed by a pytest-benchmark session, which asks git for the commit
def test_table3_protocol_runs_the_stage_code(tmp_path):
    from otfs_benchmarks.table3 import ADAPTERS, run

    wall, df = run(tmp_path, jobs=2, iterations=1, d=32, log=lambda *_: None)
    assert wall > 0
    assert sorted(df.loc[df["job"] == "classify", "adapter"].unique()) == sorted(ADAPTERS)
    assert len(df) == 12 + 12 * len(ADAPTERS)
    rows = pd.read_csv(tmp_path / "classification" / "TCA" / "amazon-dslr.tsv", sep="\t", keep_default_na=False)
    assert sorted(rows["n_features"]) == [4, 8, 16, 32]


@pytest.mark.subprocess  # pytest-benchmark's session asks git for the commit
def test_a_run_timed_once_is_timed_by_pytest_benchmark_in_order_and_its_error_raised(tmp_path):
    import time

    from otfs_benchmarks.timing import time_once

    calls = []

    def run(name, seconds):
        def f():
            calls.append(name)
            time.sleep(seconds)
            return name.upper()
        return f

    got = time_once({"b": run("b", 0.2), "a": run("a", 0.0)}, workdir=tmp_path, json_path=tmp_path / "t.json")
    assert calls == ["b", "a"]  # once each, in the order given: no calibration, no warm-up
    assert got["b"]["output"] == "B" and 0.2 <= got["b"]["seconds"] < 5 and got["a"]["seconds"] < 0.2
    record = json.loads((tmp_path / "t.json").read_text())
    assert {b["group"]: b["stats"]["rounds"] for b in record["benchmarks"]} == {"b": 1, "a": 1}
    assert record["benchmarks"][0]["stats"]["median"] == pytest.approx(got["b"]["seconds"], rel=1e-9)

    def fails():
        raise subprocess.CalledProcessError(3, ["snakemake"])

    with pytest.raises(subprocess.CalledProcessError) as err:
        time_once({"fails": fails}, workdir=tmp_path)
    assert err.value.returncode == 3


@pytest.mark.subprocess  # runs processes, timed by their CPU
def test_rounds_are_timed_by_the_cpu_of_the_processes_they_run(tmp_path):
    from otfs_benchmarks.timing import OncePlugin, time_rounds

    calls = []

    def run(code):
        def f():
            calls.append(code)
            subprocess.run([sys.executable, "-c", code], check=True)
            return len(calls)
        return f

    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4:\n    pass"
    idle = "import time\ntime.sleep(0.4)"
    got = time_rounds({"busy": run(busy), "idle": run(idle)}, rounds=2, warmup_rounds=1, workdir=tmp_path,
                      timer="otfs_benchmarks.timing.children_cpu_time", json_path=tmp_path / "t.json")
    assert calls == [busy] * 3 + [idle] * 3  # one untimed round, then two, in the order given
    assert got["busy"]["rounds"] == got["idle"]["rounds"] == 2 and got["busy"]["output"] == 3
    assert got["busy"]["min"] >= 0.35  # the process's CPU time ...
    assert got["idle"]["max"] < 0.3  # ... not the wall clock: a process that sleeps uses almost none
    assert got["busy"]["min"] <= got["busy"]["seconds"] <= got["busy"]["max"]
    record = json.loads((tmp_path / "t.json").read_text())
    assert {b["options"]["timer"] for b in record["benchmarks"]} == {"children_cpu_time"}  # the clock it was given
    with pytest.raises(ValueError, match="rounds must be >= 1 and warmup_rounds >= 0; got 0 and 1"):
        OncePlugin({}, rounds=0, warmup_rounds=1)


def test_plain_protocol_equals_the_library_on_real_surf(mirror):
    # The straightforward protocol (POT's ot.da classes, a fresh 1-NN per point)
    # and the library give the same accuracies on a real pair and iteration.
    from otfs.datasets import load_mat_features
    from otfs.preprocessing import apply_steps
    from otfs.rankers import feature_orders
    from otfs_benchmarks.end_to_end import plain_figure7
    from otfs_workflow.protocol import derive_seed, draw_source_subset, feature_counts

    surf = mirror / "surf"
    plain = plain_figure7(surf, iterations=1, pairs=["webcam-dslr"])
    (Xs, ys), (Xt, yt) = (load_mat_features(surf / f"{d}.mat") for d in ("webcam", "dslr"))
    Xs, Xt = apply_steps(Xs, ["row_sum_normalize", "zscore"]), apply_steps(Xt, ["row_sum_normalize", "zscore"])
    sub = draw_source_subset(ys, 20, random_state=derive_seed("surf", "webcam-dslr", 0, "source_subset"),
                             classes=range(1, 11))
    orders = feature_orders(rank_features(Xs[sub], Xt).scores,
                            random_state=derive_seed("surf", "webcam-dslr", 0, "random_order"))
    rows = accuracy_curve(Xs[sub], ys[sub], Xt, yt, orders, feature_counts(800))
    lib = {(r["order"], r["n_features"]): r["accuracy"] for r in rows}
    ref = {(r.order, r.n_features): r.accuracy for r in plain.itertuples()}
    assert lib == ref and len(lib) == 3 * 17


def test_authors_protocol_on_two_real_surf_domains(mirror):
    """The end-to-end reference (the authors' protocol, step for step): its curves have the script's points,
    and with every feature its 1-NN accuracy is the library's on the same source subset."""
    from otfs.datasets import load_mat_features
    from otfs.preprocessing import apply_steps
    from otfs_benchmarks.authors import ORDER_NAMES, run

    out = run(mirror / "surf", iterations=1, domains=("webcam", "dslr"), keep=True)
    assert out["accuracies"] == 2 * 3 * 17 and out["pairs"] == 2 and out["sinkhorn_method"]
    data = {d: load_mat_features(mirror / "surf" / f"{d}.mat") for d in ("webcam", "dslr")}
    data = {d: (apply_steps(X, ["row_sum_normalize", "zscore"]), y) for d, (X, y) in data.items()}
    full = [r for r in out["records"] if r[4] == 800]
    assert sorted({r[3] for r in full}) == sorted(ORDER_NAMES)
    for source, target, _, _, _, accuracy, subset in full:
        (Xs, ys), (Xt, yt) = data[source], data[target]
        assert len(subset) == (80 if source == "dslr" else 200)
        assert accuracy == pytest.approx(one_nn_accuracy(Xs[subset], ys[subset], Xt, yt), abs=1e-9)


def test_main_job_stage_table_and_figure(tmp_path):
    """Benchmark records grouped by stage (rules outside STAGES are "other"), drawn beside a reference."""
    from otfs_benchmarks.main_job import _jobs, plot_stages, stage_table

    # rank_pairs_<feature set>: rules named from the configuration, counted by their names' start
    records = {"rank_features/surf/ot/a-b.tsv": (0.4, 60), "rank_pairs_surf/surf/ks.tsv": (0.6, 70),
               "rank_pairsX/surf/ks.tsv": (0.5, 10), "classify/surf/ot/NA/paper/a-b.tsv": (1.0, 90),
               "classify_pairs_USPSMNIST/USPSMNIST/ks/leaderboard.tsv": (2.0, 95),
               "score_pairs_surf/surf/ks/leaderboard.tsv": (3.0, 80),
               "clinical_classify/3.tsv": (30.0, 900), "plot_figure7/surf.tsv": (4.0, 200)}
    for rel, (seconds, rss) in records.items():
        path = tmp_path / "logs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{seconds}\t0:00:01\t{rss}\t{seconds}\n")
    table = stage_table(_jobs(tmp_path / "logs")).set_index("stage")
    assert table.loc["ranking", "jobs"] == 2 and table.loc["ranking", "job_s"] == pytest.approx(1.0)
    assert table.loc["ranking", "median_s"] == pytest.approx(0.5)
    assert table.loc["clinical", "max_rss_mb"] == 900 and table.loc["other", "job_s"] == pytest.approx(4.5)
    assert table.loc["classification", "jobs"] == 2 and table.loc["classification", "max_rss_mb"] == 95
    assert table.loc["model selection", "jobs"] == 1 and table.loc["model selection", "job_s"] == pytest.approx(3.0)
    assert list(table.index[:1]) == ["clinical"]  # sorted by summed time
    before = pd.DataFrame({"target": "available", "stage": ["ranking", "clinical", "other"], "jobs": [2, 1, 9],
                           "job_s": [5.0, 60.0, 9.0]})
    plot_stages(table.reset_index().assign(target="available"), before, tmp_path / "stages.pdf")
    assert (tmp_path / "stages.pdf").stat().st_size > 0 and (tmp_path / "stages.png").stat().st_size > 0


@pytest.mark.subprocess
def test_main_job_reads_the_cpu_time_of_the_snakemake_process_itself_not_its_jobs():
    import subprocess
    import sys

    from otfs_benchmarks.main_job import _own_cpu_until_exit

    # the process burns about 0.6 s of CPU itself, then waits on a child that burns 1.5 s more
    code = ("import subprocess, sys, time\n"
            "t = time.process_time()\n"
            "while time.process_time() - t < 0.6: pass\n"
            "subprocess.run([sys.executable, '-c', 'import time\\nt = time.process_time()\\n"
            "while time.process_time() - t < 1.5: pass'])\n"
            "time.sleep(1.2)\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    own = _own_cpu_until_exit(proc, every_s=0.1)
    assert proc.returncode == 0 and 0.5 <= own < 1.4


@pytest.mark.subprocess
def test_a_job_writes_its_times_where_the_environment_says_and_counts_the_imports_inside_it(tmp_path):
    """A job's line splits its process's time: before its code, the imports its code made (a module whose import
    sleeps 0.4 s), its code (a 0.3 s sleep besides); without the variable nothing is written or wrapped."""
    import subprocess
    import sys

    from otfs_workflow.stages import JOB_TIMES_COLUMNS, JOB_TIMES_ENV

    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(0.4)\n")
    script = tmp_path / "script.py"
    script.write_text(
        "import builtins, sys, time\n"
        "from otfs_workflow.stages import job\n"
        "original = builtins.__import__\n"
        f"with job({str(tmp_path / 'job.log')!r}, 1, 'sleepy') as logger:\n"
        "    import slow_module\n"
        "    import slow_module  # loaded: counted again, but costs nothing\n"
        "    time.sleep(0.3)\n"
        "assert builtins.__import__ is original\n"
    )
    times = tmp_path / "times.tsv"
    env = {k: v for k, v in os.environ.items() if k != JOB_TIMES_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *sys.path])
    subprocess.run([sys.executable, str(script)], env=env, check=True, cwd=tmp_path)
    assert not times.exists()
    for _ in range(2):  # two jobs, two lines
        subprocess.run([sys.executable, str(script)], env={**env, JOB_TIMES_ENV: str(times)}, check=True,
                       cwd=tmp_path)
    t = pd.read_csv(times, sep="\t", names=list(JOB_TIMES_COLUMNS), header=None)
    assert list(t["name"]) == ["sleepy", "sleepy"]
    assert (t["imports_s"].between(0.4, 0.6)).all() and (t["body_s"].between(0.7, 1.0)).all()
    assert (t["before_s"] > 0.01).all() and (t["before_s"] < 30).all() and (t["after_s"] >= 0).all()


def test_main_job_overhead_is_the_job_time_that_is_not_the_jobs_code(tmp_path):
    from otfs_benchmarks.end_to_end import overhead_figures
    from otfs_benchmarks.main_job import target_name

    times = tmp_path / "times.tsv"
    times.write_text("a\t0.5\t1.0\t0.1\t10.0\nb\t0.4\t0.0\t0.0\t2.0\n")
    f = overhead_figures(times, job_s=14.0)
    # the code: (10 - 1) + (2 - 0) = 11 s of 14
    assert f["jobs_timed"] == 2 and f["overhead_s"] == pytest.approx(3.0)
    assert f["before_s"] == pytest.approx(0.9) and f["imports_s"] == pytest.approx(1.0)
    assert np.isnan(overhead_figures(tmp_path / "none.tsv", job_s=5.0)["overhead_s"])
    assert target_name(["leaderboard", "model_selection"]) == "leaderboard+model_selection"
    assert target_name("available") == "available"


def test_goals_of_the_main_job_state_each_target_the_overhead_and_the_families_budget(tmp_path):
    from otfs_benchmarks.goals import _main_job_rows

    runs = pd.DataFrame({
        "target": ["available", "leaderboard+model_selection"], "order": [0, 1], "cache": ["cold", "warm"],
        "cores": 2, "wall_s": [800.0, 1000.0], "jobs": [600, 80], "job_s": [2300.0, 1900.0],
        "max_rss_mb": [900.0, 1200.0], "snakemake_cpu_s": [40.0, 10.0], "jobs_timed": [598, 80],
        "before_s": [150.0, 10.0], "imports_s": [60.0, 5.0], "after_s": [5.0, 1.0], "body_s": [2000.0, 1850.0],
        "overhead_s": [360.0, 55.0]})
    runs.to_csv(tmp_path / "main_job.csv", index=False)
    pd.DataFrame({"target": ["available", "available"], "stage": ["families", "ranking"], "jobs": [70, 30],
                  "job_s": [4200.0, 90.0]}).to_csv(tmp_path / "stages.csv", index=False)
    rows = {r["goal"].split(" within")[0].split(" <=")[0]: r
            for r in _main_job_rows(tmp_path / "main_job.csv", tmp_path / "stages.csv")}
    assert rows["`available`"]["met"] and not rows["`leaderboard` and `model_selection`"]["met"]
    assert rows["`related`"]["measured"] == "not run" and not rows["`related`"]["met"]
    over = rows["per-job overhead"]
    assert not over["met"] and over["measured"].startswith("15.7 %")  # 360 of 2,300 s
    assert "598 of 600 jobs timed" in over["note"] and "outside the jobs' processes 145 s" in over["note"]
    fam = rows["the data families' grid"]
    assert fam["measured"].startswith("35.0 min") and not fam["met"]  # 4,200 s over 2 cores


@pytest.mark.subprocess
def test_the_documented_benchmark_commands_name_modules_and_options_that_exist():
    # docs/performance.md's `python -m otfs_benchmarks...` lines: each module runs from the installed suite
    # (`--help`: the runs themselves take minutes to an hour) and takes every option the line names, its
    # comment's included
    block = re.search(r"```bash\n(make bench.*?)\n```", (REPO / "docs" / "performance.md").read_text(encoding="utf-8"),
                      re.S).group(1)
    lines = [line for line in block.splitlines() if " -m otfs_benchmarks" in line]
    assert len(lines) == 6, block
    for line in lines:
        module = re.search(r" -m (\S+)", line).group(1)
        proc = subprocess.run([sys.executable, "-m", module, "--help"], cwd=REPO, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0 and "usage:" in proc.stdout, (module, proc.stderr)
        for option in re.findall(r"--[a-z][\w-]*", line):
            assert option in proc.stdout, (module, option)


def test_the_command_lines_run_the_workflow_of_this_checkout(monkeypatch, tmp_path):
    # python -m otfs_benchmarks.end_to_end and .main_job copy the workflow of the checkout the package lies in,
    # the scheduler's toy workflow imports the pipeline package from it, and the authors' run has its folders on
    # its path: all of them this repository's, not a folder above it
    import otfs_benchmarks
    from otfs_benchmarks import end_to_end, main_job, scheduler

    assert otfs_benchmarks.checkout() == REPO.resolve()
    assert scheduler.SRC == REPO.resolve() / "workflow" / "lib"
    assert f"sys.path.insert(0, {str(REPO.resolve() / 'workflow' / 'lib')!r})" in (
        scheduler.toy_workflow(tmp_path / "toy", 2, 0.0).read_text())
    path = end_to_end._authors_env()["PYTHONPATH"].split(os.pathsep)
    assert path[:2] == [str(REPO.resolve() / "src"), str(REPO.resolve() / "workflow" / "lib")]
    assert all(Path(p).is_dir() for p in path[:2])
    seen = {}

    class Reached(Exception):
        """The command got as far as running the benchmark, with ``seen`` holding the workflow it was given."""

    def reached(name):
        def run(repo, *args, **kwargs):
            seen[name] = repo
            raise Reached
        return run

    monkeypatch.setattr(end_to_end, "check_mirror", lambda mirror: Path(mirror))
    monkeypatch.setattr(end_to_end, "compare", reached("end_to_end"))
    monkeypatch.setattr(main_job, "run", reached("main_job"))
    with pytest.raises(Reached):
        end_to_end.main(["--mirror", str(tmp_path), "--workdir", str(tmp_path / "w"), "--out", str(tmp_path / "o")])
    with pytest.raises(Reached):
        main_job.main(["--workdir", str(tmp_path / "m"), "--out", str(tmp_path / "o"), "available"])
    assert seen == {"end_to_end": REPO.resolve(), "main_job": REPO.resolve()}
    for repo in seen.values():
        assert (repo / "Snakefile").is_file() and (repo / "workflow" / "lib" / "otfs_workflow").is_dir()
    # a copy of the package outside a checkout says so
    monkeypatch.setattr(otfs_benchmarks, "REPO", tmp_path)
    with pytest.raises(RuntimeError, match=rf"{tmp_path}, which is not a checkout of the workflow"):
        otfs_benchmarks.checkout()
