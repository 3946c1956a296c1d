"""Data layer: hashes, acquisition from each source, clear errors, the HDF5 cache."""

import shutil
import subprocess

import numpy as np
import pytest
import scipy.io

from otfs.datasets import MatFileError, load_mat_features
from otfs_workflow.data import (
    CacheError,
    HashMismatchError,
    MissingDataError,
    Sources,
    acquire,
    git_blob_sha1,
    read_cache,
    read_manifest,
    write_cache,
)
from otfs_workflow.data.cache import DomainData

from .conftest import REPO

MANIFEST = REPO / "data" / "manifests" / "office-caltech.tsv"


@pytest.fixture(scope="module")
def manifest():
    return read_manifest(MANIFEST)


def test_manifest_lists_all_twelve_files(manifest):
    assert len(manifest.entries) == 12
    assert manifest.meta["upstream_commit"].startswith("097f519e")
    assert manifest.meta["class_names"].split(",")[0] == "backpack"
    assert manifest.entry("surf/dslr.mat").extra["n"] == "157"
    with pytest.raises(KeyError, match="not listed"):
        manifest.entry("surf/nope.mat")


@pytest.mark.subprocess
def test_git_blob_sha1_matches_git(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"hello\x00world\n" * 1000)
    out = subprocess.run(["git", "hash-object", str(f)], capture_output=True, text=True, check=True)
    assert git_blob_sha1(f) == out.stdout.strip()


def test_acquire_from_mirror_verifies(tmp_path, mirror, manifest):
    entry = manifest.entry("surf/dslr.mat")
    dest = tmp_path / "raw" / "surf" / "dslr.mat"
    origin = acquire(entry, dest, Sources(local_dir=tmp_path / "local", mirror_dirs=[mirror]))
    assert origin.startswith("mirror")
    assert git_blob_sha1(dest) == entry.git_blob_sha1


def test_local_folder_comes_first(tmp_path, mirror, manifest):
    entry = manifest.entry("surf/webcam.mat")
    local = tmp_path / "local"
    (local / "surf").mkdir(parents=True)
    shutil.copy(mirror / "surf" / "webcam.mat", local / "surf" / "webcam.mat")
    origin = acquire(entry, tmp_path / "out.mat", Sources(local_dir=local, mirror_dirs=[mirror]))
    assert origin.startswith("local folder")


def test_download_from_upstream_url(tmp_path, mirror, manifest):
    # The upstream path is exercised with a file:// URL standing for the web.
    entry = manifest.entry("surf/dslr.mat")
    dest = tmp_path / "dl.mat"
    origin = acquire(entry, dest, Sources(upstream_url=mirror.as_uri()))
    assert origin.startswith("upstream file://")
    assert git_blob_sha1(dest) == entry.git_blob_sha1


def test_hash_mismatch_is_a_clear_error_and_loses_nothing(tmp_path, mirror, manifest):
    entry = manifest.entry("surf/dslr.mat")
    bad = tmp_path / "mirror" / "surf"
    bad.mkdir(parents=True)
    data = (mirror / "surf" / "dslr.mat").read_bytes()
    (bad / "dslr.mat").write_bytes(data[:100] + bytes([data[100] ^ 0xFF]) + data[101:])
    dest = tmp_path / "raw" / "dslr.mat"
    dest.parent.mkdir()
    dest.write_bytes(b"previous content")
    with pytest.raises(HashMismatchError, match=r"surf/dslr.mat: hash mismatch .*expected git blob 944902f1"):
        acquire(entry, dest, Sources(mirror_dirs=[tmp_path / "mirror"]))
    assert dest.read_bytes() == b"previous content"  # nothing overwritten
    assert (bad / "dslr.mat").stat().st_size == len(data)  # the source is kept
    assert [p.name for p in dest.parent.iterdir()] == ["dslr.mat"]  # no temp left


def test_truncated_file(tmp_path, mirror, manifest):
    entry = manifest.entry("surf/amazon.mat")
    folder = tmp_path / "mirror" / "surf"
    folder.mkdir(parents=True)
    data = (mirror / "surf" / "amazon.mat").read_bytes()
    (folder / "amazon.mat").write_bytes(data[: len(data) // 2])
    with pytest.raises(HashMismatchError, match=rf"{len(data) // 2} bytes\).*truncated"):
        acquire(entry, tmp_path / "out.mat", Sources(mirror_dirs=[tmp_path / "mirror"]))
    assert not (tmp_path / "out.mat").exists()
    # read directly (no hash known), a truncated file names itself too
    with pytest.raises(MatFileError, match=r"amazon.mat: cannot read MATLAB data.*truncated"):
        load_mat_features(folder / "amazon.mat")


def test_missing_file_says_where_to_put_it(tmp_path, manifest):
    entry = manifest.entry("CaffeNet4096/amazon.mat")
    local = tmp_path / "local"
    with pytest.raises(MissingDataError) as err:
        acquire(entry, tmp_path / "out.mat",
                Sources(local_dir=local, mirror_dirs=[tmp_path / "m"],
                        upstream_url=(tmp_path / "nowhere").as_uri()))
    msg = str(err.value)
    assert "CaffeNet4096/amazon.mat: no source has this file" in msg
    assert f"Put it at {local / 'CaffeNet4096' / 'amazon.mat'}" in msg
    assert "datasets.<dataset>.mirror_dirs or the environment variable OTFS_DATA_MIRROR" in msg
    assert "upstream file://" in msg
    assert not (tmp_path / "out.mat").exists()


def _write_mat(path, X, y):
    scipy.io.savemat(path, {"fts": X, "labels": np.asarray(y).reshape(-1, 1)})


def test_mat_validation_errors(tmp_path):
    X = np.random.RandomState(0).rand(6, 3)
    y = [1, 1, 2, 2, 3, 3]
    ok = tmp_path / "ok.mat"
    _write_mat(ok, X, y)
    X2, y2 = load_mat_features(ok, n_classes=3, class_counts=[2, 2, 2])
    np.testing.assert_allclose(X2, X)
    np.testing.assert_array_equal(y2, y)

    with pytest.raises(MatFileError, match=r"ok.mat: class label\(s\) \[4\] have no sample"):
        load_mat_features(ok, n_classes=4)
    with pytest.raises(MatFileError, match="per-class sample counts"):
        load_mat_features(ok, n_classes=3, class_counts=[3, 2, 1])
    nan = tmp_path / "nan.mat"
    Xn = X.copy()
    Xn[2, 1] = np.nan
    _write_mat(nan, Xn, y)
    with pytest.raises(MatFileError, match=r"nan.mat: 'fts' holds 1 NaN .*sample 2, feature 1"):
        load_mat_features(nan)
    nokey = tmp_path / "nokey.mat"
    scipy.io.savemat(nokey, {"features": X})
    with pytest.raises(MatFileError, match=r"variable 'fts' missing \(found \['features'\]\)"):
        load_mat_features(nokey)
    with pytest.raises(MatFileError, match="file not found"):
        load_mat_features(tmp_path / "absent.mat")


def test_real_files_load_with_manifest_counts(mirror, manifest):
    for path in ("surf/dslr.mat", "GoogleNet1024/webcam.mat", "CaffeNet4096/dslr.mat"):
        e = manifest.entry(path)
        counts = [int(c) for c in e.extra["class_counts"].split(",")]
        X, y = load_mat_features(mirror / path, n_classes=10, class_counts=counts)
        assert X.shape == (int(e.extra["n"]), int(e.extra["d"]))


def test_cache_round_trip_and_errors(tmp_path):
    rng = np.random.RandomState(0)
    raw = {
        "a": DomainData("a", rng.poisson(3, size=(8, 5)).astype(float), np.array([1, 2] * 4), "a.mat", "0" * 40),
        "b": DomainData("b", rng.poisson(3, size=(6, 5)).astype(float), np.array([1, 2] * 3), "b.mat", "1" * 40),
    }
    raw["a"].X[:, 0] = 0.0  # a constant feature
    before = raw["a"].X.copy()
    path = tmp_path / "fs.h5"
    write_cache(path, feature_set="fs", dataset="toy", domains=raw, class_names=["x", "y"],
                preprocessing=["row_sum_normalize", "zscore"])
    np.testing.assert_array_equal(raw["a"].X, before)  # input untouched
    cache = read_cache(path)
    assert cache.class_names == ["x", "y"]
    assert cache.preprocessing == ["row_sum_normalize", "zscore"]
    assert cache.n_features == 5
    A = cache.domain("a").X
    assert np.isfinite(A).all()
    np.testing.assert_allclose(A.mean(0), 0, atol=1e-12)
    np.testing.assert_array_equal(A[:, 0], 0.0)
    assert cache.domain("b").source_git_blob_sha1 == "1" * 40
    assert "numpy" in cache.attrs["versions"]
    with pytest.raises(CacheError, match="no domain 'c'"):
        cache.domain("c")

    broken = tmp_path / "broken.h5"
    broken.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CacheError, match="broken.h5: not a readable HDF5 file"):
        read_cache(broken)
    with pytest.raises(CacheError, match="feature cache not found"):
        read_cache(tmp_path / "absent.h5")


def test_atomic_writes_leave_nothing_on_failure(tmp_path):
    from otfs_workflow.io import atomic_path, read_json, write_json

    target = tmp_path / "out.json"
    write_json(target, {"a": 1})
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half-written")
            raise RuntimeError("interrupted")
    assert read_json(target) == {"a": 1}  # the previous output is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.json.sha256", "out.json"]  # the file and its seal
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not valid JSON"):
        read_json(bad)


def test_the_mat_reader_caches_the_released_file_as_read_directly(tmp_path, mirror, manifest):
    # the cache stage with the `mat` reader against scipy.io.loadmat and the released protocol's preprocessing
    from otfs.datasets import DATASET_READERS, get_reader, reader_spec
    from otfs_workflow.stages import cache as cache_stage

    assert "mat" in DATASET_READERS and reader_spec({"folder": "surf"}) == ("mat", {"folder": "surf"})
    assert get_reader("mat", {"folder": "surf"}).count_features(["amazon", "dslr"], manifest) == 800
    fs_cfg = {"dataset": "office-caltech", "folder": "surf", "preprocessing": ["row_sum_normalize", "zscore"]}
    out = tmp_path / "dslr.h5"
    cache_stage.run("surf", "dslr", fs_cfg, MANIFEST, {"surf/dslr.mat": str(mirror / "surf/dslr.mat")}, out)
    raw = scipy.io.loadmat(mirror / "surf" / "dslr.mat")
    X = raw["fts"].astype(float)
    X = X / X.sum(axis=1, keepdims=True)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1)
    dom = read_cache(out).domain("dslr")
    np.testing.assert_allclose(dom.X, X, atol=1e-10)
    np.testing.assert_array_equal(dom.y, raw["labels"].ravel())
    assert dom.source_git_blob_sha1 == manifest.entry("surf/dslr.mat").git_blob_sha1
    # a copy that is not the manifest's file is refused before it is read
    bad = tmp_path / "bad.mat"
    bad.write_bytes((mirror / "surf" / "webcam.mat").read_bytes())
    with pytest.raises(HashMismatchError):
        cache_stage.run("surf", "dslr", fs_cfg, MANIFEST, {"surf/dslr.mat": str(bad)}, tmp_path / "x.h5")
    assert not (tmp_path / "x.h5").exists()


def test_what_a_reader_returns_is_checked():
    from otfs.datasets import DomainFeatures

    X, y = np.ones((4, 3)), np.array([1, 2, 1, 2])
    assert DomainFeatures(X, y, ["a", "b"]).check("fs/d").X.dtype == np.float64
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"fs/d: 1 feature values are NaN or infinite \(first at sample 2, feature 1\)"):
        DomainFeatures(X, y, ["a", "b"]).check("fs/d")
    with pytest.raises(ValueError, match=r"fs/d: labels must be integers in 1..2 .* got values in \[0, 2\]"):
        DomainFeatures(np.ones((4, 3)), np.array([0, 2, 1, 2]), ["a", "b"]).check("fs/d")
    with pytest.raises(ValueError, match=r"fs/d: \(3,\) labels for 4 samples"):
        DomainFeatures(np.ones((4, 3)), np.array([1, 2, 1]), ["a", "b"]).check("fs/d")


def _wine_frames():
    from sklearn.datasets import load_wine

    df = load_wine(as_frame=True).frame.rename(columns={"target": "cultivar"})
    return df.iloc[0::2].reset_index(drop=True), df.iloc[1::2].reset_index(drop=True)


def test_the_tabular_reader_reads_every_format_alike(tmp_path):
    import h5py

    from otfs.datasets import get_reader

    a, b = _wine_frames()
    feats = [c for c in a.columns if c != "cultivar"]
    a.to_csv(tmp_path / "a.csv", index=False)
    a.to_csv(tmp_path / "a.tsv", index=False, sep="\t")
    b.to_parquet(tmp_path / "b.parquet", index=False)
    np.savez(tmp_path / "b.npz", X=b[feats].to_numpy(), y=b["cultivar"].to_numpy())
    with h5py.File(tmp_path / "b.h5", "w") as h5:
        h5["X"], h5["y"] = b[feats].to_numpy(), b["cultivar"].to_numpy()
    for fa in ("a.csv", "a.tsv"):
        reader = get_reader("tabular", {"files": {"a": str(tmp_path / fa), "b": str(tmp_path / "b.parquet")},
                                        "label": "cultivar"})
        assert reader.count_features(["a", "b"], None) == 13
        for dom, frame in (("a", a), ("b", b)):
            got = reader.read(dom, {}, None).check(dom)
            np.testing.assert_array_equal(got.X, frame[feats].to_numpy(float))
            np.testing.assert_array_equal(got.y, frame["cultivar"].to_numpy() + 1)  # classes 0, 1, 2 -> 1, 2, 3
            assert got.class_names == ["0", "1", "2"]
    # a table's label column is "label" unless named
    unnamed = get_reader("tabular", {"files": {"a": str(tmp_path / "a.csv"), "b": str(tmp_path / "b.parquet")}})
    with pytest.raises(ValueError, match=r"a.csv: no label column 'label' \(columns: \['alcohol'"):
        unnamed.count_features(["a", "b"], None)
    # arrays: X and y
    npz = get_reader("tabular", {"files": {"a": str(tmp_path / "b.npz"), "b": str(tmp_path / "b.h5")}})
    assert npz.count_features(["a", "b"], None) == 13
    np.testing.assert_array_equal(npz.read("a", {}, None).X, npz.read("b", {}, None).X)


def test_the_tabular_reader_names_the_file_and_column_of_every_problem(tmp_path):
    from otfs._checks import file_sha256 as sha256
    from otfs.datasets import get_reader

    a, b = _wine_frames()
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    files = {"a": str(tmp_path / "a.csv"), "b": str(tmp_path / "b.csv")}

    def reader(**kw):
        return get_reader("tabular", {"files": files, "label": "cultivar", **kw})

    # only one class in b is renamed: the classes are the union, the same in both domains
    b2 = b.copy()
    b2["cultivar"] = b2["cultivar"].map({0: "x", 1: 1, 2: 2})
    b2.to_csv(tmp_path / "b.csv", index=False)
    assert reader().read("a", {}, None).class_names == reader().read("b", {}, None).class_names
    b.to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(ValueError, match=r"b.csv: SHA-256 [0-9a-f]{64}, but the configuration says 0{64}"):
        reader(sha256={"b": "0" * 64}).read("b", {}, None)
    with pytest.raises(ValueError, match=r"sha256.b: a SHA-256 is 64 hex digits, got '00'"):
        reader(sha256={"b": "00"})
    assert reader(sha256={"b": sha256(tmp_path / "b.csv")}).read("b", {}, None).X.shape == (89, 13)
    bad = a.copy()
    bad["hue"] = bad["hue"].astype(object)
    bad.loc[4, "hue"] = None
    bad.loc[7, "hue"] = "n/a"
    bad.loc[9, "hue"] = "1,5"
    bad.to_csv(tmp_path / "a.csv", index=False)
    # the file's line numbers (the header is line 1), missing and non-numeric cells told apart
    with pytest.raises(ValueError, match=r"a.csv: column 'hue' has 1 non-numeric cell\(s\) \(line 11: '1,5'\)"):
        reader().read("a", {}, None)
    with pytest.raises(ValueError, match=r"a.csv: column 'hue' has 2 empty or NaN cell\(s\) \(lines 6, 9\)"):
        reader().read("a", {}, None)
    bad = a.copy()
    bad.loc[3, "cultivar"] = None
    bad.to_csv(tmp_path / "a.csv", index=False)
    with pytest.raises(ValueError, match=r"a.csv: column 'cultivar' \(the label\) has 1 empty or missing cell\(s\) "
                                         r"\(line 5\)"):
        reader().read("a", {}, None)
    with pytest.raises(ValueError, match=r"a.csv: no column 'huee' \(did you mean 'hue'\?\), which features lists"):
        reader(features=["hue", "huee"]).count_features(["a", "b"], None)
    (tmp_path / "a.csv").unlink()
    with pytest.raises(ValueError, match=r"a.csv: no such file \(the file of domain 'a'\)"):
        reader().count_features(["a", "b"], None)
    with pytest.raises(ValueError, match=r"files.a: '.*a.xlsx' has none of the suffixes"):
        get_reader("tabular", {"files": {"a": "a.xlsx", "b": "b.csv"}})
    with pytest.raises(ValueError, match=r"sha256: no file for the domain\(s\) \['c'\]"):
        get_reader("tabular", {"files": files, "sha256": {"c": "0" * 64}})


def test_area_resize_equals_block_means_of_the_upsampled_image():
    from otfs.datasets.usps_mnist import area_resize_matrix

    img = np.random.RandomState(0).rand(28, 28)
    R = area_resize_matrix(28, 16)
    fine = np.kron(img, np.ones((4, 4)))  # 112 x 112: each output pixel is a 7 x 7 block of it
    direct = fine.reshape(16, 7, 16, 7).mean(axis=(1, 3))
    np.testing.assert_allclose(R @ img @ R.T, direct, rtol=1e-12)


def test_usps_mnist_reads_the_jda_protocols_samples():
    from otfs.datasets import get_reader

    from .conftest import uci_mirror_dir

    mirror = uci_mirror_dir()
    reader = get_reader("usps-mnist", {})
    assert reader.count_features(["usps", "mnist"], None) == 256
    doms = {d: reader.read(d, {f: mirror / f for f in reader.files(d)}, None).check(d) for d in ("usps", "mnist")}
    assert doms["usps"].X.shape == (1800, 256) and doms["mnist"].X.shape == (2000, 256)
    for dom in doms.values():
        assert dom.X.min() >= 0 and dom.X.max() <= 1 and set(dom.y) == set(range(1, 11))
        assert dom.class_names == [str(k) for k in range(10)]
    # the same images on every read; another seed draws others
    again = reader.read("mnist", {f: mirror / f for f in reader.files("mnist")}, None)
    np.testing.assert_array_equal(again.X, doms["mnist"].X)
    other = get_reader("usps-mnist", {"seed": 1}).read("mnist", {f: mirror / f for f in reader.files("mnist")}, None)
    assert other.sample_ids != doms["mnist"].sample_ids
    with pytest.raises(ValueError, match=r"n_usps=20000 must be an integer in \[10, 9298\]"):
        get_reader("usps-mnist", {"n_usps": 20000})
