"""Snakemake wrapper of otfs_workflow.stages.acquisition.run_images (rule acquire_images)."""

from otfs_workflow.stages import acquisition, job, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "acquisition"):
    acquisition.run_images(
        manifest_path=smk.input.manifest,
        domain=smk.wildcards.domain,
        output=smk.output.images,
        dataset=smk.wildcards.dataset,
        dataset_cfg=smk.params.dataset,
        threads=smk.threads,
    )
