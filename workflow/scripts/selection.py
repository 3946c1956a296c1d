"""Snakemake wrapper of otfs_workflow.stages.selection (rule select_samples)."""

from otfs_workflow.stages import domain_caches, job, selection

with job(snakemake.log[0], snakemake.threads, "selection", code=snakemake.input.code):  # noqa: F821
    w = snakemake.wildcards  # noqa: F821
    selection.run(
        caches=domain_caches(snakemake.input.caches),  # noqa: F821
        feature_set=w.feature_set,
        pair=w.pair,
        iterations=snakemake.params.iterations,  # noqa: F821
        strategy=w.selection,
        per_class=snakemake.params.per_class,  # noqa: F821
        tie_break=snakemake.params.tie_break,  # noqa: F821
        emd_max_iter=snakemake.params.emd_max_iter,  # noqa: F821
        output=snakemake.output.json,  # noqa: F821
    )
