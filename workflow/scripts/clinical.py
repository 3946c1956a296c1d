"""Snakemake wrapper of otfs.stages.clinical (rules clinical_data, clinical_rank, clinical_classify, clinical_aggregate)."""

from otfs.stages import clinical, job

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, "clinical", code=sm.input.code):
    cfg = sm.params.clinical
    out = dict(sm.output.items())
    if sm.rule == "clinical_data":
        clinical.prepare(cfg, sm.output.voxels, user_file=getattr(sm.input, "table", None))
    elif sm.rule == "clinical_rank":
        clinical.rank(sm.input.voxels, cfg, int(sm.wildcards.repetition), sm.params.ranking,
                      sm.params.tie_break, sm.output.ranking)
    elif sm.rule == "clinical_classify":
        clinical.classify(sm.input.voxels, sm.input.ranking, cfg, sm.wildcards.adapter, sm.output.curves,
                          adapter_params=sm.params.adapter_params)
    elif sm.rule == "clinical_aggregate":
        clinical.aggregate(list(sm.input.curves), list(sm.input.rankings), cfg, out, voxels=sm.input.voxels,
                           params=sm.params.run)
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
