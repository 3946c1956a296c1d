# Stage cache: one HDF5 file per feature set and domain, preprocessed once. A
# domain whose raw file is missing blocks only the pairs that need it. A
# feature set read from files uses its dataset reader (src/otfs/datasets/, or
# an entry point), an extracted one the extraction output (rule extract_features).


rule build_cache:
    input:
        unpack(cache_inputs),
        code=script_code("cache.py"),
    output:
        h5="data/cache/{feature_set}/{domain}.h5",
    log:
        "logs/cache/{feature_set}/{domain}.log",
    benchmark:
        "logs/benchmarks/build_cache/{feature_set}/{domain}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        feature_set=lambda w: cache_config(w.feature_set),
        raw_files=lambda w: reader_files(w.feature_set, w.domain),
    script:
        "../scripts/cache.py"
