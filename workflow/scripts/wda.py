"""Snakemake wrapper of otfs_workflow.stages.wda (rules wda_evaluate, wda_ablation_evaluate, wda_curves)."""

from otfs_workflow.stages import job, snakemake_object, wda

sm = snakemake_object()
with job(sm.log[0], sm.threads, "wda", code=sm.input.code):
    if sm.rule == "wda_evaluate":
        wda.evaluate(
            dataset=sm.wildcards.dataset,
            paths=list(sm.input.raw),
            method=sm.wildcards.method,
            cfg=sm.params.wda,
            output=sm.output.tsv,
        )
    elif sm.rule == "wda_ablation_evaluate":
        wda.ablation(
            dataset=sm.wildcards.dataset,
            paths=list(sm.input.raw),
            variant=sm.wildcards.variant,
            cfg=sm.params.wda,
            output=sm.output.tsv,
        )
    elif sm.rule == "wda_curves":
        wda.curves(
            dataset=sm.wildcards.dataset,
            paths=list(sm.input.raw),
            method=sm.wildcards.method,
            cfg=sm.params.wda,
            output=sm.output.tsv,
        )
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
