"""Tests that need an optional extra or the data mirror skip with a message saying how to enable them;
CI (OTFS_REQUIRE_ALL_TESTS=1) turns such a skip into a failure."""

import os
import subprocess
import sys

import pytest

from .conftest import REPO


def _collect_without_torch(tmp_path, require_all: bool) -> subprocess.CompletedProcess:
    # a `torch` that cannot be imported, first on the path: as on a machine without the extraction extra
    (tmp_path / "torch.py").write_text("raise ImportError('No module named torch (hidden by the test)')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("OTFS_REQUIRE_ALL_TESTS", None)
    if require_all:
        env["OTFS_REQUIRE_ALL_TESTS"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "tests/test_extraction.py"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.subprocess
def test_a_missing_extra_skips_with_how_to_install_it(tmp_path):
    proc = _collect_without_torch(tmp_path, require_all=False)
    assert proc.returncode in (0, 5), proc.stdout + proc.stderr  # 5: every test of the file skipped
    assert " skipped" in proc.stdout and "failed" not in proc.stdout and "error" not in proc.stdout.lower()
    assert "needs the Python package 'torch': pip install -e '.[extraction]'" in proc.stdout


@pytest.mark.subprocess
def test_ci_turns_a_missing_extra_into_a_failure(tmp_path):
    proc = _collect_without_torch(tmp_path, require_all=True)
    assert proc.returncode != 0
    assert "OTFS_REQUIRE_ALL_TESTS=1: no test may skip" in proc.stdout + proc.stderr
