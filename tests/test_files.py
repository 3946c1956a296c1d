"""Files and folders: modes, durability, what may be deleted, paths that stay inside, download limits."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest

from otfs_benchmarks.end_to_end import MARKER, main, prepare_workdir
from otfs_workflow.data import Sources, acquire, read_manifest
from otfs_workflow.data.acquisition import DownloadRefusedError
from otfs_workflow.data.cache import DomainData, write_cache
from otfs_workflow.data.manifest import DEFAULT_MAX_BYTES, ManifestEntry
from otfs_workflow.io import atomic_path, current_umask, write_json, write_text

from .conftest import REPO


@pytest.fixture()
def umask():
    """Set the process umask for one test, and put the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600), (0o027, 0o640)])
def test_outputs_get_the_mode_open_would_give(tmp_path, umask, mask, mode):
    umask(mask)
    assert current_umask() == mask
    write_json(tmp_path / "a.json", {"x": 1})
    plain = tmp_path / "plain.txt"
    plain.write_text("reference")  # what open() gives
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == mode == stat.S_IMODE(plain.stat().st_mode)
    write_cache(tmp_path / "c.h5", feature_set="fs", dataset="ds",
                domains={"a": DomainData("a", np.ones((2, 3)), np.array([1, 2]), "src", "0" * 40)},
                class_names=["x", "y"], preprocessing=[])
    assert stat.S_IMODE((tmp_path / "c.h5").stat().st_mode) == mode


def test_outputs_are_synced_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"))),
                                                 real_fsync(fd)))
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append(("replace", str(b))), real_replace(a, b)))
    target = tmp_path / "out.txt"
    write_text(target, "durable")
    kinds = [e[0] for e in events]
    assert kinds == ["fsync", "replace", "fsync"]
    assert Path(events[0][1]).name.startswith(".out.txt.")  # the temporary file, synced before the rename
    assert events[2][1] == str(tmp_path)  # then the folder, so the rename itself survives a crash


def test_a_failed_write_leaves_the_old_output_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    write_text(target, "old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


# --- nothing deletes a folder it did not create -------------------------------------------
def test_end_to_end_refuses_a_folder_it_did_not_make(tmp_path):
    user = tmp_path / "my_thesis"
    (user / "chapter1").mkdir(parents=True)
    (user / "chapter1" / "draft.tex").write_text("years of work")
    with pytest.raises(FileExistsError, match=rf"--workdir {user}: not empty, and not made by this command "
                                              rf"\(no {MARKER} file in it\); it is left untouched"):
        prepare_workdir(user)
    assert (user / "chapter1" / "draft.tex").read_text() == "years of work"
    file = tmp_path / "a_file"
    file.write_text("x")
    with pytest.raises(FileExistsError, match="exists and is not a folder"):
        prepare_workdir(file)
    # a folder a previous run made is emptied and reused; an empty one is used
    ours = prepare_workdir(tmp_path / "run")
    (ours / "results.tsv").write_text("old")
    assert sorted(p.name for p in prepare_workdir(ours).iterdir()) == [MARKER]
    (tmp_path / "empty").mkdir()
    assert (prepare_workdir(tmp_path / "empty") / MARKER).is_file()


def test_end_to_end_checks_the_mirror_before_touching_the_workdir(tmp_path, capsys):
    work = tmp_path / "work"
    prepare_workdir(work)
    (work / "keep.txt").write_text("x")
    with pytest.raises(SystemExit, match=r"--mirror .*nowhere: no surf/<domain>.mat for \['amazon', 'caltech10', "
                                         r"'dslr', 'webcam'\]"):
        main(["--mirror", str(tmp_path / "nowhere"), "--workdir", str(work), "--out", str(tmp_path / "out")])
    assert (work / "keep.txt").is_file()


# --- paths stay inside their base folder ----------------------------------------------------
@pytest.mark.parametrize("path", ["../outside.mat", "surf/../../x.mat", "/etc/passwd", "C:\\data\\x.mat", ""])
def test_a_manifest_path_leaving_its_folder_is_an_error(tmp_path, path):
    manifest = tmp_path / "m.tsv"
    manifest.write_text(f"path\tgit_blob_sha1\nsurf/ok.mat\t{'a' * 40}\n{path}\t{'b' * 40}\n")
    with pytest.raises(ValueError, match=r"m.tsv: row 3: path .* must be relative and stay inside its folder"):
        read_manifest(manifest)
    with pytest.raises(ValueError, match="manifest entry: path"):
        acquire(ManifestEntry(path, "b" * 40), tmp_path / "out", Sources(mirror_dirs=[tmp_path]))


def test_the_shipped_manifests_give_sizes():
    for name, present in (("office-caltech.tsv", 8), ("office-caltech-images.tsv", 2533), ("uci.tsv", 9)):
        entries = read_manifest(REPO / "data" / "manifests" / name).entries.values()
        assert sum(bool(e.extra.get("size")) for e in entries) == present, name


# --- downloads ------------------------------------------------------------------------------
def test_a_download_larger_than_the_manifest_says_is_refused(tmp_path, mirror):
    manifest = read_manifest(REPO / "data" / "manifests" / "office-caltech.tsv")
    entry = manifest.entry("surf/dslr.mat")
    size = int(entry.extra["size"])
    assert entry.max_bytes()[0] == size == (mirror / "surf" / "dslr.mat").stat().st_size
    small = ManifestEntry(entry.path, entry.git_blob_sha1, {**entry.extra, "size": str(size - 100)})
    dest = tmp_path / "dl.mat"
    with pytest.raises(DownloadRefusedError, match=rf"file://.*dslr.mat: the body is larger than expected \(the "
                                                   rf"manifest's size, {size - 100:,} bytes\); refused"):
        acquire(small, dest, Sources(upstream_url=mirror.as_uri()))
    assert not dest.exists() and list(tmp_path.iterdir()) == []
    # without a size, the limit comes from n and d (8 bytes a value), else a default
    no_size = ManifestEntry(entry.path, entry.git_blob_sha1, {"n": "157", "d": "800"})
    assert no_size.max_bytes()[0] == 8 * 157 * 801 + (1 << 20)
    assert ManifestEntry("x", "a" * 40).max_bytes()[0] == DEFAULT_MAX_BYTES
    acquire(no_size, dest, Sources(upstream_url=mirror.as_uri()))  # within the limit: fetched and verified
    assert dest.stat().st_size == size


@pytest.mark.parametrize("url", ["http://example.org/features", "ftp://example.org/features", "data:,x"])
def test_only_https_and_file_urls_are_downloaded(tmp_path, url):
    entry = ManifestEntry("surf/dslr.mat", "a" * 40, {"size": "10"})
    with pytest.raises(DownloadRefusedError, match=r"surf/dslr.mat: URL .* has the scheme .*; downloads use https or "
                                                   r"file only"):
        acquire(entry, tmp_path / "x.mat", Sources(upstream_url=url))
    assert not (tmp_path / "x.mat").exists()


def test_a_sealed_output_edited_by_hand_is_named_and_never_used(tmp_path):
    # the files jobs pass to each other carry their SHA-256 beside them; reading one that was edited after
    # its job wrote it is an error naming it (Snakemake would pass the edited content on without a word)
    import pandas as pd

    from otfs_workflow.io import EditedOutputError, read_json, read_tsv, seal_path, write_json, write_rows_tsv, write_tsv

    ranking, runs, agg = tmp_path / "a-b.json", tmp_path / "a-b.tsv", tmp_path / "summary.tsv"
    write_json(ranking, {"scores": [0.5, 0.25]}, compact=True)
    write_rows_tsv(runs, ["pair", "accuracy"], [{"pair": "a-b", "accuracy": 61.5}])
    write_tsv(pd.DataFrame({"n_features": [1], "accuracy": [61.5]}), agg)
    assert read_json(ranking) == {"scores": [0.5, 0.25]} and read_tsv(runs)["accuracy"].tolist() == [61.5]
    assert read_tsv(agg)["accuracy"].tolist() == [61.5]
    ranking.write_text(ranking.read_text().replace("0.5", "0.9"))
    runs.write_text(runs.read_text().replace("61.5", "99.5"))
    with pytest.raises(EditedOutputError, match=r"a-b.json: changed after the job that wrote it .* Delete .*a-b.json "
                                                r"and rerun"):
        read_json(ranking)
    with pytest.raises(EditedOutputError, match=r"a-b.tsv: changed after the job that wrote it"):
        read_tsv(runs)
    # deleting the seal accepts the edit, as the message says; a rewrite by its job seals it again
    seal_path(runs).unlink()
    assert read_tsv(runs)["accuracy"].tolist() == [99.5]
    write_json(ranking, {"scores": [0.5, 0.25]}, compact=True)
    assert read_json(ranking) == {"scores": [0.5, 0.25]}
