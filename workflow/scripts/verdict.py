"""Snakemake wrapper of otfs_workflow.stages.verdict (rule make_shift_verdict)."""

from pathlib import PurePosixPath

from otfs_workflow.provenance import package_versions, provenance_record
from otfs_workflow.stages import job, snakemake_object, verdict

sm = snakemake_object()
with job(sm.log[0], sm.threads, "verdict", code=sm.input.code):
    families = dict(sm.params.families)

    def by_family(paths, depth):  # results/shift/<family>/.../file: the family is the folder `depth` up
        return {PurePosixPath(p).parents[depth].name: p for p in paths}


    provenance = provenance_record(inputs=[*sm.input.leaderboards, *sm.input.k_selection],
                                   params={"families": families, "reference": sm.params.reference,
                                           "relevance": sm.params.relevance, "alpha": sm.params.alpha},
                                   config=sm.config)
    provenance["versions"].update(package_versions(("pyarrow",)))
    verdict.run(
        leaderboards=dict(sm.params.leaderboards),
        k_selection=by_family(sm.input.k_selection, 1),
        families=families,
        n_features=dict(sm.params.n_features),
        protocol=dict(sm.params.protocol),
        reference=sm.params.reference,
        relevance=sm.params.relevance,
        per_feature=list(sm.params.per_feature),
        alpha=sm.params.alpha,
        adapters=list(sm.params.adapters),
        primary_metrics=dict(sm.params.primary_metrics),
        provenance=provenance,
        outputs=dict(sm.output.items()),
        recommend=sm.input.get("recommend"),
    )
