# Stage plotting: the paper's figures. Curve figures read aggregated tables
# only, so a plotting change never recomputes accuracies; the toy figures
# generate their own data.


rule plot_figure1:
    input:
        agg=lambda w: agg_files(
            agg(w.target_set, w.feature_set), ("summary.tsv", "provenance.json")
        ),
        code=script_code("plotting.py"),
    output:
        **curve_outputs(
            "results/{target_set}/figure1/{feature_set}",
            "../report/figure1.rst",
            "5.1 Office/Caltech",
            "Figure 1",
        ),
    log:
        "logs/plotting/{target_set}/figure1/{feature_set}.log",
    benchmark:
        "logs/benchmarks/plot_figure1/{target_set}/{feature_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        kind="curves",
        run=lambda w: run_caption([w.feature_set]),
        about=lambda w: fs_about(w.feature_set, w.target_set),
        panels=lambda w: [
            (agg(w.target_set, w.feature_set), fs_title(w.feature_set, w.target_set))
        ],
        title="Figure 1: accuracy against the number of selected features, no adaptation",
    script:
        "../scripts/plotting.py"


rule plot_figure2:
    input:
        agg=lambda w: agg_files(
            [
                agg(w.target_set, w.feature_set, adapter=a)
                for a in TARGETS_CONFIG["figure2"]["adapters"]
            ],
            ("summary.tsv", "provenance.json"),
        ),
        code=script_code("plotting.py"),
    output:
        **curve_outputs(
            "results/{target_set}/figure2/{feature_set}",
            "../report/figure2.rst",
            "5.1 Office/Caltech",
            "Figure 2",
        ),
    log:
        "logs/plotting/{target_set}/figure2/{feature_set}.log",
    benchmark:
        "logs/benchmarks/plot_figure2/{target_set}/{feature_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        kind="curves",
        run=lambda w: run_caption([w.feature_set]),
        about=lambda w: fs_about(w.feature_set, w.target_set),
        panels=lambda w: [
            (
                agg(w.target_set, w.feature_set, adapter=a),
                fs_title(
                    w.feature_set,
                    w.target_set,
                    f", {'no adaptation' if a == 'NA' else a}",
                ),
            )
            for a in TARGETS_CONFIG["figure2"]["adapters"]
        ],
        title="Figure 2: accuracy against the number of selected features, without and with adaptation",
    script:
        "../scripts/plotting.py"


rule plot_figure7:
    input:
        agg=lambda w: agg_files(
            [agg(w.target_set, fs) for fs in multi_fs_sets(w.target_set, "figure7")],
            ("summary.tsv", "provenance.json"),
        ),
        code=script_code("plotting.py"),
    output:
        **curve_outputs(
            "results/{target_set}/figure7/figure7",
            "../report/figure7.rst",
            "Supplementary B.2",
            "Figure 7",
        ),
    log:
        "logs/plotting/{target_set}/figure7.log",
    benchmark:
        "logs/benchmarks/plot_figure7/{target_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        kind="curves",
        run=lambda w: run_caption(multi_fs_sets(w.target_set, "figure7")),
        about=lambda w: " ".join(
            fs_about(fs, w.target_set) for fs in multi_fs_sets(w.target_set, "figure7")
        ),
        panels=lambda w: [
            (agg(w.target_set, fs), fs_title(fs, w.target_set))
            for fs in multi_fs_sets(w.target_set, "figure7")
        ],
        title="Figure 7: accuracy against the number of selected features, no adaptation",
    script:
        "../scripts/plotting.py"


rule plot_figure5:
    input:
        code=script_code("plotting.py"),
    output:
        pdf="results/{target_set}/figure5/figure5.pdf",
        png=report(
            "results/{target_set}/figure5/figure5.png",
            caption="../report/figure5.rst",
            category="Supplementary A",
            subcategory="Figure 5",
        ),
    log:
        "logs/plotting/{target_set}/figure5.log",
    benchmark:
        "logs/benchmarks/plot_figure5/{target_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        kind="figure5",
        spec=TARGETS_CONFIG["figure5"],
    script:
        "../scripts/plotting.py"


rule plot_figure6:
    input:
        code=script_code("plotting.py"),
    output:
        pdf="results/{target_set}/figure6/figure6.pdf",
        png=report(
            "results/{target_set}/figure6/figure6.png",
            caption="../report/figure6.rst",
            category="Supplementary B.1",
            subcategory="Figure 6",
        ),
    log:
        "logs/plotting/{target_set}/figure6.log",
    benchmark:
        "logs/benchmarks/plot_figure6/{target_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        kind="figure6",
        spec=TARGETS_CONFIG["figure6"],
    script:
        "../scripts/plotting.py"
