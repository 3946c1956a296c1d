"""The adapters, one per file: every module here registers its adapter in
:data:`otfs.adaptation.ADAPTERS` when the registry is first read. Files
starting with ``_`` hold shared code, not methods."""
