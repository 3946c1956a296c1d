"""The dimension reducers of the WDA experiment, one per file: every module here registers its
factory in :data:`otfs.dimred.REDUCERS` when the registry is first read."""
