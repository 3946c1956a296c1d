"""Keep Snakemake's scheduler from re-running its job selection in a growing loop.

Snakemake (8.17 and later, up to at least 9.27) limits job submissions per
time span (``--max-jobs-per-timespan``, default ``100/1s``, always on). At
the end of each scheduling round, ``JobScheduler._schedule_reevalutation``
starts a ``threading.Timer`` that wakes the scheduler one time span later.
Every round starts one, including the rounds that a finished job triggers,
and each timer's round starts the next. So the timers form chains that
never end, and there is one more chain for every job that finishes. After
*n* jobs, the scheduler runs about *n* rounds per second, each measuring the
inputs of every ready job. In ``available`` (683 jobs, 2 cores), the
scheduling process's own CPU use rose from 10 % of a core to 40 % as jobs
finished, and it had started 190,000 threads by job 280. The upstream
reports are snakemake/snakemake#3804 and the discussion of #3744.

:func:`coalesce_reevaluations` changes that one method so that at most one
re-evaluation timer is pending at a time. A request made while one is
pending is dropped: the pending timer wakes the scheduler no later than the
new one would have, and the round it starts asks for the next timer. The
timer clears its mark before it wakes the scheduler, so the chain never
breaks. Nothing else of the scheduler changes; which jobs run, and their
results, do not depend on it.

Both patches replace private methods of Snakemake's scheduler, so they are
pinned to the one Snakemake release they were written and tested against,
:data:`PATCHED_SNAKEMAKE` (``envs/requirements.txt`` installs it). The
workflow calls :func:`apply_patches` when it is parsed
(``workflow/rules/common.smk``): with any other Snakemake it stops before any
job, naming both versions, unless ``OTFS_UNPATCHED_SNAKEMAKE=1`` says to run
with Snakemake's scheduler as it is (the timer chains and the SIGTERM hang
described here then come back; results do not change).
"""

from __future__ import annotations

import threading

__all__ = ["PATCHED_SNAKEMAKE", "SchedulerPatchError", "apply_patches", "coalesce_reevaluations", "replace_once",
           "safe_sigterm"]

_MARK = "_otfs_replaced"

#: The Snakemake release whose scheduler the patches were written and tested against.
PATCHED_SNAKEMAKE = "9.27.1"


class SchedulerPatchError(RuntimeError):
    """Snakemake is not the release the scheduler patches are pinned to."""


def apply_patches(version: str | None = None, environ=None) -> bool:
    """Apply :func:`coalesce_reevaluations` and :func:`safe_sigterm` to the installed Snakemake; return True.

    Raises :class:`SchedulerPatchError`, naming both versions, where Snakemake
    is not :data:`PATCHED_SNAKEMAKE`, or where either private method is not
    there; with ``OTFS_UNPATCHED_SNAKEMAKE=1`` in ``environ`` (default:
    ``os.environ``) nothing is patched and False is returned.
    """
    import os

    environ = os.environ if environ is None else environ
    if environ.get("OTFS_UNPATCHED_SNAKEMAKE") == "1":
        return False
    if version is None:
        from snakemake import __version__ as version
    if version != PATCHED_SNAKEMAKE:
        raise SchedulerPatchError(
            f"this workflow patches two private methods of Snakemake {PATCHED_SNAKEMAKE}'s scheduler (a timer "
            f"leak, snakemake/snakemake#3804, and a SIGTERM hang; otfs_workflow.snakemake_scheduler), and this is "
            f"Snakemake {version}. Install snakemake=={PATCHED_SNAKEMAKE} (envs/requirements.txt), or set "
            "OTFS_UNPATCHED_SNAKEMAKE=1 to run with Snakemake's scheduler unpatched (results are the same)."
        )
    if not (coalesce_reevaluations() and safe_sigterm()):
        raise SchedulerPatchError(f"Snakemake {version}'s JobScheduler lacks a method the patches replace: "
                                  "otfs_workflow.snakemake_scheduler")
    return True


def coalesce_reevaluations(scheduler_class=None) -> bool:
    """Patch ``scheduler_class._schedule_reevalutation`` to keep one pending timer; return whether it was patched.

    ``scheduler_class`` defaults to ``snakemake.scheduling.job_scheduler.JobScheduler``.
    Applying it twice changes nothing more. A class without that method
    (a Snakemake version without the rate limiter's loop) is left as it is,
    and False is returned.
    """
    scheduler_class = scheduler_class or _job_scheduler()
    if scheduler_class is None:
        return False

    def _schedule_reevalutation(self, delay) -> None:
        lock = self.__dict__.setdefault("_otfs_reevaluation_lock", threading.Lock())
        with lock:
            if self.__dict__.get("_otfs_reevaluation_pending"):
                return
            self._otfs_reevaluation_pending = True

        def wake():
            with lock:
                self._otfs_reevaluation_pending = False
            self._open_jobs.release()

        threading.Timer(delay, wake).start()

    return replace_once(scheduler_class, "_schedule_reevalutation", _schedule_reevalutation,
                        "at most one pending timer: otfs_workflow.snakemake_scheduler")


def safe_sigterm(scheduler_class=None) -> bool:
    """Patch ``scheduler_class.exit_gracefully`` (Snakemake's SIGTERM handler) so that it never blocks; return
    whether it was patched.

    Snakemake installs ``JobScheduler.exit_gracefully`` as the handler of
    SIGTERM. It takes the scheduler's ``threading.Lock`` and then releases
    the ``_open_jobs`` semaphore (whose condition holds another plain lock).
    A Python signal handler runs in the main thread between two bytecodes,
    and the main thread is the scheduler's loop, which holds that lock while
    it collects finished jobs and selects new ones: a SIGTERM that arrives
    then makes the handler wait for a lock its own thread holds, forever.
    Reported: about one SIGTERM in five left a ``snakemake --cores 2`` run of
    the test configuration hanging in one series of trials (a later series
    of three saw none, and ten here saw none: the lock is held for short
    spells). A SIGTERM delivered while the lock is held hangs Snakemake's
    handler every time (``tests/test_snakemake_scheduler.py``).

    The patched handler does no locking: it sets the flag the loop reads
    (one attribute write, atomic in CPython) and wakes the loop from a
    short-lived thread, which takes the semaphore's lock once the main
    thread has let go of it. Snakemake then does what it always meant to do
    on SIGTERM: it starts no new job, waits for the running ones and exits.
    A class without that method is left as it is, and False is returned.
    """
    scheduler_class = scheduler_class or _job_scheduler()
    if scheduler_class is None:
        return False

    def exit_gracefully(self, *args) -> None:
        self._user_kill = "graceful"
        threading.Thread(target=self._open_jobs.release, name="otfs-sigterm", daemon=True).start()

    return replace_once(scheduler_class, "exit_gracefully", exit_gracefully,
                        "never blocks: otfs_workflow.snakemake_scheduler.safe_sigterm")


def _job_scheduler():
    """Snakemake's ``JobScheduler`` class, or None where Snakemake is not installed."""
    try:
        from snakemake.scheduling.job_scheduler import JobScheduler
    except ImportError:
        return None
    return JobScheduler


def replace_once(owner, name: str, replacement, why: str) -> bool:
    """Set ``owner.name`` to ``replacement`` unless it was replaced already (a mark on the replacement
    says so); return False, changing nothing, where ``owner`` has no ``name`` (another Snakemake version).
    ``why`` is added to the replacement's docstring."""
    original = getattr(owner, name, None)
    if original is None:
        return False
    if getattr(original, _MARK, False):
        return True
    setattr(replacement, _MARK, True)
    replacement.__doc__ = (original.__doc__ or "") + f"\n({why})"
    setattr(owner, name, replacement)
    return True
