"""otfs_workflow.snakemake_scheduler: one pending re-evaluation timer instead of a chain per finished job."""

import threading
import time

import pytest

from otfs_workflow.benchmark.scheduler import run
from otfs_workflow.snakemake_scheduler import coalesce_reevaluations

from .conftest import REPO


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


def test_the_patches_are_pinned_to_one_snakemake_release():
    import snakemake

    from otfs_workflow.snakemake_scheduler import PATCHED_SNAKEMAKE, SchedulerPatchError, apply_patches

    # the release the workflow installs (envs/requirements.txt) is the one patched
    pinned = (REPO / "envs" / "requirements.txt").read_text()
    assert f"snakemake=={PATCHED_SNAKEMAKE}\n" in pinned and snakemake.__version__ == PATCHED_SNAKEMAKE
    assert apply_patches(environ={}) is True
    # any other fails loudly, naming both versions and the way out
    with pytest.raises(SchedulerPatchError, match=r"Snakemake 9\.27\.1's scheduler .* this is Snakemake 9\.28\.0\. "
                                                  r"Install snakemake==9\.27\.1 .* OTFS_UNPATCHED_SNAKEMAKE=1"):
        apply_patches("9.28.0", environ={})
    assert apply_patches("9.28.0", environ={"OTFS_UNPATCHED_SNAKEMAKE": "1"}) is False
