"""The sample-selection strategies of Algorithm 1, one per file: every module here registers its
strategy in :data:`otfs.selection.STRATEGIES` when the registry is first read."""
