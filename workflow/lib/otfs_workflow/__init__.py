"""The pipeline of otfs: what the Snakemake workflow runs around the library.

Stages (one module per rule family, :mod:`otfs_workflow.stages`), the
configuration's checks, the experimental protocol (pairs, seeds, counts),
acquisition and the HDF5 feature cache, aggregation, tables and figures,
provenance, code manifests, cluster helpers and the benchmarks. None of it is
installed with the library: the Snakefile puts ``workflow/`` on the jobs'
path. The methods themselves are the library's, :mod:`otfs`.
"""
