# Stage extraction: images -> ImageNet-pretrained network -> penultimate-layer
# features, one HDF5 file per extractor and domain, in the feature-cache format
# without preprocessing. Runs once; the feature sets built on it (rule
# build_cache) add their preprocessing. Needs the `extraction` extra (PyTorch).


rule extract_features:
    input:
        images=lambda w: images_dir(w.dataset, w.domain),
        image_manifest=lambda w: config["datasets"][w.dataset]["image_manifest"],
        feature_manifest=lambda w: config["datasets"][w.dataset]["manifest"],
        code=script_code("extraction.py"),
    output:
        h5="data/features/{dataset}/{extractor}/{domain}.h5",
    log:
        "logs/extraction/{dataset}/{extractor}/{domain}.log",
    benchmark:
        "logs/benchmarks/extract_features/{dataset}/{extractor}/{domain}.tsv"
    # Batches run at once, capped by --cores; the features do not depend on it.
    # No more than acquire_images' threads (PRIORITY_IMAGES says why); a
    # profile changes it with set-threads.
    priority: PRIORITY_IMAGES
    conda:
        "../../envs/extraction.yaml"
    threads: IMAGE_THREADS
    resources:
        mem_mb=4096,
        runtime=30,
    params:
        extractor=lambda w: get_extractor(w.extractor).name,
        batch_size=config["extraction"]["batch_size"],
        progress=config["extraction"]["progress"],
    script:
        "../scripts/extraction.py"
