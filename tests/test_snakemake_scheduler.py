"""otfs.snakemake_scheduler: one pending re-evaluation timer instead of a chain per finished job."""

import threading
import time

from otfs.benchmark.scheduler import run
from otfs.snakemake_scheduler import coalesce_reevaluations


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
    assert coalesce_reevaluations() and "otfs.snakemake_scheduler" in JobScheduler._schedule_reevalutation.__doc__


def test_a_real_run_needs_far_fewer_scheduling_rounds(tmp_path):
    shipped, patched = run(n_jobs=40, sleep_s=0.3, cores=2, folder=tmp_path)
    assert not shipped["coalesce"] and patched["coalesce"]
    assert list((tmp_path / "out").iterdir()) and len(list((tmp_path / "out").iterdir())) == 40
    # as shipped, every finished job adds a timer chain that never ends: rounds grow with jobs x seconds;
    # patched: about one round per finished job, plus one per second
    assert patched["rounds"] <= 2 * 40 + patched["wall_s"] + 5
    assert shipped["rounds"] > 2 * patched["rounds"]
