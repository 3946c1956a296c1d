"""Snakemake wrapper of otfs_workflow.stages.extraction (rule extract_features)."""

from otfs_workflow.data.manifest import read_manifest
from otfs_workflow.stages import extraction, job
from otfs_workflow.stages.acquisition import sources_for

with job(snakemake.log[0], snakemake.threads, "extraction", code=snakemake.input.code):  # noqa: F821
    extraction.run(
        extractor=snakemake.params.extractor,  # noqa: F821
        dataset=snakemake.wildcards.dataset,  # noqa: F821
        domain=snakemake.wildcards.domain,  # noqa: F821
        image_manifest=snakemake.input.image_manifest,  # noqa: F821
        feature_manifest=snakemake.input.feature_manifest,  # noqa: F821
        images_dir=snakemake.input.images,  # noqa: F821
        output=snakemake.output.h5,  # noqa: F821
        batch_size=snakemake.params.batch_size,  # noqa: F821
        threads=snakemake.threads,  # noqa: F821
        progress=snakemake.params.progress,  # noqa: F821
        # a missing image is fetched again from the dataset's sources (read from the
        # config, not a param: a new mirror path must not rerun the network)
        sources=sources_for(
            snakemake.wildcards.dataset,  # noqa: F821
            snakemake.config["datasets"][snakemake.wildcards.dataset],  # noqa: F821
            read_manifest(snakemake.input.image_manifest).meta.get("upstream_url"),  # noqa: F821
        ),
    )
