"""Benchmarks: the library's implementations against the straightforward ones.

:mod:`otfs.benchmark.reference` holds the straightforward implementations,
:mod:`otfs.benchmark.cases` the cases at the paper's sizes,
:mod:`otfs.benchmark.harness` the timing and memory protocol,
:mod:`otfs.benchmark.suite` the command line (``python -m otfs.benchmark``)
and :mod:`otfs.benchmark.scaling` the scaling study of the ranking.
"""
