# Stage acquisition: one hash-verified raw file from the first source that has it
# (local folder, mirror folders, pinned upstream URL): any file of a dataset's
# manifest that its reader asks for. Library code is not an input: the output is
# identified by its hash, whatever code fetched it.


rule acquire:
    input:
        manifest=lambda w: config["datasets"][w.dataset]["manifest"],
    output:
        raw="data/raw/{dataset}/{folder}/{file}",
    log:
        "logs/acquisition/{dataset}/{folder}/{file}.log",
    benchmark:
        "logs/benchmarks/acquire/{dataset}/{folder}/{file}.tsv"
    wildcard_constraints:
        folder=r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*",  # a manifest path's folders
        file=r"[A-Za-z0-9_-]+\.[A-Za-z0-9_.]+",  # a file name with its extension (not a folder of images)
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=256,
        runtime=15,
    params:
        relpath=lambda w: f"{w.folder}/{w.file}",
        dataset=lambda w: source_settings(w.dataset),
    script:
        "../scripts/acquisition.py"


# The images of one domain, as one folder (<class>/<file>), every file verified.
# An interrupted or failed run keeps what it fetched for the next attempt.
rule acquire_images:
    input:
        manifest=lambda w: config["datasets"][w.dataset]["image_manifest"],
    output:
        images=directory("data/raw/{dataset}/images/{domain}"),
    log:
        "logs/acquisition/{dataset}/images/{domain}.log",
    benchmark:
        "logs/benchmarks/acquire_images/{dataset}/{domain}.tsv"
    priority: PRIORITY_IMAGES
    conda:
        "../../envs/otfs.yaml"
    threads: IMAGE_THREADS
    resources:
        mem_mb=256,
        runtime=30,
    params:
        dataset=lambda w: source_settings(w.dataset),
    script:
        "../scripts/acquisition_images.py"
