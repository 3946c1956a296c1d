"""Snakemake wrapper of otfs_workflow.stages.acquisition (rule acquire)."""

from otfs_workflow.stages import acquisition, job, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "acquisition"):
    acquisition.run(
        manifest_path=smk.input.manifest,
        relpath=smk.params.relpath,
        output=smk.output.raw,
        dataset=getattr(smk.params, "config_name", None) or smk.wildcards.dataset,
        dataset_cfg=smk.params.dataset,
    )
