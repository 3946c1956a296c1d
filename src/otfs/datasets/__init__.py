"""The dataset readers, one per file: every module here registers its reader in
:data:`otfs.data.readers.DATASET_READERS` when the registry is first read."""
