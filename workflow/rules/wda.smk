# Related method I: Wasserstein Discriminant Analysis (Flamary et al.).
# The UCI files are acquired and verified like the Office-Caltech ones; each
# (data set, method) job runs every split of Table 1's protocol, each curve job
# Figure 2's, each ablation job one variant of the study of what separates our
# Table 1 from the paper's (docs/wda.md); the tables and the figure aggregate
# them. WDA as an Office-Caltech
# adapter reuses the classify rule (adapter WDA, grid `wda`).


WDA_CONFIG = config["wda"]
# Its inputs and job parameters (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
wda_eval_cfg = P.wda_eval_cfg
WDA_ABLATION_DATASETS, _WDA_ABLATION_NOTES = P.wda_ablation_datasets()
# What the configuration's ablation leaves out, printed once per run.
if workflow.is_main_process:
    for _note in _WDA_ABLATION_NOTES:
        print(f"note: {_note}", file=sys.stderr)
WDA_OFFICE_FS = WDA_CONFIG["office"]["feature_set"]


rule acquire_uci:
    input:
        manifest=WDA_CONFIG["data"]["manifest"],
    output:
        raw="data/uci/raw/{name}/{file}",
    log:
        "logs/acquisition/uci/{name}/{file}.log",
    benchmark:
        "logs/benchmarks/acquire_uci/{name}/{file}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=256,
        runtime=15,
    params:
        relpath=lambda w: f"{w.name}/{w.file}",
        dataset=WDA_CONFIG["data"],
        config_name="wda.data",
    script:
        "../scripts/acquisition.py"


rule wda_evaluate:
    input:
        raw=lambda w: P.uci_raw(w.dataset),
        code=script_code("wda.py"),
    output:
        tsv="results/wda/runs/{dataset}/{method}.tsv",
    log:
        "logs/wda/evaluate/{dataset}/{method}.log",
    benchmark:
        "logs/benchmarks/wda_evaluate/{dataset}/{method}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=60,
    params:
        wda=wda_eval_cfg(),
    script:
        "../scripts/wda.py"


rule wda_ablation_evaluate:
    input:
        raw=lambda w: P.uci_raw(w.dataset),
        code=script_code("wda.py"),
    output:
        tsv="results/wda/ablation/runs/{dataset}/{variant}.tsv",
    log:
        "logs/wda/ablation/{dataset}/{variant}.log",
    benchmark:
        "logs/benchmarks/wda_ablation_evaluate/{dataset}/{variant}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=60,
    params:
        wda=lambda w: P.wda_ablation_cfg(w.variant),
    script:
        "../scripts/wda.py"


rule wda_curves:
    input:
        raw=lambda w: P.uci_raw(w.dataset),
        code=script_code("wda.py"),
    output:
        tsv="results/wda/runs/curves/{dataset}/{method}.tsv",
    log:
        "logs/wda/curves/{dataset}/{method}.log",
    benchmark:
        "logs/benchmarks/wda_curves/{dataset}/{method}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=60,
    params:
        wda=wda_eval_cfg(("figure2",)),
    script:
        "../scripts/wda.py"


rule make_wda_table1:
    input:
        runs=expand(
            "results/wda/runs/{dataset}/{method}.tsv",
            dataset=WDA_CONFIG["datasets"],
            method=list(WDA_CONFIG["methods"]),
        ),
        code=script_code("wda_report.py"),
    output:
        csv=report(
            "results/wda/table1.csv",
            caption="../report/wda_table1.rst",
            category="Related methods",
            subcategory="WDA",
        ),
        md="results/wda/table1.md",
        tex="results/wda/table1.tex",
        provenance="results/wda/table1.provenance.json",
    log:
        "logs/wda/table1.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        wda=WDA_CONFIG,
    script:
        "../scripts/wda_report.py"


rule make_wda_ablation:
    input:
        runs=P.wda_ablation_runs(),
        table1_runs=P.wda_ablation_table1_runs(),
        code=script_code("wda_report.py"),
    output:
        csv=report(
            "results/wda/ablation.csv",
            caption="../report/wda_ablation.rst",
            category="Related methods",
            subcategory="WDA",
        ),
        md="results/wda/ablation.md",
        provenance="results/wda/ablation.provenance.json",
    log:
        "logs/wda/ablation.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        wda=WDA_CONFIG,
    script:
        "../scripts/wda_report.py"


rule plot_wda_figure2:
    input:
        runs=expand(
            "results/wda/runs/curves/{dataset}/{method}.tsv",
            dataset=WDA_CONFIG["figure2"]["dataset"],
            method=list(WDA_CONFIG["methods"]),
        ),
        code=script_code("wda_report.py"),
    output:
        pdf="results/wda/figure2.pdf",
        png=report(
            "results/wda/figure2.png",
            caption="../report/wda_figure2.rst",
            category="Related methods",
            subcategory="WDA",
        ),
        csv="results/wda/figure2.csv",
    log:
        "logs/wda/figure2.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        wda=WDA_CONFIG,
    script:
        "../scripts/wda_report.py"


rule make_wda_office:
    input:
        runs=lambda w: P.wda_office_inputs(),
        code=script_code("wda_report.py"),
    output:
        csv=report(
            "results/wda/office.csv",
            caption="../report/wda_office.rst",
            category="Related methods",
            subcategory="WDA",
        ),
        md="results/wda/office.md",
    log:
        "logs/wda/office.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        feature_set=WDA_OFFICE_FS,
    script:
        "../scripts/wda_report.py"


# --- targets -------------------------------------------------------------------
# Local rules (seconds, little memory, or fetching data): never submitted to a cluster.
localrules:
    acquire_uci,
    make_wda_table1,
    make_wda_ablation,
    plot_wda_figure2,
    make_wda_office,


rule wda_table1:
    input:
        rules.make_wda_table1.output,


rule wda_figure2:
    input:
        rules.plot_wda_figure2.output,


rule wda_office:
    input:
        rules.make_wda_office.output,


rule wda_ablation:
    input:
        rules.make_wda_ablation.output,


rule wda:
    input:
        rules.make_wda_table1.output,
        rules.make_wda_ablation.output,
        rules.plot_wda_figure2.output,
        rules.make_wda_office.output,
