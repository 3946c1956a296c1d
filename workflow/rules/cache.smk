# Stage cache: one HDF5 file per feature set with every domain preprocessed.


rule build_cache:
    output:
        h5="data/cache/{feature_set}.h5",
    input:
        mat=lambda w: [
            f"data/raw/{fs_config(w.feature_set)['dataset']}/{fs_config(w.feature_set)['folder']}/{d}.mat"
            for d in fs_domains(w.feature_set)
        ],
        manifest=lambda w: fs_dataset(w.feature_set)["manifest"],
        code=lib(
            "stages/cache.py", "data/cache.py", "data/matfile.py", "data/manifest.py",
            "data/acquisition.py", "preprocessing.py", "provenance.py",
        ),
    params:
        feature_set=lambda w: fs_config(w.feature_set),
        domains=lambda w: fs_domains(w.feature_set),
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/cache/{feature_set}.log",
    benchmark:
        "logs/benchmarks/cache/{feature_set}.tsv",
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    script:
        "../scripts/cache.py"
