# The feature-shift benchmark, part 1: on generated domains whose shifted
# features are known (dataset reader planted-shifts), which kinds of shift each
# feature ranker puts last. One job runs every ranker on every seed (seconds).

SHIFT_RECOVERY_CONFIG = config["shift_recovery"]


rule shift_recovery_run:
    input:
        code=script_code("shift_recovery.py", rankers=SHIFT_RECOVERY_CONFIG["rankers"]),
    output:
        csv="results/shift_recovery/runs.csv",
    log:
        "logs/shift_recovery/runs.log",
    benchmark:
        "logs/benchmarks/shift_recovery_run/runs.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        rankers=SHIFT_RECOVERY_CONFIG["rankers"],
        ranker_params={r: ranker_params(r) for r in SHIFT_RECOVERY_CONFIG["rankers"]},
        data=SHIFT_RECOVERY_CONFIG["data"],
        seeds=list(range(SHIFT_RECOVERY_CONFIG["seeds"])),
    script:
        "../scripts/shift_recovery.py"


rule make_shift_recovery_table:
    input:
        runs="results/shift_recovery/runs.csv",
        code=script_code("shift_recovery.py"),
    output:
        csv=report(
            "results/shift_recovery/table.csv",
            caption="../report/shift_recovery.rst",
            category="Feature-shift benchmark",
        ),
        md="results/shift_recovery/table.md",
        provenance="results/shift_recovery/table.provenance.json",
    log:
        "logs/shift_recovery/table.log",
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=512,
        runtime=5,
    params:
        config=SHIFT_RECOVERY_CONFIG,
    script:
        "../scripts/shift_recovery.py"


# --- targets -------------------------------------------------------------------
localrules:
    make_shift_recovery_table,


rule shift_recovery:
    input:
        rules.make_shift_recovery_table.output,
