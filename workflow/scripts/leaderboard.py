"""Snakemake wrapper of otfs_workflow.stages.leaderboard (rule make_leaderboard)."""

from otfs_workflow.provenance import package_versions, provenance_record
from otfs_workflow.stages import job, leaderboard, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "leaderboard", code=sm.input.code):
    cfg, grid = sm.params.leaderboard, sm.params.grid
    provenance = provenance_record(inputs=[*sm.input.aggregates, sm.input.recovery],
                                   params={"leaderboard": cfg, "grid": grid}, config=sm.config)
    # the statistics' and the Parquet writer's packages too
    provenance["versions"].update(package_versions(("scikit-posthocs", "statsmodels", "pyarrow")))
    n_its = min(grid.get("iterations") or len(sm.params.iterations), len(sm.params.iterations))
    leaderboard.run(
        long_tables=list(sm.input.aggregates),
        rankings=list(sm.input.rankings),
        recovery=sm.input.recovery,
        n_features=sm.params.n_features,
        fraction=sm.params.fraction,
        alpha=sm.params.alpha,
        reference=sm.params.reference,
        provenance=provenance,
        outputs=dict(sm.output.items()),
        caption=(f"Feature-shift leaderboard: {len(cfg['rankers'])} rankers x {len(cfg['adapters'])} adapters on "
                 f"{', '.join(sm.params.n_features)}; Descending order, {n_its} iterations per pair; "
                 f"average ranks over tasks (dataset, pair)."),
    )
