"""Snakemake wrapper of otfs.stages.wda (rules wda_evaluate, wda_ablation_evaluate, wda_curves)."""

from otfs.stages import job, wda

sm = snakemake  # noqa: F821
with job(sm.log[0], sm.threads, "wda", code=sm.input.code):
    if sm.rule == "wda_evaluate":
        wda.evaluate(sm.wildcards.dataset, list(sm.input.raw), sm.wildcards.method, sm.params.wda, sm.output.tsv)
    elif sm.rule == "wda_ablation_evaluate":
        wda.ablation(sm.wildcards.dataset, list(sm.input.raw), sm.wildcards.variant, sm.params.wda, sm.output.tsv)
    elif sm.rule == "wda_curves":
        wda.curves(sm.wildcards.dataset, list(sm.input.raw), sm.wildcards.method, sm.params.wda, sm.output.tsv)
    else:
        raise ValueError(f"unknown rule {sm.rule!r}")
