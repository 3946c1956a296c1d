"""Snakemake wrapper of otfs_workflow.stages.cache (rule build_cache)."""

from otfs_workflow.stages import cache, job, snakemake_object

smk = snakemake_object()

with job(smk.log[0], smk.threads, "cache", code=smk.input.code):
    if "features" in smk.input.keys():
        cache.run_extracted(
            feature_set=smk.wildcards.feature_set,
            domain=smk.wildcards.domain,
            fs_cfg=smk.params.feature_set,
            features_path=smk.input.features,
            output=smk.output.h5,
        )
    else:
        cache.run(
            feature_set=smk.wildcards.feature_set,
            domain=smk.wildcards.domain,
            fs_cfg=smk.params.feature_set,
            manifest_path=smk.input.get("manifest"),
            raw_paths=dict(zip(smk.params.raw_files, smk.input.get("raw", []), strict=True)),
            local_paths=list(smk.input.get("local", [])),
            output=smk.output.h5,
        )
