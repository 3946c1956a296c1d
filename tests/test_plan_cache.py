"""What parsing the workflow learns from the library, kept between runs (otfs_workflow.plan_cache): a changed
file or install is a new signature, an answer is computed once per signature, and a re-plan of a single figure
imports none of the library's methods."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from otfs_workflow.plan_cache import PlanCache, code_signature, digest

from .conftest import copy_workflow, snakemake, snakemake_env


def _tree(tmp_path):
    lib = tmp_path / "lib" / "pkg"
    lib.mkdir(parents=True)
    (lib / "a.py").write_text("x = 1\n")
    site = tmp_path / "env" / "site-packages"
    site.mkdir(parents=True)
    (site / "dep-1.0.dist-info").mkdir()
    return lib, site


def test_the_signature_follows_every_source_file_install_and_editable_install(tmp_path):
    lib, site = _tree(tmp_path)
    sig = code_signature([lib], path=[str(site)])
    assert sig == code_signature([lib], path=[str(site)])  # stable
    # an edited file (same size: the time tells), a new file, a removed one
    (lib / "a.py").write_text("x = 2\n")
    os.utime(lib / "a.py", ns=(1, 1))
    edited = code_signature([lib], path=[str(site)])
    assert edited != sig
    (lib / "b.py").write_text("")
    added = code_signature([lib], path=[str(site)])
    assert added != edited
    # files that are not code (data, caches) do not count
    (lib / "notes.txt").write_text("x")
    (lib / "__pycache__").mkdir()
    (lib / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"x")
    assert code_signature([lib], path=[str(site)]) == added
    # an upgrade is a new metadata folder
    (site / "dep-1.0.dist-info").rename(site / "dep-1.1.dist-info")
    upgraded = code_signature([lib], path=[str(site)])
    assert upgraded != added
    # an editable install: the files of the folder its .pth names count
    plugin = tmp_path / "plugin" / "src"
    (plugin / "myplugin").mkdir(parents=True)
    (plugin / "myplugin" / "rankers.py").write_text("A = 1\n")
    (site / "__editable__.myplugin-0.1.pth").write_text(f"{plugin}\n")
    with_plugin = code_signature([lib], path=[str(site)])
    assert with_plugin != upgraded
    (plugin / "myplugin" / "rankers.py").write_text("A = 22\n")
    assert code_signature([lib], path=[str(site)]) != with_plugin


def test_an_answer_is_computed_once_per_signature_and_read_back_equal(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"names": ["a", "b"], "n": (1, 2)}

    cache = PlanCache("s" * 32, tmp_path)
    first = cache.get("names", ["otfs.rankers", {"p": 1}], compute)
    assert cache.get("names", ["otfs.rankers", {"p": 1}], compute) == first and len(calls) == 1
    assert first == {"names": ["a", "b"], "n": [1, 2]}  # as JSON holds it, fresh or kept
    cache.save()
    again = PlanCache("s" * 32, tmp_path)
    assert again.get("names", ["otfs.rankers", {"p": 1}], compute) == first and len(calls) == 1
    assert list(again.get("names", ["otfs.rankers", {"p": 1}], compute)) == ["names", "n"]  # the order kept
    assert again.hits == 2 and again.misses == 0
    # other arguments are another question; a failure is raised and not kept
    with pytest.raises(ValueError, match="bad"):
        again.get("names", ["otfs.rankers", {"p": 2}], lambda: (_ for _ in ()).throw(ValueError("bad")))
    assert again.get("names", ["otfs.rankers", {"p": 2}], compute) == first and len(calls) == 2
    # a new signature answers afresh, and its file replaces the one this cache wrote before, nothing else
    (tmp_path / "mine.json").write_text("{}")
    new = PlanCache("t" * 32, tmp_path)
    new.get("names", ["otfs.rankers", {"p": 1}], compute)
    new.save()
    assert len(calls) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.json", "t" * 32 + ".json"]
    # a job step reads, never writes
    reader = PlanCache("u" * 32, tmp_path, write=False)
    reader.get("x", 1, lambda: 1)
    reader.save()
    assert not (tmp_path / ("u" * 32 + ".json")).exists()
    # a damaged file is ignored, not trusted
    (tmp_path / ("t" * 32 + ".json")).write_text("{not json")
    assert PlanCache("t" * 32, tmp_path).get("names", ["otfs.rankers", {"p": 1}], compute) == first
    assert len(calls) == 4
    assert digest({"b": 1, "a": [1, 2]}) == digest({"a": [1, 2], "b": 1})


_PROBE = """
import sys
sys.argv = ["snakemake", "--dry-run", "--cores", "1", "figure7"]
from snakemake.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print("IMPORTED", sorted(m for m in ("sklearn", "ot", "otfs.rankers._base", "otfs.adapters._base")
                         if m in sys.modules), "EXIT", code, file=sys.__stderr__)
"""


def _probe(work):
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=work, env=snakemake_env(), capture_output=True,
                          text=True, timeout=600)
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("IMPORTED"))
    return line, proc


@pytest.mark.subprocess
def test_a_second_plan_of_one_figure_imports_none_of_the_librarys_methods(tmp_path):
    work = copy_workflow(tmp_path / "work")
    first, proc = _probe(work)
    assert first.endswith("EXIT 0"), proc.stderr[-3000:]
    assert "sklearn" in first  # the first parse checks the configuration against the methods
    kept = list((work / ".snakemake" / "otfs-plan").glob("*.json"))
    assert len(kept) == 1
    answers = json.loads(kept[0].read_text())["answers"]
    # the configuration as checked, with the schemas' defaults filled, in its own order
    checked = next(v for k, v in answers.items() if k.startswith("validate_config:"))
    assert checked["shift"]["grid"] == "families" and list(checked)[:2] == ["datasets", "feature_sets"]
    second, proc = _probe(work)
    assert second == "IMPORTED [] EXIT 0", proc.stderr[-3000:]
    # a broken configuration is still checked: it is another question
    (work / "config" / "bad.yaml").write_text("protocol:\n  iterations: 0\n")
    proc = snakemake(work, "figure7", "--dry-run", "--cores", "1", "--configfile", "config/bad.yaml", check=False)
    assert proc.returncode != 0 and "iterations" in proc.stderr + proc.stdout
