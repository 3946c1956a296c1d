"""The selection rules of the number of features, one per file: every module here registers its rule in
:data:`otfs.model_selection.SELECTION_RULES` when the registry is first read. Files starting with ``_``
hold shared code, not rules."""
