"""Snakemake wrapper of otfs_workflow.stages.recommend.evaluate (rule recommend_evaluation)."""

from otfs_workflow.io import read_parquet
from otfs_workflow.provenance import package_versions, provenance_record
from otfs_workflow.stages import job, recommend, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "recommend", code=sm.input.code):
    cfg = sm.params.evaluation
    provenance = provenance_record(inputs=list(sm.input.summaries),
                                   params={"evaluation": cfg, "rankers": sm.params.rankers,
                                           "families": sm.params.families},
                                   config=sm.config)
    provenance["versions"].update(package_versions(("skada", "pyarrow", "statsmodels")))
    recommend.evaluate(
        summaries=[read_parquet(p) for p in sm.input.summaries],
        families=sm.params.families,
        rankers=sm.params.rankers,
        scorers=sm.params.scorers,
        data_rules=sm.params.data_rules,
        gate_margin=cfg["gate_margin"],
        alpha=cfg["alpha"],
        provenance=provenance,
        outputs=dict(sm.output.items()),
        reference=cfg["reference"],
        relevance=cfg["relevance"],
        weighting=cfg["weighting"],
        fixed_k_rule=cfg["fixed_k_rule"],
    )
