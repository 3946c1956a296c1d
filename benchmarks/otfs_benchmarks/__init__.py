"""Benchmarks: the library's implementations against the straightforward ones.

:mod:`otfs_benchmarks.reference` holds the straightforward implementations,
:mod:`otfs_benchmarks.cases` the cases at the paper's sizes,
:mod:`otfs_benchmarks.harness` the timing and memory protocol,
:mod:`otfs_benchmarks.suite` the command line (``python -m otfs_benchmarks``)
and :mod:`otfs_benchmarks.scaling` the scaling study of the ranking.
"""

from pathlib import Path as _Path

#: The checkout this package lies in (``benchmarks/otfs_benchmarks/`` is two levels below it): the workflow that
#: the end-to-end, main-job and scheduler benchmarks copy or put on a toy workflow's path. ``make setup`` installs
#: the package in editable mode, so this is the repository's folder.
REPO = _Path(__file__).resolve().parents[2]


def checkout() -> _Path:
    """:data:`REPO`, checked to hold the workflow (its ``Snakefile`` and ``workflow/lib``); an installed copy of
    this package outside a checkout is an error saying so."""
    if not (REPO / "Snakefile").is_file() or not (REPO / "workflow" / "lib").is_dir():
        raise RuntimeError(f"otfs_benchmarks lies in {REPO}, which is not a checkout of the workflow (no Snakefile "
                           "or workflow/lib there): install it from one in editable mode (make setup)")
    return REPO
