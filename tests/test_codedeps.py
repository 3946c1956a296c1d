"""Code dependencies derived from imports (otfs_workflow.codedeps), and the rules' code inputs."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from otfs_workflow.codedeps import (
    _only,
    code_manifest_text,
    import_closure,
    manifest_files,
    manifest_plugins,
    package_dirs,
    scoped_manifest,
)
from otfs_workflow.stages import check_code_inputs

from .conftest import REPO, docs_block

SRC = REPO / "src" / "otfs"
#: The packages a rule's code comes from: the library, the pipeline package and the benchmark suite.
PKGS = package_dirs(REPO)


def _closure(script: str, work: Path = REPO) -> set[str]:
    """The import closure of ``workflow/scripts/<script>``, as paths relative to the checkout."""
    return {p.relative_to(work.resolve()).as_posix() for p in
            import_closure(work / "workflow" / "scripts" / script, package_dirs(work))}


def _package(root: Path, files: dict[str, str]) -> Path:
    """A package ``pkg`` under ``root`` made of ``files`` (relative path -> source)."""
    for rel, text in files.items():
        path = root / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root / "pkg"


def _names(paths, pkg: Path) -> set[str]:
    return {str(Path(p).relative_to(pkg.resolve())) for p in paths}


@pytest.mark.subprocess
def test_every_import_form_is_counted(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "a.py": """
            import os
            from . import b
            from .sub import c as renamed
            from pkg.sub.d import thing
            import pkg.e

            def late():
                from .f import g  # inside a function
                return g

            class K:
                def method(self):
                    import importlib
                    return importlib.import_module("pkg.h")

            if os.environ.get("X"):
                from .i import j
        """,
        "b.py": "", "sub/__init__.py": "", "sub/c.py": "", "sub/d.py": "thing = 1\n", "e.py": "",
        "f.py": "g = 1\n", "h.py": "", "i.py": "j = 1\n", "unused.py": "",
    })
    got = _names(import_closure(pkg / "a.py", pkg), pkg)
    assert got == {"__init__.py", "a.py", "b.py", "sub/__init__.py", "sub/c.py", "sub/d.py", "e.py", "f.py", "i.py"}
    # a module loaded by name at run time is not an import statement: the jobs' run-time check catches it
    assert "h.py" not in got


@pytest.mark.subprocess
def test_a_stubs_lazy_exports_are_followed_where_used(tmp_path):
    # SPEC 1: a package whose __init__.py calls lazy_loader.attach_stub exports what its .pyi lists
    pkg = _package(tmp_path, {
        "__init__.py": "import lazy_loader as lazy\n__getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)\n",
        "__init__.pyi": "from ._base import (\n    Ranker as Ranker,\n)\nfrom . import extra as extra\n",
        "_base.py": "", "extra.py": "", "other.py": "",
        "user.py": "from pkg import (\n    Ranker,\n)\n",
        "attr.py": "import pkg\n\ndef f():\n    return pkg.extra\n",
        "bare.py": "import pkg\n",
    })
    assert _names(import_closure(pkg / "user.py", pkg), pkg) == {"__init__.py", "__init__.pyi", "_base.py", "user.py"}
    assert _names(import_closure(pkg / "attr.py", pkg), pkg) == {"__init__.py", "__init__.pyi", "extra.py", "attr.py"}
    # importing the package alone loads nothing it exports; the stub is listed, never followed
    assert _names(import_closure(pkg / "bare.py", pkg), pkg) == {"__init__.py", "__init__.pyi", "bare.py"}
    # the same from a script outside the package
    script = tmp_path / "script.py"
    script.write_text("from pkg import Ranker\n")
    assert _names(import_closure(script, pkg), pkg) == {"__init__.py", "__init__.pyi", "_base.py"}


@pytest.mark.subprocess
def test_a_registry_counts_its_folder_or_only_the_methods_a_job_runs(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "", "registry.py": "class Registry:\n    def __init__(self, *a, package=None): pass\n",
        "methods/__init__.py": "from pkg.registry import Registry\nMETHODS = Registry('method', package='pkg.methods')\n",
        "methods/one.py": "from . import helper\n", "methods/two.py": "", "methods/helper.py": "",
        "methods/_private.py": "",
    })
    script = tmp_path / "script.py"
    script.write_text("from pkg.methods import METHODS\n")
    base = {"__init__.py", "registry.py", "methods/__init__.py"}
    assert _names(import_closure(script, pkg), pkg) == base | {"methods/one.py", "methods/two.py", "methods/helper.py"}
    assert _names(import_closure(script, pkg, {"pkg.methods": ["pkg.methods.one"]}), pkg) == base | {
        "methods/one.py", "methods/helper.py"}
    assert _names(import_closure(script, pkg, {"pkg.methods": []}), pkg) == base


@pytest.mark.subprocess
def test_a_closure_spans_several_packages(tmp_path):
    lib = _package(tmp_path / "src", {"__init__.py": "", "method.py": "", "unused.py": ""})
    wf_root = tmp_path / "workflow"
    (wf_root / "wf").mkdir(parents=True)
    (wf_root / "wf" / "__init__.py").write_text("")
    (wf_root / "wf" / "stage.py").write_text("from pkg.method import x\n")
    script = tmp_path / "script.py"
    script.write_text("from wf import stage\n")
    closure = import_closure(script, (lib, wf_root / "wf"))
    assert {p.relative_to(tmp_path.resolve()).as_posix() for p in closure} == {
        "src/pkg/__init__.py", "src/pkg/method.py", "workflow/wf/__init__.py", "workflow/wf/stage.py"}
    # a manifest lists them relative to the packages' common folder
    out = scoped_manifest(script, (lib, wf_root / "wf"), folder=tmp_path / "m")
    assert json.loads(out.read_text())["files"] == ["src/pkg/__init__.py", "src/pkg/method.py",
                                                     "workflow/wf/__init__.py", "workflow/wf/stage.py"]
    assert set(manifest_files(out, (lib, wf_root / "wf"))) == set(closure)


@pytest.mark.subprocess
def test_closure_is_transitive_and_includes_parent_packages(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "", "top.py": "from .mid.low import x\n", "mid/__init__.py": "from .helper import y\n",
        "mid/helper.py": "y = 1\n", "mid/low.py": "from ..leaf import z\nx = 1\n", "leaf.py": "z = 1\n",
        "alone.py": "",
    })
    script = tmp_path / "script.py"  # a workflow script outside the package
    script.write_text("from pkg.top import x\n")
    assert _names(import_closure(script, pkg), pkg) == {
        "__init__.py", "top.py", "mid/__init__.py", "mid/helper.py", "mid/low.py", "leaf.py"}


@pytest.mark.subprocess
def test_an_edited_file_is_parsed_again(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "a.py": "", "b.py": "", "c.py": ""})
    (pkg / "a.py").write_text("from . import b\n")
    assert _names(import_closure(pkg / "a.py", pkg), pkg) == {"__init__.py", "a.py", "b.py"}
    (pkg / "a.py").write_text("from . import c\n")
    st = (pkg / "a.py").stat()
    os.utime(pkg / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert _names(import_closure(pkg / "a.py", pkg), pkg) == {"__init__.py", "a.py", "c.py"}


@pytest.mark.subprocess
def test_a_syntax_error_names_the_file(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "bad.py": "def f(:\n"})
    with pytest.raises(SyntaxError, match=r"cannot derive the imports of \['pkg'\]: .*bad\.py"):
        import_closure(pkg / "bad.py", pkg)


@pytest.mark.subprocess
def test_the_ranking_script_depends_on_what_ranking_imports():
    # the drift the hand-kept lists had: ranking.py imports selection.py
    closure = _closure("ranking.py")
    assert {"src/otfs/rankers/_feature_coupling.py", "src/otfs/sample_selection/_base.py", "src/otfs/_ot/solvers.py",
            "src/otfs/preprocessing.py", "workflow/lib/otfs_workflow/stages/ranking.py",
            "workflow/lib/otfs_workflow/data/cache.py", "workflow/lib/otfs_workflow/codedeps.py"} <= closure
    # and nothing the ranking job never runs
    assert not closure & {"src/otfs/adapters/_base.py", "workflow/lib/otfs_workflow/plotting.py",
                          "workflow/lib/otfs_workflow/tables.py", "src/otfs/datasets/_clinical.py",
                          "src/otfs/reducers/_wda.py"}


def test_compute_jobs_do_not_depend_on_tables_or_plots():
    # editing a table or a plot reruns no computation
    for script in ("ranking.py", "classification.py", "clinical.py", "wda.py", "invariance.py",
                   "boosting.py", "semfs.py", "cache.py", "extraction.py"):
        closure = _closure(script)
        assert not closure & {"workflow/lib/otfs_workflow/plotting.py", "workflow/lib/otfs_workflow/tables.py"}, script


def test_data_jobs_do_not_depend_on_the_methods():
    # editing a ranker, an adapter or the configuration checks re-acquires, re-extracts and re-caches nothing
    for script in ("acquisition.py", "acquisition_images.py", "extraction.py", "cache.py"):
        closure = _closure(script)
        methods = {n for n in closure if n.startswith(tuple(f"src/otfs/{k}/" for k in (
            "rankers", "adapters", "reducers", "sample_selection", "k_selection", "zero_shot", "domain_classifiers")))}
        assert not methods and "workflow/lib/otfs_workflow/config.py" not in closure, (script, methods)


@pytest.mark.subprocess
def test_a_code_manifest_is_rewritten_only_when_a_listed_file_changes(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "a.py": "from . import b\n", "b.py": "X = 1\n", "c.py": ""})
    script = tmp_path / "script.py"
    script.write_text("from pkg import a\n")
    out = tmp_path / "manifests"
    path = scoped_manifest(script, pkg, folder=out)
    assert [p.name for p in manifest_files(path, pkg)] == ["__init__.py", "a.py", "b.py"]
    first = path.stat().st_mtime_ns
    os.utime(path, ns=(first - 10**9, first - 10**9))
    assert scoped_manifest(script, pkg, folder=out) == path and path.stat().st_mtime_ns == first - 10**9  # untouched
    digest = json.loads(path.read_text())["sha256"]
    (pkg / "b.py").write_text("X = 2\n")  # an edit of a listed file: a new digest, the file rewritten
    scoped_manifest(script, pkg, folder=out)
    assert json.loads(path.read_text())["sha256"] != digest and path.stat().st_mtime_ns > first - 10**9
    (pkg / "c.py").write_text("Y = 3\n")  # a file the script does not import changes nothing
    assert code_manifest_text(script, pkg) == path.read_text()
    # a job checks what it ran against the files the manifest lists
    with pytest.raises(ValueError, match="not a code manifest"):
        manifest_files(tmp_path / "script.py", pkg)


def test_a_job_that_ran_an_undeclared_module_fails():
    import otfs.rankers._base  # noqa: F401 - loaded in this process

    declared = [p for p in import_closure(REPO / "workflow" / "scripts" / "tables.py", PKGS)]
    with pytest.raises(RuntimeError, match=r"not among its code inputs: \[.*rankers/_base\.py"):
        check_code_inputs(declared)


# --- the workflow's rules ------------------------------------------------------------
def _scripts_of(block: str) -> dict[str, str]:
    """Name -> script of the rule blocks of workflow/rules that ``block`` (a regex: the name, then the body) finds."""
    out = {}
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        for m in re.finditer(block, smk.read_text(), flags=re.S | re.M):
            s = re.search(r'script:\s*\n\s*"\.\./scripts/([\w.]+)"', m.group(2))
            if s:
                out[m.group(1)] = s.group(1)
    return out


def _rule_scripts() -> dict[str, str]:
    return _scripts_of(r"^rule (\w+):(.*?)(?=^rule |\Z)")


def _made_rule_scripts() -> dict[str, str]:
    """The rules made in a loop, one per feature set (``_rule = f"<prefix>{...}"``): name prefix -> script."""
    return _scripts_of(r'^    _rule = f"(\w+)\{.*?$(.*?)(?=^\S|\Z)')


def _dry_run_jobs(text: str) -> list[dict]:
    """``{rule, input, reason}`` of every job a ``--dry-run`` printed."""
    jobs = []
    for line in text.splitlines():
        m = re.match(r"^\s*(?:local)?rule (\w+):\s*$", line)
        if m:
            jobs.append({"rule": m.group(1), "input": [], "reason": ""})
        elif jobs and line.strip().startswith("input:"):
            jobs[-1]["input"] = [f.strip() for f in line.split(":", 1)[1].split(",")]
        elif jobs and line.strip().startswith("reason:"):
            jobs[-1]["reason"] = line.split(":", 1)[1].strip()
    return jobs


CONTENT_ADDRESSED = {"acquire", "acquire_images", "acquire_uci"}


@pytest.mark.pipeline
def test_every_job_lists_the_closure_of_its_script(tmp_path):
    from .conftest import copy_workflow, snakemake

    work = copy_workflow(tmp_path)
    # and a pair outside the leaderboard's and model selection's batches (their one-pair rules)
    alone = [f"results/runs/surf/{d}/leaderboard/amazon-webcam.tsv" for d in ("classification/ks/NA",
                                                                               "model_selection/ot")]
    proc = snakemake(work, "--configfile", "config/test.yaml", "--dry-run", "--forceall", "--cores", "2",
                     "available", "related", "bench", "time_profile", "shift", "recommend", *alone)
    scripts, made = _rule_scripts(), _made_rule_scripts()
    assert set(made) == {"rank_pairs_", "classify_pairs_", "score_pairs_"}, made
    jobs = _dry_run_jobs(proc.stdout + proc.stderr)
    checked = set()
    for job in jobs:
        prefix = next((p for p in made if job["rule"].startswith(p)), None)
        script = made[prefix] if prefix else scripts.get(job["rule"])
        if script is None or job["rule"] in CONTENT_ADDRESSED:
            continue
        # the code input is one manifest, which lists the closure (and whose digest changes with it); of the
        # rankers' and adapters' folders, only the files of the methods the job runs
        manifests = [f for f in job["input"] if f.startswith(".snakemake/otfs-code/")]
        name = Path(manifests[0]).name if len(manifests) == 1 else ""
        assert name == f"{script}.json" or name.startswith(f"{script}@"), (job["rule"], job["input"])
        plugins = manifest_plugins(work / manifests[0])
        closure = set(import_closure(work / "workflow" / "scripts" / script, _pkgs(work), _only(plugins)))
        assert set(manifest_files(work / manifests[0], _pkgs(work))) == closure, job["rule"]
        if (prefix or job["rule"]) in ("rank_features", "rank_pairs_", "classify"):  # one method, its file listed
            assert len([m for ms in plugins.values() for m in ms]) == 1, job
        checked.add(prefix or job["rule"])
    # every rule with a script was planned, and checked
    assert checked == set(scripts) - CONTENT_ADDRESSED | set(made)


def _pkgs(work: Path) -> tuple[Path, ...]:
    return package_dirs(work)


def _rules_importing(module: Path, work: Path, jobs: list[dict]) -> set[str]:
    """The rules with a job (of a dry run's ``jobs``) whose code manifest lists ``module``."""
    out = set()
    for job in jobs:
        for f in job["input"]:
            if f.startswith(".snakemake/otfs-code/") and module.resolve() in manifest_files(work / f, _pkgs(work)):
                out.add(job["rule"])
    return out


def _pending(work: Path, *extra: str) -> tuple[list[dict], dict[str, int]]:
    """The jobs a dry run of ``available`` would run (with their reasons), and their counts per rule."""
    from .conftest import planned_jobs, snakemake

    proc = snakemake(work, "--configfile", "config/test.yaml", "--dry-run", "--cores", "2", "available", *extra)
    return [j for j in _dry_run_jobs(proc.stdout + proc.stderr) if j["reason"]], planned_jobs(proc)


_EVERY_JOB: dict[Path, list[dict]] = {}


def _every_job(work: Path) -> list[dict]:
    """Every job of ``available`` (a dry run with --forceall): the plan, the same for every module edited."""
    if work not in _EVERY_JOB:
        _EVERY_JOB[work] = _pending(work, "--forceall")[0]
    return _EVERY_JOB[work]


def _pending_after_edit(work: Path, path: Path) -> tuple[list[dict], dict[str, int]]:
    """:func:`_pending` with ``path`` edited (a comment appended), the file restored afterwards."""
    original = path.read_text()
    path.write_text(original + "\n# edited\n")
    try:
        return _pending(work)
    finally:
        path.write_text(original)


@pytest.mark.pipeline
@pytest.mark.parametrize("module", ["src/otfs/sample_selection/_base.py", "workflow/lib/otfs_workflow/tables.py",
                                    "workflow/lib/otfs_workflow/plotting.py", "workflow/lib/otfs_workflow/data/cache.py",
                                    "src/otfs/datasets/_clinical.py"])
def test_editing_a_module_reruns_exactly_the_jobs_that_import_it(test_run, module):
    # After a full run, an edited library file makes Snakemake rerun the jobs whose
    # code imports it, what lies downstream of them, and nothing else: the same
    # jobs as forcing those rules to rerun. (Snakemake compares the content of a
    # newer source file with the checksum it recorded: a bare touch reruns
    # nothing, an edit does.)
    assert _pending(test_run)[0] == []  # the run is complete
    importers = sorted(_rules_importing(test_run / module, test_run, _every_job(test_run)))
    assert importers, module
    path = test_run / module
    jobs, counts = _pending_after_edit(test_run, path)
    assert counts == _pending(test_run, "--forcerun", *importers)[1], module
    for j in jobs:  # rerun because of the edit, or because an upstream job reruns
        if "Updated input files" in j["reason"]:
            # the updated input is the rule's code manifest, rewritten because a file it lists changed
            assert j["rule"] in importers and ".snakemake/otfs-code/" in j["reason"], j
            manifest = re.search(r"(\.snakemake/otfs-code/[\w.@+-]+\.json)", j["reason"]).group(1)
            assert path.resolve() in manifest_files(test_run / manifest, _pkgs(test_run)), j
        else:
            assert "Input files updated by another job" in j["reason"], j
    assert set(importers) <= {j["rule"] for j in jobs}


@pytest.mark.pipeline
def test_every_job_of_the_run_checked_its_code_inputs(test_run):
    logs = [p for p in (test_run / "logs").rglob("*.log") if "acquisition" not in p.parts]
    assert len(logs) > 50
    for log in logs:
        assert "otfs modules this job ran are among its" in log.read_text(), log


@pytest.mark.subprocess
def test_stage_jobs_keep_pot_from_importing_torch_and_the_library_does_not():
    """The pipeline's jobs turn POT's optional backends off; ``import otfs`` alone leaves them as they are."""
    import subprocess
    import sys

    probe = ("import os, sys; import {mod}; import ot; "
             "print(int('torch' in sys.modules), os.environ.get('POT_BACKEND_DISABLE_PYTORCH'))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("POT_BACKEND_DISABLE")}

    def run(mod):
        out = subprocess.run([sys.executable, "-c", probe.format(mod=mod)], env=env, cwd=REPO,
                             capture_output=True, text=True, check=True)
        return out.stdout.split()

    assert run("otfs_workflow.stages") == ["0", "1"]
    library = run("otfs")
    assert library[1] == "None"
    try:
        import torch  # noqa: F401
    except ImportError:
        return  # without torch there is no import to spare; the library's environment is checked above
    assert library[0] == "1", "POT imports torch when it is installed: the pipeline's switch is what spares it"


def test_a_scoped_manifest_counts_only_the_methods_its_job_runs(tmp_path):
    from otfs_workflow.codedeps import manifest_plugins, scoped_manifest

    script = REPO / "workflow" / "scripts" / "ranking.py"
    ks = scoped_manifest(script, PKGS, {"otfs.rankers": ["otfs.rankers.ks"]}, tmp_path)
    ot = scoped_manifest(script, PKGS, {"otfs.rankers": ["otfs.rankers.ot"]}, tmp_path)
    assert (ks.name, ot.name) == ("ranking.py@otfs.rankers.ks.json", "ranking.py@otfs.rankers.ot.json")
    files = {p.relative_to(REPO).as_posix() for p in manifest_files(ks, PKGS)}
    rankers = {f for f in files if f.startswith("src/otfs/rankers/") and not f.split("/")[-1].startswith("_")}
    assert rankers == {"src/otfs/rankers/ks.py"} and "src/otfs/rankers/_per_feature.py" in files
    assert "src/otfs/rankers/ot.py" in {p.relative_to(REPO).as_posix() for p in manifest_files(ot, PKGS)}
    assert manifest_plugins(ks) == {"otfs.rankers": ["otfs.rankers.ks"]}
    # a job of another kind names no ranker: no ranker file at all (the registry's folder is not expanded)
    plain = scoped_manifest(REPO / "workflow" / "scripts" / "classification.py", PKGS,
                            {"otfs.adapters": ["otfs.adapters.na"]}, tmp_path)
    files = {p.relative_to(REPO).as_posix() for p in manifest_files(plain, PKGS)}
    assert {f for f in files if f.startswith("src/otfs/adapters/") and not f.split("/")[-1].startswith("_")} == {
        "src/otfs/adapters/na.py"}
    assert not {f for f in files if f.startswith("src/otfs/rankers/") and not f.split("/")[-1].startswith("_")}
    with pytest.raises(ValueError, match="no scoped registry 'otfs.reducers'"):
        scoped_manifest(script, PKGS, {"otfs.reducers": ["x"]}, tmp_path)


@pytest.mark.subprocess
def test_a_job_imports_its_manifests_plugins_and_fails_on_any_other(tmp_path):
    import subprocess
    import sys

    from otfs_workflow.codedeps import scoped_manifest

    manifest = scoped_manifest(REPO / "workflow" / "scripts" / "ranking.py", PKGS,
                               {"otfs.rankers": ["otfs.rankers.ks"]}, tmp_path)
    code = textwrap.dedent(f"""
        import sys
        from otfs_workflow.stages import job
        with job(None, 1, "t", code={str(manifest)!r}):
            from otfs.rankers import FEATURE_RANKERS
            FEATURE_RANKERS["ks"]
            {{extra}}
        print("ok")
    """)
    ok = subprocess.run([sys.executable, "-c", code.format(extra="pass")], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.strip() == "ok", ok.stderr
    # looking up a ranker the manifest does not name loads the whole folder: the job fails, naming the files
    bad = subprocess.run([sys.executable, "-c", code.format(extra='FEATURE_RANKERS["mmd"]')], capture_output=True,
                         text=True)
    assert bad.returncode != 0 and "not among its code inputs" in bad.stderr and "rankers/mmd.py" in bad.stderr


@pytest.mark.pipeline
def test_a_new_ranker_file_reruns_no_job_and_a_target_naming_it_runs_only_its_own(test_run):
    # docs/extending.md's ranker, dropped into the rankers' folder as the page says
    assert _pending(test_run)[0] == []  # the run is complete
    path = test_run / "src" / "otfs" / "rankers" / "mean_gap.py"
    path.write_text(docs_block("extending.md", "# src/otfs/rankers/mean_gap.py"))
    try:
        jobs, counts = _pending(test_run)
        assert jobs == [] and counts == {}, counts  # no existing job reruns
        # named in a target: its own ranking and classification jobs run, and no other method's
        (test_run / "config" / "mean_gap.yaml").write_text("targets:\n  table5:\n    rankers: [ot, mean-gap]\n")
        from .conftest import snakemake

        proc = snakemake(test_run, "--configfile", "config/test.yaml", "config/mean_gap.yaml", "--dry-run",
                         "--cores", "2", "available")
        planned = _dry_run_jobs(proc.stdout + proc.stderr)
        computing = [j for j in planned if j["rule"] in ("rank_features", "classify")]
        assert computing
        for j in computing:  # the ranking jobs list its file; the classification jobs read its rankings
            inputs = " ".join(j["input"])
            assert ("otfs.rankers.mean_gap" in inputs if j["rule"] == "rank_features"
                    else "/ranking/mean-gap/" in inputs), j
        assert {j["rule"] for j in planned} <= {"rank_features", "classify", "aggregate", "collect_results",
                                                 "make_table5", "make_comparison", "available",
                                                 "feature_table", "data_notes"}, planned
    finally:
        path.unlink()
        (test_run / "config" / "mean_gap.yaml").unlink(missing_ok=True)


@pytest.mark.pipeline
def test_editing_one_adapter_reruns_only_its_classification_jobs_and_their_aggregates(test_run):
    assert _pending(test_run)[0] == []
    jobs, counts = _pending_after_edit(test_run, test_run / "src" / "otfs" / "adapters" / "coral.py")
    updated = [j for j in jobs if "Updated input files" in j["reason"]]
    assert updated, counts
    for j in updated:  # the edited file reruns the jobs that run CORAL: their manifest names it
        assert j["rule"] in ("classify", "classify_leaderboard_adapters", "classify_leaderboard_all_features",
                             "run_family_pair", "clinical_classify", "score_model_selection",
                             "score_model_selection_all_features", "boosting_run", "make_shift_regression") or j[
            "rule"].startswith(("classify_pairs_", "score_pairs_", "run_family_pair_part",
                                "classify_family_all_features")), j
        manifest = next(f for f in j["input"] if f.startswith(".snakemake/otfs-code/"))
        assert "otfs.adapters.coral" in manifest, j
    for j in jobs:  # the rest only because an upstream job reruns: aggregates, tables, figures
        assert j in updated or "Input files updated by another job" in j["reason"], j
    assert not {"rank_features", "build_cache", "clinical_rank"} & set(counts)
    # and of the classification jobs, only CORAL's: every job of another adapter is left as it is
    assert counts["classify"] == sum(1 for j in updated if j["rule"] == "classify")
