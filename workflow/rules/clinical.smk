# The clinical experiment (section 5.2): a voxel table (generated, or the
# user's), then per repetition the sampling, Algorithm 1 and Algorithm 2, the
# AUC curves of each adapter, their aggregate, and Table 4, Figures 3 and 4.
# Every step is in workflow/lib/otfs_workflow/stages/clinical.py over src/otfs/datasets/_clinical.py;
# the targets' files are otfs_workflow.plan.CLINICAL_TARGETS.


CLINICAL_REPETITIONS = list(range(config["clinical"]["iterations"]))
CLINICAL_SOURCE = (
    "synthetic data, otfs.datasets.make_clinical_data"
    if config["clinical"]["data"] == "synthetic"
    else config["clinical"]["data"]
)


# A missing voxel table, and feature counts beyond its width, named before anything runs.
P.check_clinical_data()


rule clinical_data:
    input:
        unpack(lambda w: P.clinical_user_table()),
        code=script_code("clinical.py"),
    output:
        voxels="data/clinical/voxels.h5",
    log:
        "logs/clinical/data.log",
    benchmark:
        "logs/benchmarks/clinical_data/clinical.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        clinical=config["clinical"],
    script:
        "../scripts/clinical.py"


rule clinical_rank:
    input:
        voxels="data/clinical/voxels.h5",
        code=script_code("clinical.py"),
    output:
        ranking="results/clinical/runs/ranking/{repetition}.json",
    log:
        "logs/clinical/ranking/{repetition}.log",
    benchmark:
        "logs/benchmarks/clinical_rank/{repetition}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=6144,
        runtime=20,
    params:
        clinical=config["clinical"],
        ranking={k: config["ranking"][k] for k in OT_RANKER_SETTINGS["ranking"]},
        tie_break=config["sample_selection"]["tie_break"],
    script:
        "../scripts/clinical.py"


rule clinical_classify:
    input:
        voxels="data/clinical/voxels.h5",
        ranking="results/clinical/runs/ranking/{repetition}.json",
        code=script_code("clinical.py", adapters="adapter"),
    output:
        curves="results/clinical/runs/classification/{adapter}/{repetition}.tsv",
    log:
        "logs/clinical/classification/{adapter}/{repetition}.log",
    benchmark:
        "logs/benchmarks/clinical_classify/{adapter}/{repetition}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        clinical=config["clinical"],
        adapter_params=lambda w: adapter_params(w.adapter),
    script:
        "../scripts/clinical.py"


rule clinical_aggregate:
    input:
        curves=expand(
            "results/clinical/runs/classification/{{adapter}}/{repetition}.tsv",
            repetition=CLINICAL_REPETITIONS,
        ),
        rankings=expand(
            "results/clinical/runs/ranking/{repetition}.json",
            repetition=CLINICAL_REPETITIONS,
        ),
        voxels="data/clinical/voxels.h5",
        code=script_code("clinical.py"),
    output:
        long="results/clinical/aggregate/{adapter}/long.tsv",
        summary="results/clinical/aggregate/{adapter}/summary.tsv",
        provenance="results/clinical/aggregate/{adapter}/provenance.json",
    log:
        "logs/clinical/aggregation/{adapter}.log",
    benchmark:
        "logs/benchmarks/clinical_aggregate/{adapter}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        clinical=config["clinical"],
        run=lambda w: {"adapter": w.adapter, "repetitions": len(CLINICAL_REPETITIONS)},
    script:
        "../scripts/clinical.py"


rule make_table4:
    input:
        voxels="data/clinical/voxels.h5",
        code=script_code("clinical_report.py"),
    output:
        csv=report(
            "results/clinical/table4/table4.csv",
            caption="../report/table4.rst",
            category="5.2 Clinical data",
            subcategory="Table 4",
        ),
        md="results/clinical/table4/table4.md",
        tex="results/clinical/table4/table4.tex",
    log:
        "logs/clinical/table4.log",
    benchmark:
        "logs/benchmarks/make_table4/clinical.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        clinical=config["clinical"],
        caption=f"Table 4: voxels per class and domain ({CLINICAL_SOURCE}), beside the paper's counts.",
    script:
        "../scripts/clinical_report.py"


rule plot_figure3:
    input:
        voxels="data/clinical/voxels.h5",
        code=script_code("clinical_report.py"),
    output:
        pdf="results/clinical/figure3/figure3.pdf",
        png=report(
            "results/clinical/figure3/figure3.png",
            caption="../report/figure3.rst",
            category="5.2 Clinical data",
            subcategory="Figure 3",
        ),
        csv="results/clinical/figure3/figure3.csv",
    log:
        "logs/clinical/figure3.log",
    benchmark:
        "logs/benchmarks/plot_figure3/clinical.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        clinical=config["clinical"],
    script:
        "../scripts/clinical_report.py"


rule plot_figure4:
    input:
        aggregates=expand(
            "results/clinical/aggregate/{adapter}/summary.tsv",
            adapter=config["clinical"]["adapters"],
        ),
        rankings=expand(
            "results/clinical/runs/ranking/{repetition}.json",
            repetition=CLINICAL_REPETITIONS,
        ),
        code=script_code("clinical_report.py"),
    output:
        pdf="results/clinical/figure4/figure4.pdf",
        png=report(
            "results/clinical/figure4/figure4.png",
            caption="../report/figure4.rst",
            category="5.2 Clinical data",
            subcategory="Figure 4",
        ),
        csv="results/clinical/figure4/figure4.csv",
    log:
        "logs/clinical/figure4.log",
    benchmark:
        "logs/benchmarks/plot_figure4/clinical.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        clinical=config["clinical"],
        aggregates={
            a: f"results/clinical/aggregate/{a}"
            for a in config["clinical"]["adapters"]
        },
    script:
        "../scripts/clinical_report.py"


# --- targets -------------------------------------------------------------------
# Local rules (seconds, little memory, or fetching data): never submitted to a cluster.
localrules:
    clinical_aggregate,
    make_table4,
    plot_figure3,
    plot_figure4,


rule table4:
    input:
        CLINICAL_TARGETS["table4"],


rule figure3:
    input:
        CLINICAL_TARGETS["figure3"],


rule figure4:
    input:
        CLINICAL_TARGETS["figure4"],
