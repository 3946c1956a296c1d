"""Snakemake wrapper of otfs_workflow.stages.extraction (rule extract_features)."""

from otfs_workflow.data.manifest import read_manifest
from otfs_workflow.stages import extraction, job, snakemake_object
from otfs_workflow.stages.acquisition import sources_for

smk = snakemake_object()

with job(smk.log[0], smk.threads, "extraction", code=smk.input.code):
    extraction.run(
        extractor=smk.params.extractor,
        dataset=smk.wildcards.dataset,
        domain=smk.wildcards.domain,
        image_manifest=smk.input.image_manifest,
        feature_manifest=smk.input.feature_manifest,
        images_dir=smk.input.images,
        output=smk.output.h5,
        batch_size=smk.params.batch_size,
        threads=smk.threads,
        progress=smk.params.progress,
        # a missing image is fetched again from the dataset's sources (read from the
        # config, not a param: a new mirror path must not rerun the network)
        sources=sources_for(
            smk.wildcards.dataset,
            smk.config["datasets"][smk.wildcards.dataset],
            read_manifest(smk.input.image_manifest).meta.get("upstream_url"),
        ),
    )
