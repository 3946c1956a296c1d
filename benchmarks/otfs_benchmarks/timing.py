"""Timing by pytest-benchmark: the benchmark cases, and the runs timed once.

:func:`time_cases` runs one pytest session in this process, with this file as its only
test module: one test per (case, implementation), parametrized by :class:`CasePlugin`.
Each test

1. builds the case's data once per case (not timed);
2. calls the implementation once under :mod:`tracemalloc`, for its output (compared
   with the reference's) and the peak memory of the call (numpy and SciPy allocate
   through Python's allocator, so their arrays are counted; BLAS scratch buffers are
   not);
3. times it with pytest-benchmark's ``benchmark.pedantic``: ``repeats`` rounds of one
   call each, the median reported. An implementation whose traced call took longer
   than ``max_seconds`` is timed over one round.

pytest-benchmark writes its own JSON (``--benchmark-json``), which its
``pytest-benchmark compare`` reads; :func:`time_cases` returns the table's rows.

:func:`time_once` times runs of minutes that change what they run on (a pipeline
built from nothing, the authors' script, Table 3 at d = 4,096) the same way, each
over one round without a warm-up (:class:`OncePlugin`): a second round would time
another thing (a pipeline with nothing left to do). :func:`time_rounds` times runs
that can be repeated (a dry run) over several rounds after a warm-up, by any clock
pytest-benchmark is given (``--benchmark-timer``), such as :func:`children_cpu_time`,
the CPU time of the processes a run started.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import time
import tracemalloc
from pathlib import Path

import pytest

__all__ = ["CasePlugin", "OncePlugin", "children_cpu_time", "time_cases", "time_once", "time_rounds"]


def _traced_call(f, data):
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    try:
        out = f(data)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, seconds, peak / 2**20


class _TimingPlugin:
    """What both plug-ins share: the fixture that hands the plug-in to the module's test, the exception a timed
    call raised (``error``), and what was not measured (:meth:`missing`)."""

    error = None

    @pytest.fixture
    def timing_plugin(self):
        return self

    def missing(self) -> list[str]:
        raise NotImplementedError


class CasePlugin(_TimingPlugin):
    """The pytest plug-in of one timing session: the cases, their data and their results.

    Parameters
    ----------
    cases : list of otfs_benchmarks.harness.Case
    repeats : int or None
        Timed rounds per implementation (None: each case's own).
    max_seconds : float
        An implementation whose traced call takes longer is timed over one round.
    """

    def __init__(self, cases, repeats=None, max_seconds=20.0):
        self.cases = list(cases)
        self.repeats = repeats
        self.max_seconds = max_seconds
        self.data = {}
        self.measured = {}  # (case, implementation) -> dict

    def missing(self) -> list[str]:
        return [f"{c.name} ({n})" for c in self.cases for n, f in c.implementations.items()
                if f is not None and (c.name, n) not in self.measured]

    def pytest_generate_tests(self, metafunc):
        if "timed_item" in metafunc.fixturenames:
            pairs = [(i, name) for i, case in enumerate(self.cases)
                     for name, f in case.implementations.items() if f is not None]
            metafunc.parametrize("timed_item", pairs, ids=[f"{self.cases[i].name}-{name}" for i, name in pairs])

    def run(self, benchmark, item):
        index, name = item
        case = self.cases[index]
        if index not in self.data:
            self.data = {index: case.setup()}  # one case's data in memory at a time
        data = self.data[index]
        f = case.implementations[name]
        if case.threads is not None:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=case.threads):
                self._time(benchmark, case, name, f, data)
        else:
            self._time(benchmark, case, name, f, data)

    def _time(self, benchmark, case, name, f, data):
        out, seconds, peak = _traced_call(f, data)
        repeats = case.repeats if self.repeats is None else self.repeats
        rounds = 1 if seconds > self.max_seconds else repeats
        benchmark.group = case.name
        benchmark.extra_info.update(case=case.name, implementation=name, peak_mb=peak)
        benchmark.pedantic(f, args=(data,), rounds=rounds, iterations=1)
        stats = benchmark.stats.stats
        self.measured[case.name, name] = {"output": out, "seconds": stats.median, "runs": stats.rounds,
                                          "peak_mb": peak}


def children_cpu_time() -> float:
    """The CPU seconds (user and system) of this process's children that have ended and been waited for
    (:func:`os.times`): as pytest-benchmark's clock, a call that runs a process to its end is timed by that
    process's CPU time, as ``/usr/bin/time`` reports it, not by the wall clock."""
    t = os.times()
    return t.children_user + t.children_system


class OncePlugin(_TimingPlugin):
    """The pytest plug-in of a session that times each of ``runs`` (``{name: f}``, ``f()`` returning the run's
    output) over ``rounds`` rounds after ``warmup_rounds`` untimed ones (one and none by default), in their order;
    ``measured`` gets ``{name: {"output", "seconds", "min", "max", "rounds"}}`` (``seconds`` the median, ``output``
    the last round's), ``error`` the exception a run raised."""

    def __init__(self, runs, rounds: int = 1, warmup_rounds: int = 0):
        if rounds < 1 or warmup_rounds < 0:
            raise ValueError(f"rounds must be >= 1 and warmup_rounds >= 0; got {rounds} and {warmup_rounds}")
        self.runs = dict(runs)
        self.rounds, self.warmup_rounds = int(rounds), int(warmup_rounds)
        self.measured = {}

    def missing(self) -> list[str]:
        return [name for name in self.runs if name not in self.measured]

    def pytest_generate_tests(self, metafunc):
        if "timed_item" in metafunc.fixturenames:
            metafunc.parametrize("timed_item", list(self.runs), ids=list(self.runs))

    def run(self, benchmark, name):
        benchmark.group = name
        try:
            out = benchmark.pedantic(self.runs[name], rounds=self.rounds, iterations=1,
                                     warmup_rounds=self.warmup_rounds)
        except BaseException as exc:
            self.error = exc
            raise
        stats = benchmark.stats.stats
        self.measured[name] = {"output": out, "seconds": stats.median, "min": stats.min, "max": stats.max,
                               "rounds": stats.rounds}


def test_implementation(benchmark, timed_item, timing_plugin):
    timing_plugin.run(benchmark, timed_item)


def _session(plugin, json_path, workdir, timer: str | None = None) -> None:
    """A pytest session of this module's test, parametrized by ``plugin``. The exception a timed call raised is
    raised again, as it was; a failed session or a call not measured otherwise is a RuntimeError naming them."""
    if importlib.util.find_spec("pytest_benchmark") is None:
        raise ImportError("the benchmarks time with pytest-benchmark, which is not installed: "
                          "pip install pytest-benchmark (make setup installs it)")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    ini = workdir / "pytest.ini"
    ini.write_text("[pytest]\n")  # the session reads none of the repository's settings
    args = [__file__, "-c", str(ini), "--rootdir", str(workdir), "--confcutdir", str(Path(__file__).parent),
            "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-s", "--benchmark-columns=min,median,max,rounds",
            "--benchmark-sort=name", "--benchmark-group-by=group"]
    if json_path is not None:
        args.append(f"--benchmark-json={json_path}")
    if timer is not None:
        args.append(f"--benchmark-timer={timer}")
    # pytest-benchmark times nothing inside a pytest-xdist worker (it reads this variable); a
    # session started from one (the suite's own tests) is a session of its own
    worker = os.environ.pop("PYTEST_XDIST_WORKER", None)
    try:
        status = int(pytest.main(args, plugins=[plugin]))
    finally:
        if worker is not None:
            os.environ["PYTEST_XDIST_WORKER"] = worker
    if plugin.error is not None:
        raise plugin.error
    missing = plugin.missing()
    if status != 0 or missing:
        raise RuntimeError(f"the timing session ended with status {status}; not measured: "
                           + (", ".join(missing) or "none"))


def time_cases(cases, *, repeats=None, max_seconds=20.0, json_path=None, workdir) -> dict:
    """Time every implementation of ``cases``; return ``{(case, implementation): measurement}``.

    Each measurement has the implementation's ``output``, its median ``seconds``,
    ``runs`` (timed rounds) and ``peak_mb``. ``workdir`` holds the session's
    (empty) configuration file; ``json_path``, where given, gets pytest-benchmark's JSON.
    Raises RuntimeError naming the implementations that were not measured.
    """
    plugin = CasePlugin(cases, repeats=repeats, max_seconds=max_seconds)
    _session(plugin, json_path, workdir)
    return plugin.measured


def time_once(runs, *, workdir, json_path=None) -> dict:
    """Time each of ``runs`` (``{name: f}``) once, in order, by pytest-benchmark; return
    ``{name: {"output": f(), "seconds": its time}}``.

    ``workdir`` holds the session's (empty) configuration file; ``json_path``, where given, gets
    pytest-benchmark's JSON. The exception a run raises is raised again, as it was; a run not measured
    otherwise is a RuntimeError naming it.
    """
    plugin = OncePlugin(runs)
    _session(plugin, json_path, workdir)
    return plugin.measured


def time_rounds(runs, *, rounds: int, workdir, warmup_rounds: int = 1, timer: str | None = None,
                json_path=None) -> dict:
    """Time each of ``runs`` (``{name: f}``) over ``rounds`` rounds after ``warmup_rounds`` untimed ones, in
    order, by pytest-benchmark with the clock ``timer`` (a dotted name, such as
    ``"otfs_benchmarks.timing.children_cpu_time"``; pytest-benchmark's own by default); return
    ``{name: {"output", "seconds", "min", "max", "rounds"}}``, ``seconds`` the median.

    As :func:`time_once`, but for runs that time the same thing each round.
    """
    plugin = OncePlugin(runs, rounds=rounds, warmup_rounds=warmup_rounds)
    _session(plugin, json_path, workdir, timer=timer)
    return plugin.measured
