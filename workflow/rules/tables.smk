# Stage tables: the paper's tables (CSV, LaTeX, Markdown) and their comparison
# with the published numbers in data/paper/. Each reads aggregates only.


rule make_table1:
    input:
        agg=lambda w: agg_files(
            [
                agg(w.target_set, w.feature_set, adapter=a, grid="table1")
                for a in TARGETS_CONFIG["table1"]["adapters"]
            ]
        ),
        published=f"{PAPER}/table1.csv",
        code=script_code("tables.py"),
    output:
        **table_outputs(
            "results/{target_set}/table1/{feature_set}",
            "../report/table1.rst",
            "5.1 Office/Caltech",
            "Table 1",
        ),
    log:
        "logs/tables/{target_set}/table1/{feature_set}.log",
    benchmark:
        "logs/benchmarks/make_table1/{target_set}/{feature_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        kind="table1",
        run=lambda w: run_caption([w.feature_set]),
        about=lambda w: fs_about(w.feature_set, w.target_set),
        aggregates=lambda w: {
            a: agg(w.target_set, w.feature_set, adapter=a, grid="table1")
            for a in TARGETS_CONFIG["table1"]["adapters"]
        },
        n_features=lambda w: counts(
            w.feature_set, [TARGETS_CONFIG["table1"]["n_features"]]
        )[0],
        caption=lambda w: f"Table 1 ({w.target_set}): {w.feature_set}, per pair, adapters {', '.join(TARGETS_CONFIG['table1']['adapters'])} (the paper: NA); mean ± std over {len(ITERATIONS)} iterations.",
    script:
        "../scripts/tables.py"


rule make_table2:
    input:
        agg=lambda w: agg_files(
            [agg(w.target_set, fs) for fs in multi_fs_sets(w.target_set, "table2")]
        ),
        published=f"{PAPER}/table2.csv",
        code=script_code("tables.py"),
    output:
        **table_outputs(
            "results/{target_set}/table2/table2",
            "../report/table2.rst",
            "5.1 Office/Caltech",
            "Table 2",
        ),
    log:
        "logs/tables/{target_set}/table2.log",
    benchmark:
        "logs/benchmarks/make_table2/{target_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        kind="table2",
        run=lambda w: run_caption(multi_fs_sets(w.target_set, "table2")),
        about=lambda w: " ".join(
            fs_about(fs, w.target_set) for fs in multi_fs_sets(w.target_set, "table2")
        ),
        aggregates=lambda w: {
            fs: agg(w.target_set, fs) for fs in multi_fs_sets(w.target_set, "table2")
        },
        counts=lambda w: {
            fs: list(
                zip(
                    TARGETS_CONFIG["table2"]["n_features"],
                    counts(fs, TARGETS_CONFIG["table2"]["n_features"]),
                )
            )
            for fs in multi_fs_sets(w.target_set, "table2")
        },
        caption=lambda w: f"Table 2 ({w.target_set}): mean accuracy over pairs without adaptation; {len(ITERATIONS)} iterations.",
    script:
        "../scripts/tables.py"


rule make_table3:
    input:
        agg=lambda w: agg_files(
            [
                agg(w.target_set, w.feature_set, adapter=a, grid="table3")
                for a in TARGETS_CONFIG["table3"]["adapters"]
            ]
        ),
        published=f"{PAPER}/table3.csv",
        code=script_code("tables.py"),
    output:
        **table_outputs(
            "results/{target_set}/table3/{feature_set}",
            "../report/table3.rst",
            "5.1 Office/Caltech",
            "Table 3",
        ),
    log:
        "logs/tables/{target_set}/table3/{feature_set}.log",
    benchmark:
        "logs/benchmarks/make_table3/{target_set}/{feature_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        kind="table3",
        run=lambda w: run_caption([w.feature_set]),
        about=lambda w: fs_about(w.feature_set, w.target_set),
        aggregates=lambda w: {
            a: agg(w.target_set, w.feature_set, adapter=a, grid="table3")
            for a in TARGETS_CONFIG["table3"]["adapters"]
        },
        counts=lambda w: counts(
            w.feature_set, config["grids"]["table3"]["feature_counts"]
        ),
        caption=lambda w: f"Table 3 ({w.target_set}): {w.feature_set}, adapters after Descending selection; mean ± std over pairs and time summed over pairs and {len(ITERATIONS)} iterations.",
    script:
        "../scripts/tables.py"


rule make_table5:
    input:
        agg=lambda w: agg_files(
            [
                agg(w.target_set, w.feature_set, ranker=r)
                for r in TARGETS_CONFIG["table5"]["rankers"]
            ]
        ),
        published=f"{PAPER}/table5.csv",
        code=script_code("tables.py"),
    output:
        **table_outputs(
            "results/{target_set}/table5/{feature_set}",
            "../report/table5.rst",
            "Supplementary B.1",
            "Table 5",
        ),
    log:
        "logs/tables/{target_set}/table5/{feature_set}.log",
    benchmark:
        "logs/benchmarks/make_table5/{target_set}/{feature_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        kind="table5",
        run=lambda w: run_caption([w.feature_set]),
        about=lambda w: fs_about(w.feature_set, w.target_set),
        aggregates=lambda w: {
            r: agg(w.target_set, w.feature_set, ranker=r)
            for r in TARGETS_CONFIG["table5"]["rankers"]
        },
        counts=lambda w: counts(w.feature_set, TARGETS_CONFIG["table5"]["n_features"]),
        caption=lambda w: f"Table 5 ({w.target_set}): {w.feature_set}, sample-selection strategies, no adaptation; mean ± std over pairs, {len(ITERATIONS)} iterations.",
    script:
        "../scripts/tables.py"


rule make_table6:
    input:
        agg=lambda w: agg_files(
            [agg(w.target_set, fs) for fs in multi_fs_sets(w.target_set, "table6")]
        ),
        published=f"{PAPER}/table6.csv",
        code=script_code("tables.py"),
    output:
        **table_outputs(
            "results/{target_set}/table6/table6",
            "../report/table6.rst",
            "Supplementary B.2",
            "Table 6",
        ),
    log:
        "logs/tables/{target_set}/table6.log",
    benchmark:
        "logs/benchmarks/make_table6/{target_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        kind="table6",
        run=lambda w: run_caption(multi_fs_sets(w.target_set, "table6")),
        about=lambda w: " ".join(
            fs_about(fs, w.target_set) for fs in multi_fs_sets(w.target_set, "table6")
        ),
        aggregates=lambda w: {
            fs: agg(w.target_set, fs) for fs in multi_fs_sets(w.target_set, "table6")
        },
        n_features=lambda w: {
            fs: counts(fs, [TARGETS_CONFIG["table6"]["n_features"][fs]])[0]
            for fs in multi_fs_sets(w.target_set, "table6")
        },
        caption=lambda w: f"Table 6 ({w.target_set}): per pair, no adaptation; mean ± std over {len(ITERATIONS)} iterations.",
    script:
        "../scripts/tables.py"


rule compare_figure2:
    input:
        agg=lambda w: agg_files(
            [
                agg(w.target_set, w.feature_set, adapter=a)
                for a in TARGETS_CONFIG["figure2"]["adapters"]
            ]
        ),
        published=f"{PAPER}/figure2.csv",
        code=script_code("tables.py"),
    output:
        comparison=report(
            "results/{target_set}/figure2/{feature_set}.comparison.csv",
            caption="../report/comparison.rst",
            category="5.1 Office/Caltech",
            subcategory="Figure 2",
        ),
    log:
        "logs/tables/{target_set}/figure2/{feature_set}.log",
    benchmark:
        "logs/benchmarks/compare_figure2/{target_set}/{feature_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        kind="figure2",
        aggregates=lambda w: {
            a: agg(w.target_set, w.feature_set, adapter=a)
            for a in TARGETS_CONFIG["figure2"]["adapters"]
        },
    script:
        "../scripts/tables.py"


rule make_comparison:
    input:
        comparisons=lambda w: comparison_files(w.target_set),
        code=script_code("tables.py"),
    output:
        csv=report(
            "results/{target_set}/comparison/summary.csv",
            caption="../report/comparison.rst",
            category="Published versus reproduced",
        ),
        md="results/{target_set}/comparison/summary.md",
    log:
        "logs/tables/{target_set}/comparison.log",
    benchmark:
        "logs/benchmarks/make_comparison/{target_set}.tsv"
    priority: PRIORITY_PAPER
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        kind="summary",
    script:
        "../scripts/tables.py"
