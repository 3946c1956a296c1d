"""Stage runners: one module per pipeline stage, named like its rule and script.

Each ``run`` function reads its inputs from files, calls the algorithms of
the library, and writes its outputs atomically. The Snakemake scripts in
``workflow/scripts/`` only unpack the ``snakemake`` object and call these,
so every stage can also be run and tested without Snakemake.
"""

import contextlib
import logging
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

__all__ = ["domain_caches", "job"]


@contextlib.contextmanager
def job(log_path=None, threads: int = 1, name: str = "otfs"):
    """Context of one pipeline job: logging to ``log_path`` and a thread cap.

    The BLAS/OpenMP pools are limited to the job's ``threads``, so parallel
    jobs do not oversubscribe the cores. An exception is logged with its
    traceback, then re-raised so that Snakemake marks the job failed.
    """
    handlers = [logging.StreamHandler(sys.stderr)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w", encoding="utf-8"))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    logger = logging.getLogger(name)
    start = time.perf_counter()
    try:
        with threadpool_limits(limits=max(1, int(threads))):
            yield logger
    except BaseException:
        logger.exception("job failed")
        raise
    logger.info("done in %.2f s", time.perf_counter() - start)


def domain_caches(paths) -> dict[str, str]:
    """``{domain: path}`` from cache paths named ``.../<domain>.h5``."""
    return {Path(p).stem: str(p) for p in paths}
