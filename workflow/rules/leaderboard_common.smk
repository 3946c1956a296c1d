# The leaderboard's configuration handle and input functions (its rules: leaderboard.smk).


LEADERBOARD_CONFIG = config["leaderboard"]
LEADERBOARD_OUT = "results/leaderboard"


# Its inputs (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
leaderboard_feature_sets = P.leaderboard_feature_sets


def leaderboard_ends(w):
    """The point of all features of the pair, where the grid has d."""
    return P.all_features_ends(w.feature_set, w.grid, [w.pair])


def leaderboard_pairs_ends(w):
    """The points of all features of every pair of the feature set's batch, in batched_pairs' order."""
    return P.all_features_ends(w.feature_set, w.grid, batched_pairs(w.feature_set))


def leaderboard_report(name, ext, caption):
    return report(
        f"{LEADERBOARD_OUT}/{name}.{ext}",
        caption=f"../report/leaderboard_{caption}.rst",
        category="Feature-shift benchmark",
    )
