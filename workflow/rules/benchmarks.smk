# Stage benchmarks: the library against the straightforward implementations
# (otfs_benchmarks), the ranking's scaling study, and where the pipeline's time
# goes (the rules' benchmark files). These time this machine, so they are
# targets of their own (`bench`, `scaling`, `time_profile`), never part of `all`.

BENCH_CONFIG = config["benchmarks"]
# the feature caches of the domains present, for the order check on real runs
BENCH_CACHES = [
    f"data/cache/{fs}/{d}.h5"
    for fs in BENCH_CONFIG["order_check"]["feature_sets"]
    for d in local_domains(fs)
]


rule benchmark_suite:
    input:
        caches=BENCH_CACHES,
        code=script_code("bench_suite.py", rankers=ALL_RANKERS, adapters=ALL_ADAPTERS),
    output:
        csv="results/benchmarks/benchmarks.csv",
        md="results/benchmarks/benchmarks.md",
        orders="results/benchmarks/ranking_orders.csv",
        pdf="results/benchmarks/benchmarks.pdf",
        png=report(
            "results/benchmarks/benchmarks.png",
            caption="../report/benchmarks.rst",
            category="Benchmarks",
        ),
        provenance="results/benchmarks/provenance.json",
        timings="results/benchmarks/pytest_benchmark.json",
    log:
        "logs/bench/suite.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 64  # every core given (Snakemake caps it at --cores): benchmarks run alone
    resources:
        mem_mb=4096,
        runtime=60,
    params:
        size=BENCH_CONFIG["size"],
        repeats=BENCH_CONFIG["repeats"],
        order_check=BENCH_CONFIG["order_check"]["feature_sets"],
        iterations=config["protocol"]["iterations"],
        per_class=config["protocol"]["source_per_class"],
        per_class_overrides=config["protocol"]["source_per_class_overrides"],
    script:
        "../scripts/bench_suite.py"


rule scaling_study:
    input:
        code=script_code("bench_scaling.py", rankers=ALL_RANKERS, adapters=ALL_ADAPTERS),
    output:
        csv="results/benchmarks/scaling.csv",
        pdf="results/benchmarks/scaling.pdf",
        png=report(
            "results/benchmarks/scaling.png",
            caption="../report/scaling.rst",
            category="Benchmarks",
        ),
    log:
        "logs/bench/scaling.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 64  # every core given (Snakemake caps it at --cores): benchmarks run alone
    resources:
        mem_mb=lambda w: 3 * max(BENCH_CONFIG["scaling"]["d"]) ** 2 * 8 // 2**20 + 1024,
        runtime=30,
    params:
        d=BENCH_CONFIG["scaling"]["d"],
        n_t=BENCH_CONFIG["scaling"]["n_t"],
    script:
        "../scripts/bench_scaling.py"


rule pipeline_profile:
    input:
        code=script_code("bench_profile.py"),
    output:
        csv="results/benchmarks/pipeline_profile.csv",
        pdf="results/benchmarks/pipeline_profile.pdf",
        png=report(
            "results/benchmarks/pipeline_profile.png",
            caption="../report/pipeline_profile.rst",
            category="Benchmarks",
        ),
    log:
        "logs/bench/pipeline_profile.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=5,
    params:
        root="logs/benchmarks",
    script:
        "../scripts/bench_profile.py"


rule end_to_end:
    input:
        raw=[
            raw_path("surf", r)
            for d in fs_domains("surf")
            for r in reader_files("surf", d)
        ],
        code=script_code("bench_end_to_end.py"),
    output:
        csv="results/benchmarks/end_to_end.csv",
        jobs="results/benchmarks/end_to_end_jobs.csv",
    log:
        "logs/bench/end_to_end.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 64  # every core given (Snakemake caps it at --cores): benchmarks run alone
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        iterations=BENCH_CONFIG["end_to_end"]["iterations"],
        authors=BENCH_CONFIG["end_to_end"].get("authors", True),
        dry_run_rounds=BENCH_CONFIG["end_to_end"]["dry_run_rounds"],
        mirror=lambda w, input: str(Path(input.raw[0]).parents[1]),
        workdir="results/benchmarks/.end_to_end",
    script:
        "../scripts/bench_end_to_end.py"


rule main_job_timing:
    input:
        before="data/benchmarks/main_job_before.csv",
        code=script_code("bench_main_job.py"),
    output:
        csv="results/benchmarks/main_job.csv",
        stages="results/benchmarks/main_job_stages.csv",
        pdf="results/benchmarks/main_job_stages.pdf",
        png=report(
            "results/benchmarks/main_job_stages.png",
            caption="../report/main_job_stages.rst",
            category="Benchmarks",
        ),
    log:
        "logs/bench/main_job.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 64  # every core given (Snakemake caps it at --cores): benchmarks run alone
    resources:
        mem_mb=4096,
        runtime=120,
    params:
        targets=BENCH_CONFIG["main_job"]["targets"],
        workdir="results/benchmarks/.main_job",
    script:
        "../scripts/bench_main_job.py"


rule table3_4096:
    input:
        code=script_code("bench_table3.py", rankers=ALL_RANKERS, adapters=ALL_ADAPTERS),
    output:
        csv="results/benchmarks/table3_4096.csv",
    log:
        "logs/bench/table3_4096.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 64  # every core given (Snakemake caps it at --cores): benchmarks run alone
    resources:
        mem_mb=4096,
        runtime=30,
    params:
        d=BENCH_CONFIG["table3"]["d"],
        iterations=BENCH_CONFIG["table3"]["iterations"],
        workdir="results/benchmarks/.table3_4096",
    script:
        "../scripts/bench_table3.py"


rule benchmark_goals:
    input:
        bench=rules.benchmark_suite.output.csv,
        end_to_end=rules.end_to_end.output.csv,
        table3=rules.table3_4096.output.csv,
        scaling=rules.scaling_study.output.csv,
        main_job=rules.main_job_timing.output.csv,
        main_job_stages=rules.main_job_timing.output.stages,
        code=script_code("bench_goals.py"),
    output:
        csv="results/benchmarks/goals.csv",
        md="results/benchmarks/goals.md",
    log:
        "logs/bench/goals.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    script:
        "../scripts/bench_goals.py"


# --- targets -------------------------------------------------------------------
rule bench:
    input:
        rules.benchmark_suite.output,
        rules.scaling_study.output,
        rules.end_to_end.output,
        rules.table3_4096.output,
        rules.main_job_timing.output,
        rules.benchmark_goals.output,


rule scaling:
    input:
        rules.scaling_study.output,


rule time_profile:
    input:
        rules.pipeline_profile.output,
