"""Benchmarks: the library's implementations against the straightforward ones.

:mod:`otfs_benchmarks.reference` holds the straightforward implementations,
:mod:`otfs_benchmarks.cases` the cases at the paper's sizes,
:mod:`otfs_benchmarks.harness` the timing and memory protocol,
:mod:`otfs_benchmarks.suite` the command line (``python -m otfs_benchmarks``)
and :mod:`otfs_benchmarks.scaling` the scaling study of the ranking.
"""
