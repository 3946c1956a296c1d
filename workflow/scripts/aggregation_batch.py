"""Snakemake wrapper of otfs_workflow.stages.aggregation for every (ranker, adapter) of one feature set's grid
(rules aggregate_family and aggregate_leaderboard): one aggregation per entry of params.runs, in its order, each
of the files rule aggregate writes."""

from otfs_workflow.stages import aggregation, job, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "aggregation_batch", code=smk.input.code):
    runs = list(smk.params.runs)
    pairs = len(smk.input.runs) // len(runs)
    for i, run in enumerate(runs):
        tables = list(smk.input.runs)[i * pairs:(i + 1) * pairs]
        folder = f"/classification/{run['ranker']}/{run['adapter']}/"
        if not all(folder in t for t in tables) or not smk.output.long[i].endswith(
                f"/{run['ranker']}/{run['adapter']}/{run['grid']}/long.tsv"):
            raise RuntimeError(f"{smk.rule}: the inputs or outputs of {run} are not in params.runs' order")
        aggregation.run(
            run_tables=tables,
            caches=list(smk.input.caches),
            outputs={kind: smk.output[kind][i] for kind in ("long", "per_pair", "summary", "provenance")},
            params=run,
            config=smk.config,
        )
