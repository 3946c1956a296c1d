# Stage plotting: the paper's figures. Each figure is its own target, and only
# reads aggregated tables, so a plotting change never recomputes accuracies.

FIGURE_TITLES = {
    "surf": "SURF (d = 800)",
    "GoogleNet1024": "GoogleNet (d = 1024)",
    "CaffeNet4096": "CaffeNet (d = 4096)",
}


rule plot_figure7:
    output:
        pdf=report(
            "results/figures/figure7/{feature_set}.pdf",
            caption="../report/figure7.rst",
            category="Supplementary B.2",
            subcategory="Figure 7",
            labels={"feature set": "{feature_set}", "format": "PDF"},
        ),
        png="results/figures/figure7/{feature_set}.png",
        csv="results/figures/figure7/{feature_set}.csv",
    input:
        summary=f"results/tables/{{feature_set}}/{SELECTION}/{config['targets']['figure7']['adapter']}/summary.tsv",
        provenance=f"results/tables/{{feature_set}}/{SELECTION}/{config['targets']['figure7']['adapter']}/provenance.json",
        code=lib("stages/plotting.py", "plotting.py"),
    params:
        title=lambda w: f"Figure 7: {FIGURE_TITLES.get(w.feature_set, w.feature_set)}, no adaptation",
    conda:
        "../../envs/otfs.yaml"
    log:
        "logs/plotting/figure7/{feature_set}.log",
    benchmark:
        "logs/benchmarks/plotting/figure7/{feature_set}.tsv",
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    script:
        "../scripts/plotting.py"


rule figure7:
    input:
        expand(
            "results/figures/figure7/{feature_set}.{ext}",
            feature_set=config["targets"]["figure7"]["feature_sets"],
            ext=["pdf", "png", "csv"],
        ),
