"""The feature rankers of the zero-shot experiment, one per file: every module here registers its
function in :data:`otfs.semfs.ZERO_SHOT_SELECTORS` when the registry is first read."""
