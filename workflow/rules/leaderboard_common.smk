# The leaderboard's configuration handle and input functions (its rules: leaderboard.smk).

import re

LEADERBOARD_CONFIG = config["leaderboard"]
LEADERBOARD_OUT = "results/leaderboard"


def leaderboard_feature_sets():
    """The leaderboard's feature sets that have data for a pair (the `available` scope)."""
    return target_feature_sets("available", LEADERBOARD_CONFIG["feature_sets"])


def leaderboard_aggregates(w=None):
    return [
        f"{agg('available', fs, ranker=r, adapter=a, grid=LEADERBOARD_CONFIG['grid'])}/long.tsv"
        for fs in leaderboard_feature_sets()
        for r in LEADERBOARD_CONFIG["rankers"]
        for a in LEADERBOARD_CONFIG["adapters"]
    ]


def leaderboard_rankings(w=None):
    return [
        f"results/runs/{fs}/ranking/{r}/{p}.json"
        for fs in leaderboard_feature_sets()
        for r in LEADERBOARD_CONFIG["rankers"]
        for p in scope_pairs(fs, scope_for("available", fs))
    ]


def grid_reads_d(feature_set, grid):
    """Whether ``grid``'s numbers of features include all d of ``feature_set``."""
    d = fs_n_features(feature_set)
    return d in resolve_feature_counts(grid_config(grid)["feature_counts"], d)


def leaderboard_ends(w):
    """The points of all features of the pair (rule classify_leaderboard_all_features), where the grid has d."""
    if not grid_reads_d(w.feature_set, w.grid):
        return []
    return [f"results/runs/{w.feature_set}/all_features/{w.grid}/{w.pair}.json"]


def leaderboard_pairs_ends(w):
    """The points of all features of every pair of the feature set's batch (rule
    classify_leaderboard_all_features), in batched_pairs' order, where the grid has d.
    """
    if not grid_reads_d(w.feature_set, w.grid):
        return []
    return [
        f"results/runs/{w.feature_set}/all_features/{w.grid}/{p}.json"
        for p in batched_pairs(w.feature_set)
    ]


def leaderboard_report(name, ext, caption):
    return report(
        f"{LEADERBOARD_OUT}/{name}.{ext}",
        caption=f"../report/leaderboard_{caption}.rst",
        category="Feature-shift benchmark",
    )
