"""Stage ``selection``: draw each iteration's source subset and pair samples (Algorithm 1)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from otfs.sample_selection import select_samples
from otfs_workflow.data.cache import read_domains
from otfs_workflow.io import write_json
from otfs_workflow.protocol import derive_seed, draw_source_subset, parse_pair
from otfs_workflow.stages import source_classes


def run(caches: Mapping[str, str], feature_set: str, pair: str, iterations: Sequence[int], strategy: str, *,
        per_class, tie_break: str, emd_max_iter, output) -> dict:
    """Run every iteration of one pair and write them to one JSON file.

    Each iteration is seeded from (feature set, pair, iteration) alone, so
    its result does not depend on which other iterations share the job. The
    source subset does not depend on the strategy either, so strategies are
    compared on the same source samples. ``selection_time_s`` is each
    iteration's wall time (the ranking stage adds it to the OT rankers'
    ranking time).
    """
    source, target = parse_pair(pair)
    cache = read_domains({d: caches[d] for d in (source, target)})
    src, tgt = cache.domain(source), cache.domain(target)
    classes = source_classes(cache, pair, selection=True)
    records = []
    for iteration in iterations:
        start = time.perf_counter()
        subset_seed = derive_seed(feature_set, pair, iteration, "source_subset")
        subset = draw_source_subset(src.y, per_class, random_state=subset_seed, classes=classes,
                                    class_names=cache.class_names)
        selection_seed = derive_seed(feature_set, pair, iteration, "selection", strategy)
        try:
            matching = select_samples(
                src.X[subset], tgt.X, strategy,
                tie_break=tie_break, emd_max_iter=emd_max_iter, random_state=selection_seed,
            )
        except RuntimeError as exc:
            if "emd_max_iter" not in str(exc):
                raise
            raise RuntimeError(f"{feature_set}/{pair}, iteration {iteration}: {exc} (config: "
                               "selection.emd_max_iter)") from exc
        records.append({
            "iteration": int(iteration),
            "seed_source_subset": subset_seed,
            "seed_selection": selection_seed,
            "source_subset": subset,
            "matched_source": matching.source_index,
            "matched_target": matching.target_index,
            "flipped": matching.flipped,
            "selection_time_s": time.perf_counter() - start,
        })
    out = {
        "feature_set": feature_set,
        "pair": pair,
        "source": source,
        "target": target,
        "strategy": strategy,
        "params": {"source_per_class": per_class, "tie_break": tie_break,
                   "emd_max_iter": emd_max_iter},
        "iterations": records,
    }
    write_json(output, out, compact=True)
    return out
