"""Snakemake wrapper of otfs_workflow.stages.acquisition.run_images (rule acquire_images)."""

from otfs_workflow.stages import acquisition, job

with job(snakemake.log[0], snakemake.threads, "acquisition"):  # noqa: F821
    acquisition.run_images(
        manifest_path=snakemake.input.manifest,  # noqa: F821
        domain=snakemake.wildcards.domain,  # noqa: F821
        output=snakemake.output.images,  # noqa: F821
        dataset=snakemake.wildcards.dataset,  # noqa: F821
        dataset_cfg=snakemake.params.dataset,  # noqa: F821
        threads=snakemake.threads,  # noqa: F821
    )
