"""The feature rankers, one per file: every module here registers its ranker in
:data:`otfs.ranking.FEATURE_RANKERS` when the registry is first read."""
