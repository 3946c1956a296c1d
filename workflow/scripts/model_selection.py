"""Snakemake wrapper of otfs_workflow.stages.model_selection.report (rule make_model_selection)."""

from otfs_workflow.provenance import package_versions, provenance_record
from otfs_workflow.stages import job, model_selection, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "model_selection", code=sm.input.code):
    cfg = sm.params.model_selection
    provenance = provenance_record(inputs=list(sm.input.tables), params={"model_selection": cfg, "grid": sm.params.grid},
                                   config=sm.config)
    provenance["versions"].update(package_versions(("skada", "pyarrow")))
    model_selection.report(
        pair_tables=list(sm.input.tables),
        rules=cfg["rules"],
        provenance=provenance,
        outputs=dict(sm.output.items()),
        caption=(f"Label-free choice of the number of features: {len(cfg['rankers'])} rankers x "
                 f"{len(cfg['adapters'])} adapters; scorers with the classifier {cfg['classifier']} on "
                 f"{cfg['cv']['n_splits']} validation split(s); the accuracy is the paper's 1-NN's at k*."),
    )
