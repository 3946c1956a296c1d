"""otfs_workflow.snakemake_scheduler: one pending re-evaluation timer instead of a chain per finished job."""

import threading
import time

import pytest

from otfs_benchmarks.scheduler import run
from otfs_workflow.snakemake_scheduler import coalesce_reevaluations


class _Scheduler:
    """The part of Snakemake's JobScheduler the patch touches: a semaphore and the method, as shipped."""

    def __init__(self):
        self._open_jobs = threading.Semaphore(0)

    def _schedule_reevalutation(self, delay):
        threading.Timer(delay, lambda: self._open_jobs.release()).start()


def _wakes(scheduler, within):
    n, end = 0, time.monotonic() + within
    while scheduler._open_jobs.acquire(timeout=max(end - time.monotonic(), 0)):
        n += 1
    return n


def test_requests_made_while_a_timer_is_pending_are_dropped_and_the_chain_goes_on():
    class Shipped(_Scheduler):
        pass

    class Patched(_Scheduler):
        pass

    assert coalesce_reevaluations(Patched) and coalesce_reevaluations(Patched)  # twice: still one wrapper
    shipped, patched = Shipped(), Patched()
    for s in (shipped, patched):
        for _ in range(20):  # twenty scheduling rounds ask for a re-evaluation in 0.05 s
            s._schedule_reevalutation(0.05)
    assert _wakes(shipped, 0.5) == 20
    assert _wakes(patched, 0.5) == 1
    patched._schedule_reevalutation(0.05)  # the round the timer woke asks for the next one: it is scheduled
    assert _wakes(patched, 0.5) == 1


def test_a_class_without_the_method_is_left_as_it_is():
    class Other:
        pass

    assert coalesce_reevaluations(Other) is False and not hasattr(Other, "_schedule_reevalutation")


def test_snakemakes_scheduler_has_the_method_the_workflow_patches():
    from snakemake.scheduling.job_scheduler import JobScheduler

    assert coalesce_reevaluations(JobScheduler)
    assert coalesce_reevaluations() and "otfs_workflow.snakemake_scheduler" in JobScheduler._schedule_reevalutation.__doc__


@pytest.mark.subprocess
def test_a_real_run_needs_far_fewer_scheduling_rounds(tmp_path):
    shipped, patched = run(n_jobs=40, sleep_s=0.3, cores=2, folder=tmp_path)
    assert not shipped["coalesce"] and patched["coalesce"]
    assert list((tmp_path / "out").iterdir()) and len(list((tmp_path / "out").iterdir())) == 40
    # as shipped, every finished job adds a timer chain that never ends: rounds grow with jobs x seconds;
    # patched: about one round per finished job, plus one per second
    assert patched["rounds"] <= 2 * 40 + patched["wall_s"] + 5
    assert shipped["rounds"] > 2 * patched["rounds"]


_SIGTERM_WHILE_LOCKED = """
import os, signal, sys, threading
from snakemake.scheduling.job_scheduler import JobScheduler
from otfs_workflow.snakemake_scheduler import safe_sigterm
if sys.argv[1] == "patched":
    assert safe_sigterm(JobScheduler)
scheduler = object.__new__(JobScheduler)  # the attributes the handler and the loop share, as __init__ sets them
scheduler._lock, scheduler._open_jobs, scheduler._user_kill = threading.Lock(), threading.Semaphore(0), None
signal.signal(signal.SIGTERM, scheduler.exit_gracefully)  # as JobScheduler.__init__ installs it
with scheduler._lock:  # the scheduling loop collecting finished jobs or selecting new ones
    os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here, in this thread
    sum(range(1000))
woken = scheduler._open_jobs.acquire(timeout=10)  # the loop waits for its next round
print(scheduler._user_kill, woken)
"""


@pytest.mark.subprocess
def test_a_sigterm_while_the_scheduler_holds_its_lock_no_longer_deadlocks():
    # Snakemake's SIGTERM handler takes the scheduler's (non-reentrant) lock; a signal handler runs in the main
    # thread, which is the scheduling loop: a SIGTERM that arrives while the loop holds the lock waits forever
    # (seen as a hung `snakemake --cores 2` after `kill`). The patched handler sets the flag and wakes the loop.
    import subprocess
    import sys

    patched = subprocess.run([sys.executable, "-c", _SIGTERM_WHILE_LOCKED, "patched"], capture_output=True,
                             text=True, timeout=60)
    assert patched.returncode == 0, patched.stderr
    assert patched.stdout.split() == ["graceful", "True"]
    try:
        shipped = subprocess.run([sys.executable, "-c", _SIGTERM_WHILE_LOCKED, "shipped"], capture_output=True,
                                 text=True, timeout=8)
    except subprocess.TimeoutExpired:
        shipped = None
    assert shipped is None, ("Snakemake's own SIGTERM handler no longer deadlocks while the lock is held: "
                             f"otfs_workflow.snakemake_scheduler.safe_sigterm may be removed ({shipped.stdout!r})")


def _class_of_the_installed_code(folder, name="Scheduler"):
    """A class whose two methods are the installed Snakemake's, from its source file (never the live, possibly
    patched, class), written to a module of ``folder`` so that their source can be read again."""
    import ast
    import importlib.util
    import inspect

    from otfs_workflow.snakemake_scheduler import BUGGY_CODE, _job_scheduler

    tree = ast.parse(inspect.getsource(inspect.getmodule(_job_scheduler())))
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "JobScheduler")
    body = [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name in BUGGY_CODE]
    path = folder / f"{name.lower()}_copy.py"
    path.write_text(ast.unparse(ast.ClassDef(name=name, bases=[], keywords=[], body=body, decorator_list=[])) + "\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), body


def test_the_patches_apply_where_snakemakes_code_has_the_bug_and_nowhere_else(tmp_path):
    import ast
    import hashlib

    from otfs_workflow.snakemake_scheduler import BUGGY_CODE, apply_patches

    # the installed release's two methods are the buggy code the fingerprints name
    buggy, body = _class_of_the_installed_code(tmp_path)
    assert {f.name: hashlib.sha256(ast.dump(f).encode()).hexdigest() for f in body} == BUGGY_CODE
    assert apply_patches(buggy, environ={}) == {"_schedule_reevalutation": True, "exit_gracefully": True}
    assert "otfs_workflow.snakemake_scheduler" in buggy._schedule_reevalutation.__doc__
    assert apply_patches(buggy, environ={}) == {"_schedule_reevalutation": True, "exit_gracefully": True}

    class Fixed:  # a release whose methods differ: left as they are, and no error
        def _schedule_reevalutation(self, delay):
            return "fixed upstream"

        def exit_gracefully(self, *args):
            return "fixed upstream"

    assert apply_patches(Fixed, environ={}) == {"_schedule_reevalutation": False, "exit_gracefully": False}
    assert Fixed()._schedule_reevalutation(1) == "fixed upstream" and Fixed().exit_gracefully() == "fixed upstream"
    assert apply_patches(object, environ={}) == {"_schedule_reevalutation": False, "exit_gracefully": False}
    other, _ = _class_of_the_installed_code(tmp_path, "Other")
    assert apply_patches(other, environ={"OTFS_UNPATCHED_SNAKEMAKE": "1"}) == {
        "_schedule_reevalutation": False, "exit_gracefully": False}
    assert "otfs" not in (other._schedule_reevalutation.__doc__ or "")
