"""Snakemake wrapper of otfs_workflow.stages.cache (rule build_cache)."""

from otfs_workflow.stages import cache, job

with job(snakemake.log[0], snakemake.threads, "cache", code=snakemake.input.code):  # noqa: F821
    if "features" in snakemake.input.keys():  # noqa: F821
        cache.run_extracted(
            feature_set=snakemake.wildcards.feature_set,  # noqa: F821
            domain=snakemake.wildcards.domain,  # noqa: F821
            fs_cfg=snakemake.params.feature_set,  # noqa: F821
            features_path=snakemake.input.features,  # noqa: F821
            output=snakemake.output.h5,  # noqa: F821
        )
    else:
        cache.run(
            feature_set=snakemake.wildcards.feature_set,  # noqa: F821
            domain=snakemake.wildcards.domain,  # noqa: F821
            fs_cfg=snakemake.params.feature_set,  # noqa: F821
            manifest_path=snakemake.input.get("manifest"),  # noqa: F821
            raw_paths=dict(zip(snakemake.params.raw_files, snakemake.input.get("raw", []), strict=True)),  # noqa: F821
            local_paths=list(snakemake.input.get("local", [])),  # noqa: F821
            output=snakemake.output.h5,  # noqa: F821
        )
