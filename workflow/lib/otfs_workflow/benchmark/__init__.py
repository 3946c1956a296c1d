"""Benchmarks: the library's implementations against the straightforward ones.

:mod:`otfs_workflow.benchmark.reference` holds the straightforward implementations,
:mod:`otfs_workflow.benchmark.cases` the cases at the paper's sizes,
:mod:`otfs_workflow.benchmark.harness` the timing and memory protocol,
:mod:`otfs_workflow.benchmark.suite` the command line (``python -m otfs_workflow.benchmark``)
and :mod:`otfs_workflow.benchmark.scaling` the scaling study of the ranking.
"""
