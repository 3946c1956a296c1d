"""Aggregating per-run results into the paper's summaries.

The paper reports, for each pair, the mean and standard deviation over the
iterations, and in its tables' "Mean" rows the mean over pairs of those
per-pair means and of those per-pair standard deviations (population
standard deviation, as ``numpy.std`` computes it in the released code).

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018.
"""

from __future__ import annotations

import pandas as pd

from otfs_workflow.protocol import COLUMNS

__all__ = ["COLUMNS", "KEYS", "mean_over_pairs", "per_pair_summary"]

#: Columns identifying one curve point of one configuration.
KEYS = ["feature_set", "ranker", "adapter", "grid", "order", "n_features"]


def per_pair_summary(long: pd.DataFrame) -> pd.DataFrame:
    """Mean, population std and count of accuracy over iterations, per pair.

    Parameters
    ----------
    long : DataFrame
        The tidy results table (one row per run and curve point).
    """
    g = long.groupby([*KEYS, "pair"], sort=True)["accuracy"]
    out = g.agg(mean="mean", std=lambda a: a.std(ddof=0), iterations="count").reset_index()
    seconds = long.groupby([*KEYS, "pair"], sort=True)["seconds"].sum().reset_index(drop=True)
    out["seconds_total"] = seconds.to_numpy()
    return out


def mean_over_pairs(long: pd.DataFrame) -> pd.DataFrame:
    """The paper's "Mean" row: mean over pairs of per-pair means and stds.

    Also reports ``pairs`` (how many pairs entered the mean) and
    ``seconds_total`` (adaptation time summed over pairs and iterations, as
    in Table 3).
    """
    per_pair = per_pair_summary(long)
    g = per_pair.groupby(KEYS, sort=True)
    return g.agg(
        accuracy=("mean", "mean"),
        std=("std", "mean"),
        pairs=("pair", "nunique"),
        seconds_total=("seconds_total", "sum"),
    ).reset_index()
