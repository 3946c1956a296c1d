"""The multi-domain classifiers of the boosting experiment, one per file: every module here registers
its class in :data:`otfs.boosting.DOMAIN_CLASSIFIERS` when the registry is first read."""
