"""tests/values.py, the digests the equality test of the test configuration's outputs compares."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pandas as pd

from .values import canonical, digests, volatile


def test_durations_and_provenance_are_volatile_and_values_are_not():
    for name in ("seconds", "seconds_total", "scoring_seconds", "ranking_time_s", "versions", "git_commit",
                 "config_hash", "seconds_selection"):
        assert volatile(name), name
    for name in ("second_accuracy", "accuracy", "n_features", "pair", 3):
        assert not volatile(name), name


def test_a_table_keeps_its_values_to_six_digits_without_times_or_extracted_rows(tmp_path):
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    rows = {"feature_set": ["surf", "EfficientNetLite0"], "accuracy": [41.123456789, 50.0], "seconds": [1.0, 2.0]}
    pd.DataFrame(rows).to_csv(a, sep="\t", index=False)
    pd.DataFrame({**rows, "accuracy": [41.1234568, 51.0], "seconds": [9.0, 9.0]}).to_csv(b, sep="\t", index=False)
    assert canonical(a) == canonical(b)  # a 1e-9 change, an extracted row and a time: the same values
    pd.DataFrame({**rows, "accuracy": [41.1241, 50.0]}).to_csv(b, sep="\t", index=False)
    assert canonical(a) != canonical(b)  # the 6th digit changed


def test_a_text_table_loses_its_time_columns_only(tmp_path):
    md = tmp_path / "t.md"
    md.write_text("| Method | ↘100 | ↘100 time (s) |\n|---|---|---|\n| NA | 40.2 ± 0.8 | 0.01 |\n")
    before = canonical(md)
    md.write_text("| Method | ↘100 | ↘100 time (s) |\n|---|---|---|\n| NA | 40.2 ± 0.8 | 7.50 |\n")
    assert canonical(md) == before
    md.write_text("| Method | ↘100 | ↘100 time (s) |\n|---|---|---|\n| NA | 40.3 ± 0.8 | 0.01 |\n")
    assert canonical(md) != before


def test_digests_cover_json_and_hdf5_and_skip_figures_and_provenance(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text(json.dumps({"scores": [0.1234567891], "ranking_time_s": 3.0}))
    (tmp_path / "results" / "f.png").write_bytes(b"png")
    (tmp_path / "results" / "provenance.json").write_text("{}")
    with h5py.File(tmp_path / "results" / "c.h5", "w") as fh:
        fh["X"] = np.arange(6, dtype=float).reshape(2, 3) / 7
    first = digests(tmp_path)
    assert set(first) == {"results/r.json", "results/c.h5"}
    (tmp_path / "results" / "r.json").write_text(json.dumps({"scores": [0.1234567892], "ranking_time_s": 4.0}))
    assert digests(tmp_path) == first
    with h5py.File(tmp_path / "results" / "c.h5", "a") as fh:
        fh["X"][0, 0] = 1.0
    assert digests(tmp_path)["results/c.h5"] != first["results/c.h5"]
