# Related method III: non-linear domain adaptation with boosting (Becker et
# al.). One job per (pair, binary task, repetition) fits the shared-boundary
# booster and its baselines at every number of labelled target samples, and
# the unsupervised OT ranking + adaptation on the same task.


BOOSTING_CONFIG = config["boosting"]
# Its runs and the keys its jobs depend on: otfs_workflow.plan.Plan.related_runs and related_params.


rule boosting_run:
    input:
        caches=pair_caches,
        ranking=f"results/runs/{{feature_set}}/ranking/{MAIN_RANKER}/{{pair}}.json",
        code=script_code("boosting.py", adapters=BOOSTING_CONFIG["ot_adapters"]),
    output:
        run="results/boosting/runs/{feature_set}/{pair}/{task}/{rep}.tsv",
    log:
        "logs/boosting/{feature_set}/{pair}/{task}/{rep}.log",
    benchmark:
        "logs/benchmarks/boosting_run/{feature_set}/{pair}/{task}/{rep}.tsv"
    wildcard_constraints:
        rep=r"\d+",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        boosting=P.related_params("boosting"),
        task=lambda w: P.boosting_task(w.task),
    script:
        "../scripts/boosting.py"


rule make_boosting_table:
    input:
        runs=P.related_runs("boosting"),
        code=script_code("boosting_report.py"),
    output:
        csv=report(
            "results/boosting/table.csv",
            caption="../report/boosting_table.rst",
            category="Related methods",
            subcategory="Boosting for domain adaptation",
        ),
        md="results/boosting/table.md",
        tex="results/boosting/table.tex",
        provenance="results/boosting/table.provenance.json",
    log:
        "logs/boosting/table.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        boosting=BOOSTING_CONFIG,
    script:
        "../scripts/boosting_report.py"


rule plot_boosting_figure:
    input:
        runs=P.related_runs("boosting"),
        code=script_code("boosting_report.py"),
    output:
        pdf="results/boosting/figure.pdf",
        png=report(
            "results/boosting/figure.png",
            caption="../report/boosting_figure.rst",
            category="Related methods",
            subcategory="Boosting for domain adaptation",
        ),
        csv="results/boosting/figure.csv",
    log:
        "logs/boosting/figure.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        boosting=BOOSTING_CONFIG,
    script:
        "../scripts/boosting_report.py"


# --- targets -------------------------------------------------------------------
# Local rules (seconds, little memory, or fetching data): never submitted to a cluster.
localrules:
    make_boosting_table,
    plot_boosting_figure,


rule boosting_table:
    input:
        rules.make_boosting_table.output,


rule boosting_figure:
    input:
        rules.plot_boosting_figure.output,


rule boosting:
    input:
        rules.make_boosting_table.output,
        rules.plot_boosting_figure.output,
