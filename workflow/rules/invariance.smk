# Related method II: relevant and invariant feature selection (Persello &
# Bruzzone) on Office-Caltech. One job per pair reuses the ranking stage's
# source samples and OT order, draws the labelled target
# samples, searches the Pareto front with NSGA-II and scores every subset.


INVARIANCE_CONFIG = config["invariance"]
# Its runs and the keys its jobs depend on: otfs_workflow.plan.Plan.related_runs and related_params.


rule invariance_run:
    input:
        caches=pair_caches,
        ranking=f"results/runs/{{feature_set}}/ranking/{MAIN_RANKER}/{{pair}}.json",
        code=script_code("invariance.py"),
    output:
        run="results/invariance/runs/{feature_set}/{pair}.json",
    log:
        "logs/invariance/{feature_set}/{pair}.log",
    benchmark:
        "logs/benchmarks/invariance_run/{feature_set}/{pair}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        invariance=P.related_params("invariance"),
    script:
        "../scripts/invariance.py"


rule make_invariance_table:
    input:
        runs=P.related_runs("invariance"),
        code=script_code("invariance_report.py"),
    output:
        csv=report(
            "results/invariance/table.csv",
            caption="../report/invariance_table.rst",
            category="Related methods",
            subcategory="Relevant and invariant selection",
        ),
        md="results/invariance/table.md",
        tex="results/invariance/table.tex",
        provenance="results/invariance/table.provenance.json",
    log:
        "logs/invariance/table.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        invariance=INVARIANCE_CONFIG,
    script:
        "../scripts/invariance_report.py"


rule plot_invariance_figure3:
    input:
        run=f"results/invariance/runs/{INVARIANCE_CONFIG['feature_set']}/{INVARIANCE_CONFIG['figure3_pair']}.json",
        code=script_code("invariance_report.py"),
    output:
        pdf="results/invariance/figure3.pdf",
        png=report(
            "results/invariance/figure3.png",
            caption="../report/invariance_figure3.rst",
            category="Related methods",
            subcategory="Relevant and invariant selection",
        ),
        csv="results/invariance/figure3.csv",
    log:
        "logs/invariance/figure3.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        invariance=INVARIANCE_CONFIG,
    script:
        "../scripts/invariance_report.py"


# --- targets -------------------------------------------------------------------
# Local rules (seconds, little memory, or fetching data): never submitted to a cluster.
localrules:
    make_invariance_table,
    plot_invariance_figure3,


rule invariance_table:
    input:
        rules.make_invariance_table.output,


rule invariance_figure3:
    input:
        rules.plot_invariance_figure3.output,


rule invariance:
    input:
        rules.make_invariance_table.output,
        rules.plot_invariance_figure3.output,
