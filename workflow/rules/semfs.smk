# Related method IV: zero-shot feature selection (SemFS, Wang et al.). One job
# per (pair, split of the classes into seen and unseen) runs every selector on
# the seen classes of the pair's target domain (the OT ranking also uses the
# source domain's seen classes) and k-means on the target's unseen classes.
rule semfs_run:
    output:
        run="results/semfs/runs/{feature_set}/{pair}/{split}.tsv",
    input:
        caches=pair_caches,
        attributes=Z["attributes"],
        code=script_code("semfs.py"),
    params:
        semfs={k: Z[k] for k in SEMFS_KEYS},
    wildcard_constraints:
        split=r"\d+",
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/semfs/{feature_set}/{pair}/{split}.log",
    benchmark:
        "logs/benchmarks/semfs_run/{feature_set}/{pair}/{split}.tsv"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=20,
    script:
        "../scripts/semfs.py"


rule make_semfs_table:
    output:
        csv=report("results/semfs/table.csv", caption="../report/semfs_table.rst",
                   category="Related methods", subcategory="Zero-shot feature selection"),
        md="results/semfs/table.md",
        tex="results/semfs/table.tex",
        provenance="results/semfs/table.provenance.json",
    input:
        runs=semfs_runs,
        code=script_code("semfs_report.py"),
    params:
        semfs=Z,
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/semfs/table.log",
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    script:
        "../scripts/semfs_report.py"


rule plot_semfs_figure:
    output:
        pdf="results/semfs/figure.pdf",
        png=report("results/semfs/figure.png", caption="../report/semfs_figure.rst",
                   category="Related methods", subcategory="Zero-shot feature selection"),
        csv="results/semfs/figure.csv",
    input:
        runs=semfs_runs,
        code=script_code("semfs_report.py"),
    params:
        semfs=Z,
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/semfs/figure.log",
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    script:
        "../scripts/semfs_report.py"
