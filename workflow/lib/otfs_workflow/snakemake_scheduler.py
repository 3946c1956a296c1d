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

Both patches replace private methods of Snakemake's scheduler, so each applies
only where the method is the one with the bug: :func:`apply_patches` compares
the installed method's code (its syntax tree, comments and layout aside) with
the code of the releases that have it, :data:`BUGGY_CODE` (the same in each Snakemake 9
release read from its wheel: 9.0.0, 9.3.0, 9.6.0, 9.10.0, 9.14.0, 9.22.0,
9.25.2, 9.27.0 and 9.27.1). Any other code
(a release that fixed it, or changed it) is left as it is, and the parse goes
on: a patch never stops a run. The timer chains are reported upstream as
snakemake/snakemake#3804; the SIGTERM hang is not yet (``docs/robustness.md``
holds the report to file).
"""

from __future__ import annotations

import threading

__all__ = ["BUGGY_CODE", "apply_patches", "code_fingerprint", "coalesce_reevaluations", "replace_once", "safe_sigterm"]

_MARK = "_otfs_replaced"

#: SHA-256 of the syntax tree (``ast.dump``) of each private method a patch replaces, as the Snakemake 9
#: releases read (9.0.0 to 9.27.1, module docstring) have it: the code with the bug.
BUGGY_CODE = {
    "_schedule_reevalutation": "ee5c7f57b195e0c0b4be9eb826b5a00960015828e02955aea136e2f438d5a07b",
    "exit_gracefully": "f5ac1462d998769b78b27625446e1e22f2e6c29660412112f9822b4a9122390c",
}


def code_fingerprint(function) -> str | None:
    """SHA-256 of ``function``'s syntax tree (``ast.dump`` of its definition: comments and layout aside); None
    where its source cannot be read."""
    import ast
    import hashlib
    import inspect
    import textwrap

    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return None
    return hashlib.sha256(ast.dump(ast.parse(source).body[0]).encode()).hexdigest()


def apply_patches(scheduler_class=None, environ=None) -> dict[str, bool]:
    """Apply :func:`coalesce_reevaluations` and :func:`safe_sigterm` where the installed Snakemake's method is
    the buggy one (:data:`BUGGY_CODE`); return ``{method: whether it was patched}``. Never raises for another
    Snakemake: its methods are left as they are. ``OTFS_UNPATCHED_SNAKEMAKE=1`` in ``environ`` (default:
    ``os.environ``) patches nothing."""
    import os

    environ = os.environ if environ is None else environ
    scheduler_class = scheduler_class or _job_scheduler()
    done = dict.fromkeys(BUGGY_CODE, False)
    if environ.get("OTFS_UNPATCHED_SNAKEMAKE") == "1" or scheduler_class is None:
        return done
    for name, patch in (("_schedule_reevalutation", coalesce_reevaluations), ("exit_gracefully", safe_sigterm)):
        method = getattr(scheduler_class, name, None)
        if method is None:
            continue
        if getattr(method, _MARK, False) or code_fingerprint(method) == BUGGY_CODE[name]:
            done[name] = patch(scheduler_class)
    return done


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
    """Snakemake's ``JobScheduler`` class (``snakemake.scheduling.job_scheduler`` from 9.10 on,
    ``snakemake.scheduler`` before), or None where Snakemake is not installed."""
    try:
        from snakemake.scheduling.job_scheduler import JobScheduler
    except ImportError:
        try:
            from snakemake.scheduler import JobScheduler
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
