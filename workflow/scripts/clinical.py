"""Snakemake wrapper of otfs_workflow.stages.clinical (rules clinical_data, clinical_rank, clinical_classify,
clinical_aggregate)."""

from otfs_workflow.stages import clinical, job, snakemake_object

sm = snakemake_object()
with job(sm.log[0], sm.threads, "clinical", code=sm.input.code):
    cfg = sm.params.clinical
    out = dict(sm.output.items())
    if sm.rule == "clinical_data":
        clinical.prepare(
            cfg=cfg,
            output=sm.output.voxels,
            user_file=getattr(sm.input, "table", None),
        )
    elif sm.rule == "clinical_rank":
        clinical.rank(
            voxels=sm.input.voxels,
            cfg=cfg,
            repetition=int(sm.wildcards.repetition),
            ranking_cfg=sm.params.ranking,
            tie_break=sm.params.tie_break,
            output=sm.output.ranking,
        )
    elif sm.rule == "clinical_classify":
        clinical.classify(
            voxels=sm.input.voxels,
            ranking_path=sm.input.ranking,
            cfg=cfg,
            adapter=sm.wildcards.adapter,
            output=sm.output.curves,
            adapter_params=sm.params.adapter_params,
        )
    elif sm.rule == "clinical_aggregate":
        clinical.aggregate(
            classifications=list(sm.input.curves),
            rankings=list(sm.input.rankings),
            cfg=cfg,
            outputs=out,
            voxels=sm.input.voxels,
            params=sm.params.run,
        )
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
