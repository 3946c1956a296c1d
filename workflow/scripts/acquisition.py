"""Snakemake wrapper of otfs_workflow.stages.acquisition (rule acquire)."""

from otfs_workflow.stages import acquisition, job

with job(snakemake.log[0], snakemake.threads, "acquisition"):  # noqa: F821
    acquisition.run(
        manifest_path=snakemake.input.manifest,  # noqa: F821
        relpath=snakemake.params.relpath,  # noqa: F821
        output=snakemake.output.raw,  # noqa: F821
        dataset=getattr(snakemake.params, "config_name", None) or snakemake.wildcards.dataset,  # noqa: F821
        dataset_cfg=snakemake.params.dataset,  # noqa: F821
    )
