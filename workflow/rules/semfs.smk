# Related method IV: zero-shot feature selection (SemFS, Wang et al.). One job
# per (pair, split of the classes into seen and unseen) runs every selector on
# the seen classes of the pair's target domain (the OT ranking also uses the
# source domain's seen classes) and k-means on the target's unseen classes.


SEMFS_CONFIG = config["semfs"]
# Its runs and the keys its jobs depend on: otfs_workflow.plan.Plan.related_runs and related_params.


rule semfs_run:
    input:
        caches=pair_caches,
        attributes=SEMFS_CONFIG["attributes"],
        code=script_code("semfs.py"),
    output:
        run="results/semfs/runs/{feature_set}/{pair}/{split}.tsv",
    log:
        "logs/semfs/{feature_set}/{pair}/{split}.log",
    benchmark:
        "logs/benchmarks/semfs_run/{feature_set}/{pair}/{split}.tsv"
    wildcard_constraints:
        split=r"\d+",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=20,
    params:
        semfs=P.related_params("semfs"),
    script:
        "../scripts/semfs.py"


rule make_semfs_table:
    input:
        runs=P.related_runs("semfs"),
        code=script_code("semfs_report.py"),
    output:
        csv=report(
            "results/semfs/table.csv",
            caption="../report/semfs_table.rst",
            category="Related methods",
            subcategory="Zero-shot feature selection",
        ),
        md="results/semfs/table.md",
        tex="results/semfs/table.tex",
        provenance="results/semfs/table.provenance.json",
    log:
        "logs/semfs/table.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        semfs=SEMFS_CONFIG,
    script:
        "../scripts/semfs_report.py"


rule plot_semfs_figure:
    input:
        runs=P.related_runs("semfs"),
        code=script_code("semfs_report.py"),
    output:
        pdf="results/semfs/figure.pdf",
        png=report(
            "results/semfs/figure.png",
            caption="../report/semfs_figure.rst",
            category="Related methods",
            subcategory="Zero-shot feature selection",
        ),
        csv="results/semfs/figure.csv",
    log:
        "logs/semfs/figure.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        semfs=SEMFS_CONFIG,
    script:
        "../scripts/semfs_report.py"


# --- targets -------------------------------------------------------------------
# Local rules (seconds, little memory, or fetching data): never submitted to a cluster.
localrules:
    make_semfs_table,
    plot_semfs_figure,


rule semfs_table:
    input:
        rules.make_semfs_table.output,


rule semfs_figure:
    input:
        rules.plot_semfs_figure.output,


rule semfs:
    input:
        rules.make_semfs_table.output,
        rules.plot_semfs_figure.output,
