"""Shared fixtures: generated data and the location of the real data mirror."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from otfs_benchmarks.end_to_end import copy_workflow as _copy_workflow

REPO = Path(__file__).resolve().parents[1]


def _reads_the_built_run(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    names = info.names_closure if info is not None else ()
    return "test_run_results" in names and "test_run" not in names


def _xdist_group(item) -> str | None:
    """The group of tests that must run in one pytest-xdist worker (``make test`` runs
    ``-n auto --dist loadgroup``): every test of the shared ``test_run`` (they edit its files
    and run Snakemake in it, one after the other), and a module's tests that share a
    module-scoped fixture (computed once per worker). Others go wherever a worker is free."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    if "test_run" in info.names_closure:
        return "test_run"
    for defs in info.name2fixturedefs.values():
        if defs and defs[-1].scope == "module":
            return item.nodeid.split("::")[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(config, items):
    """Each test gets its pytest-xdist group (:func:`_xdist_group`). Tests marked ``slurm`` start a SLURM
    cluster on this machine: they run when OTFS_TEST_SLURM=1 (CI sets it) and are deselected otherwise."""
    for item in items:
        group = _xdist_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    # the tests that read the built run from another worker than the test_run group's come last: that worker
    # runs the others while the group's worker builds it
    items.sort(key=lambda item: _reads_the_built_run(item))
    if os.environ.get("OTFS_TEST_SLURM") == "1":
        return
    deselected = [item for item in items if item.get_closest_marker("slurm")]
    if deselected:
        items[:] = [item for item in items if not item.get_closest_marker("slurm")]
        config.hook.pytest_deselected(items=deselected)


def _check_loadgroup(item):
    """Under ``--dist loadgroup`` pytest-xdist sends a group's tests to one worker by adding ``@group`` to their
    ids. pytest 9.2 ignores that (pytest-dev/pytest-xdist#1386), and every worker would build its own
    ``test_run``: fail each grouped test, naming the cause, rather than run the suite at twice the cost."""
    if getattr(item.config.option, "loadgroup", False) and item.get_closest_marker("xdist_group") \
            and "@" not in item.nodeid:
        pytest.fail(f"pytest-xdist --dist loadgroup did not group this test: pytest {pytest.__version__} with "
                    "this pytest-xdist ignores the groups (pytest-dev/pytest-xdist#1386); install the pinned "
                    "versions (make setup: envs/requirements.txt) or run without -n", pytrace=False)


# --- speed classes: a test that starts a process is marked (`make test-fast` leaves those out) ----------
#: The markers of a test that may start processes (Snakemake, a fresh interpreter, a tool).
PROCESS_MARKERS = ("pipeline", "subprocess", "slurm")


def _starts_processes(item) -> bool:
    return any(item.get_closest_marker(m) for m in PROCESS_MARKERS)


#: Functions whose process runs once per interpreter, its answer kept for the interpreter's life: which test
#: starts it depends on the order the tests run in, so it is none of theirs (loky's count of physical cores,
#: ``lscpu``; the import graph of otfs_workflow.codedeps, grimp in a fresh interpreter).
_ONCE_PER_INTERPRETER = {("loky/backend/context.py", "_count_physical_cores_linux"),
                         ("otfs_workflow/codedeps.py", "_grimp_imports")}


def _importing() -> bool:
    """Whether a module is being imported, or a once-per-interpreter function runs (``_ONCE_PER_INTERPRETER``):
    a process a module starts when first imported (Snakemake's SLURM plug-in runs ``which sacct``) is that
    import's, done once per interpreter, not the test's."""
    import traceback

    for frame in traceback.extract_stack():
        if frame.filename.startswith("<frozen importlib._bootstrap"):
            return True
        if any(frame.filename.endswith(f) and frame.name == name for f, name in _ONCE_PER_INTERPRETER):
            return True
    return False


class _ProcessGuard:
    """Records every ``subprocess.Popen`` a test starts (subprocess.run, check_output... all go through it),
    but those of a module's first import (:func:`_importing`)."""

    def __init__(self):
        self.started: list[str] = []
        self._original = None

    def __enter__(self):
        self._original = original = subprocess.Popen.__init__
        started = self.started

        def init(popen, args, *a, **kw):
            if not _importing():
                started.append(args if isinstance(args, str) else " ".join(map(str, args))[:200])
            return original(popen, args, *a, **kw)

        subprocess.Popen.__init__ = init
        return self

    def __exit__(self, *exc):
        subprocess.Popen.__init__ = self._original
        return False


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    _check_loadgroup(item)
    if _starts_processes(item):
        return (yield)
    with _ProcessGuard() as guard:
        try:
            return (yield)
        finally:
            item.stash[_STARTED] = list(guard.started)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test without a process marker (``PROCESS_MARKERS``) fails if it, or a fixture it set up, started a
    process: the fast suite (``-m "not pipeline and not subprocess"``) must start none."""
    if _starts_processes(item):
        return (yield)
    with _ProcessGuard() as guard:
        result = yield
    started = item.stash.get(_STARTED, []) + guard.started
    if started and os.environ.get("OTFS_AUDIT_PROCESSES"):  # list them instead (marking a suite's tests)
        with open(os.environ["OTFS_AUDIT_PROCESSES"], "a", encoding="utf-8") as fh:
            fh.write(f"{item.nodeid}\t{started[0][:100]!r}\n")
    elif started:
        pytest.fail(f"this test starts {len(started)} process(es) ({started[0]!r}...) without a marker: mark it "
                    "@pytest.mark.subprocess (or pipeline), so that the fast suite leaves it out", pytrace=False)
    return result


_STARTED = pytest.StashKey[list]()


#: CI sets OTFS_REQUIRE_ALL_TESTS=1: a test that would skip for a missing extra or missing data fails instead.
REQUIRE_ALL = os.environ.get("OTFS_REQUIRE_ALL_TESTS") == "1"


def unavailable(what: str, how: str, *, module_level: bool = False):
    """Skip the test, saying what it needs and how to enable it; with OTFS_REQUIRE_ALL_TESTS=1, fail."""
    message = f"needs {what}: {how}"
    if REQUIRE_ALL:
        pytest.fail(f"{message} (OTFS_REQUIRE_ALL_TESTS=1: no test may skip)", pytrace=False)
    pytest.skip(message, allow_module_level=module_level)


def require_module(name: str, extra: str, *, module_level: bool = False):
    """Import an optional dependency, or skip naming the extra that installs it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        unavailable(f"the Python package {name!r}", f"pip install -e '.[{extra}]' (or make setup)",
                    module_level=module_level)


def mirror_dir() -> Path:
    """The Office-Caltech mirror: $OTFS_DATA_MIRROR, else ../shared beside the repo; skips where there is none."""
    env = os.environ.get("OTFS_DATA_MIRROR")
    candidates = [Path(p) for p in env.split(os.pathsep)] if env else []
    candidates.append(REPO.parent / "shared" / "data" / "office-caltech")
    for c in candidates:
        if (c / "surf" / "dslr.mat").is_file():
            return c.resolve()
    unavailable("the Office-Caltech data mirror",
                "set OTFS_DATA_MIRROR to the folder holding surf/*.mat and images/ (CI uses ../shared/data/office-caltech)")


def shift_mirror_dir() -> Path:
    """The shift data families' mirror: $OTFS_SHIFT_MIRROR, else ../shared beside the repo; skips where there is
    none."""
    env = os.environ.get("OTFS_SHIFT_MIRROR")
    path = Path(env) if env else REPO.parent / "shared" / "data" / "shift"
    if not (path / "MANIFEST.tsv").is_file():
        unavailable("the shift data mirror", f"set OTFS_SHIFT_MIRROR to the folder of the shift data families "
                    f"(not at {path}; CI uses ../shared/data/shift)")
    return path.resolve()


def uci_mirror_dir() -> Path:
    """The UCI mirror: $OTFS_UCI_MIRROR, else ../shared beside the repo; skips where there is none."""
    env = os.environ.get("OTFS_UCI_MIRROR")
    path = Path(env) if env else REPO.parent / "shared" / "data" / "uci"
    if not path.is_dir():
        unavailable("the UCI data mirror", f"set OTFS_UCI_MIRROR to the folder holding the UCI files (not at {path}; "
                    "CI uses ../shared/data/uci)")
    return path


@pytest.fixture(scope="session")
def mirror() -> Path:
    return mirror_dir()


def docs_block(page: str, first_line: str, language: str = "python") -> str:
    """The code block of ``docs/<page>`` whose first line is ``first_line`` (a comment naming its file): the
    tests run the documentation's walk-throughs as written."""
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    for block in re.findall(rf"```{language}\n(.*?)```", text, flags=re.S):
        if block.startswith(first_line + "\n"):
            return block
    raise AssertionError(f"docs/{page} has no {language} block starting with {first_line!r}")


def install_distribution(site: Path, name: str, entry_points: str, modules: dict[str, str] | None = None) -> Path:
    """A distribution in ``site`` as pip leaves it: its ``modules`` (file name -> source) and a dist-info
    folder whose ``entry_points.txt`` is ``entry_points``. Put ``site`` on the path to install it."""
    site.mkdir(parents=True, exist_ok=True)
    for fname, text in (modules or {}).items():
        (site / fname).parent.mkdir(parents=True, exist_ok=True)
        (site / fname).write_text(text)
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    return site


def sklearn_checks(estimators):
    """``pytest.param(estimator, check)`` for scikit-learn's estimator checks of each of ``estimators``,
    except the array-API ones, which need optional array libraries and would only be skipped."""
    from sklearn.utils.estimator_checks import estimator_checks_generator

    for est in estimators:
        for estimator, check in estimator_checks_generator(est, legacy=True):
            name = getattr(check, "func", check).__name__
            if "array_api" not in name:
                yield pytest.param(estimator, check, id=f"{estimator!r}-{name}")


def shifted_domains(n_s=120, n_t=150, d=40, k=4, n_classes=5, seed=0):
    """Two domains sharing class structure, with ``k`` features shifted in the target.

    Every feature carries class signal (a class mean) plus noise. In the
    target domain the last ``k`` features carry the opposite signal: the
    feature that was high for a class is low for it, as when an acquisition
    change inverts a contrast. Per-domain z-scoring cannot undo this.
    """
    rng = np.random.RandomState(seed)
    means = 2.0 * rng.randn(n_classes, d)
    ys = rng.randint(n_classes, size=n_s)
    yt = rng.randint(n_classes, size=n_t)
    Xs = means[ys] + 0.5 * rng.randn(n_s, d)
    Xt = means[yt] + 0.5 * rng.randn(n_t, d)
    shifted = np.arange(d - k, d)
    Xt[:, shifted] = -means[yt][:, shifted] + 0.5 * rng.randn(n_t, k)
    return Xs, ys, Xt, yt, shifted


def toy_caches(folder: Path, seed: int):
    """Two domain caches, ``src`` and ``tgt``, of a 3-class toy pair (:func:`shifted_domains`, 12 features).

    Returns ``(caches, (Xs, ys, Xt, yt))``: the caches' paths by domain, as
    the stages take them, and the arrays written (cached labels are 1..K).
    """
    from otfs_workflow.data.cache import DomainData, write_cache

    Xs, ys, Xt, yt, _ = shifted_domains(n_s=60, n_t=70, d=12, k=2, n_classes=3, seed=seed)
    caches = {}
    for dom, X, y in (("src", Xs, ys + 1), ("tgt", Xt, yt + 1)):
        caches[dom] = str(Path(folder) / f"{dom}.h5")
        write_cache(caches[dom], feature_set="toy", dataset="toy", domains={dom: DomainData(dom, X, y)},
                    class_names=["a", "b", "c"], preprocessing=[])
    return caches, (Xs, ys, Xt, yt)


# --- the pipeline, run for real (tests/test_pipeline.py, tests/test_cluster.py) ----
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
ROWS_PER_PAIR_ITERATION = 3 * 5  # orders x feature counts of the test grid


def copy_workflow(dest: Path) -> Path:
    return _copy_workflow(REPO, dest)


def snakemake_env() -> dict[str, str]:
    """The environment the tests run Snakemake in: the data mirrors set, no PYTHONPATH of this process."""
    env = {**os.environ, "OTFS_DATA_MIRROR": str(mirror_dir()), "OTFS_UCI_MIRROR": str(uci_mirror_dir())}
    shift = Path(os.environ.get("OTFS_SHIFT_MIRROR") or REPO.parent / "shared" / "data" / "shift")
    if shift.is_dir():  # the shift data families: built by `available` where present
        env["OTFS_SHIFT_MIRROR"] = str(shift)
    env.pop("PYTHONPATH", None)
    return env


def snakemake(workdir: Path, *args: str, check: bool = True, pythonpath: str | None = None
              ) -> subprocess.CompletedProcess:
    """Run Snakemake on a copy of the workflow; ``pythonpath``: folders of plug-in packages to add."""
    env = snakemake_env()
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    proc = subprocess.run(
        [*SNAKEMAKE, "--snakefile", str(workdir / "Snakefile"), "--directory", str(workdir), *args],
        capture_output=True, text=True, env=env, cwd=workdir,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Job counts from the 'Job stats' table of a dry run."""
    counts, in_table = {}, False
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("job") and "count" in line:
            in_table = True
            continue
        if in_table:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                if parts[0] == "total":
                    break
                counts[parts[0]] = int(parts[1])
    return counts


def _built_run(tmp_path_factory) -> Path:
    """Every target of the test configuration, built once with 2 cores for the whole session: by the first
    pytest-xdist worker that asks, under a lock in the workers' shared temporary folder, the others waiting on
    it. Beside it, taken before any test reruns a job there: a copy of the whole run (``<run>-pristine``, its
    jobs' recorded warnings in ``logs/conditions`` as the run left them) and the values of its outputs
    (``<run>-values.json``, tests/values.py)."""
    import fcntl

    require_module("torch", "extraction")  # the test configuration extracts EfficientNet-Lite0 features
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    work, failed = root / "run_cores2", root / "run_cores2.failed"
    with open(root / "run_cores2.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if failed.exists():
            pytest.fail(f"the test configuration's run failed in another worker:\n{failed.read_text()}")
        if not (root / "run_cores2.done").exists():
            try:
                copy_workflow(work)
                snakemake(work, "--configfile", "config/test.yaml", "--cores", "2", "available")
            except BaseException as exc:
                failed.write_text(str(exc)[-20000:])
                raise
            from .values import digests

            shutil.copytree(work, root / "run_cores2-pristine", symlinks=True)
            (root / "run_cores2-values.json").write_text(json.dumps(digests(work), indent=0))
            (root / "run_cores2.done").touch()
    return work


@pytest.fixture(scope="session")
def test_run(tmp_path_factory):
    """The test configuration's `available`, built once (:func:`_built_run`); the tests that use it run in one
    pytest-xdist worker, one after the other (they rerun jobs and edit files there)."""
    return _built_run(tmp_path_factory)


@pytest.fixture(scope="session")
def test_run_results(tmp_path_factory):
    """The test configuration's `available` as built, before any test reran a job there (a copy): for tests
    that only read it, in any pytest-xdist worker."""
    work = _built_run(tmp_path_factory)
    return work.parent / f"{work.name}-pristine"


@pytest.fixture
def built_run_copy(test_run_results, tmp_path):
    """A copy of the test configuration's built `available` of the test's own (times and Snakemake's records
    kept: it plans nothing), for a test that runs more targets in it, in any pytest-xdist worker."""
    return Path(shutil.copytree(test_run_results, tmp_path / "run", symlinks=True))
