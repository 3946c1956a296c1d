"""Snakemake wrapper of otfs_workflow.stages.regression (rule make_shift_regression)."""

from otfs_workflow.provenance import package_versions, provenance_record
from otfs_workflow.stages import job, regression, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "regression", code=sm.input.code):
    provenance = provenance_record(inputs=[sm.input.mat],
                                   params={"rankers": sm.params.rankers, "adapters": sm.params.adapters,
                                           "counts": sm.params.counts, "iterations": sm.params.iterations,
                                           "selection_rules": sm.params.selection_rules},
                                   config=sm.config)
    provenance["versions"].update(package_versions(("pyarrow",)))
    regression.run(
        mat_path=sm.input.mat,
        responses=[sm.wildcards.response],
        rankers={**dict(sm.params.rankers), regression.RELEVANCE: {}},
        adapters=dict(sm.params.adapters),
        counts=sm.params.counts,
        iterations=sm.params.iterations,
        family=sm.wildcards.family,
        provenance=provenance,
        outputs=dict(sm.output.items()),
        data_rules=dict(sm.params.selection_rules),
    )
