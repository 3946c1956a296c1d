"""Stage ``shift_recovery``: which kinds of planted shift each feature ranker finds.

On the generated domains of the ``planted-shifts`` dataset reader, whose
shifted features are known, every ranker ranks the features of the source
against the target; the planted features should come last. For each kind of
shift, the recovery is the fraction of its planted features among the
``n_planted`` last-ranked features (precision at k with k the number of
planted features, split by kind). One seed per row; the table gives the mean
over seeds and its standard deviation.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from otfs_workflow.io import write_csv, write_json, write_text

__all__ = ["recovery", "run", "table"]


def recovery(order, planted: Mapping[str, Sequence[int]]) -> dict[str, float]:
    """For each kind, the fraction of its planted features among the last ``n_planted`` of ``order``."""
    n_planted = sum(len(v) for v in planted.values())
    last = set(np.asarray(order)[-n_planted:].tolist())
    return {kind: len(last & set(cols)) / len(cols) for kind, cols in planted.items()}


def run(rankers: Sequence[str], ranker_params: Mapping[str, Mapping], data_params: Mapping, seeds: Sequence[int],
        output) -> pd.DataFrame:
    """Fit every ranker on the planted-shift domains of every seed; write one row per (ranker, seed, kind)."""
    from otfs.datasets import get_reader
    from otfs_workflow.stages.ranking import build_ranker

    rows = []
    for seed in seeds:
        reader = get_reader("planted-shifts", {**data_params, "seed": int(seed)})
        src, tgt = reader.read("source", {}, None), reader.read("target", {}, None)
        planted = reader.planted()
        for name in rankers:
            ranker = build_ranker(name, ranker_params.get(name))
            if "random_state" in ranker.get_params():
                ranker.set_params(random_state=int(seed))
            start = time.perf_counter()
            ranker.fit(src.X, src.y, X_target=tgt.X)
            seconds = time.perf_counter() - start
            for kind, value in recovery(ranker.order_, planted).items():
                rows.append({"ranker": name, "seed": int(seed), "kind": kind, "recovered": value,
                             "seconds": seconds})
    df = pd.DataFrame(rows)
    write_csv(df, output)
    return df


def table(runs_path, outputs: Mapping[str, str], provenance: Mapping, caption: str) -> pd.DataFrame:
    """Mean (± std over seeds) recovery per ranker and kind of shift, as CSV and Markdown."""
    from otfs.datasets.planted_shifts import SHIFT_KINDS

    runs = pd.read_csv(runs_path)
    g = runs.groupby(["ranker", "kind"], sort=False)["recovered"]
    summary = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=0), "seeds": g.size()}).reset_index()
    seconds = runs.groupby("ranker", sort=False)["seconds"].mean()
    summary["mean_fit_seconds"] = summary["ranker"].map(seconds)
    write_csv(summary, outputs["csv"], float_format="%.4g")
    wide = summary.pivot(index="ranker", columns="kind", values="mean")[list(SHIFT_KINDS)]
    std = summary.pivot(index="ranker", columns="kind", values="std")[list(SHIFT_KINDS)]
    order = list(dict.fromkeys(runs["ranker"]))
    lines = [caption, "", "| ranker | " + " | ".join(SHIFT_KINDS) + " | fit (s) |",
             "|---|" + "---|" * (len(SHIFT_KINDS) + 1)]
    for r in order:
        cells = [f"{wide.loc[r, k]:.2f} ± {std.loc[r, k]:.2f}" for k in SHIFT_KINDS]
        lines.append(f"| {r} | " + " | ".join(cells) + f" | {seconds[r]:.3g} |")
    write_text(outputs["md"], "\n".join(lines) + "\n")
    write_json(outputs["provenance"], provenance)
    return summary
