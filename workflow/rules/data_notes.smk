# The report's data notes: every warning the jobs of a main target logged
# (logs/conditions/, one file per job, its latest run), grouped as the run's end
# summary counts them, as a table (data_notes.csv) and in full (data_notes.md).
# The job runs after every other job of its target, so that nothing is missing;
# which jobs those are, the main process writes at the start of the run
# (DATA_NOTES_SCOPE, otfs_workflow.run_log.Run.start), so that other targets' jobs are left out.


rule data_notes:
    input:
        results=lambda w: main_target_files(w.target_set),
        code=script_code("data_notes.py"),
    output:
        csv=report(
            "results/{target_set}/data_notes.csv",
            caption="../report/data_notes.rst",
            category="Data notes",
        ),
        md="results/{target_set}/data_notes.md",
    log:
        "logs/data_notes/{target_set}.log",
    benchmark:
        "logs/benchmarks/data_notes/{target_set}.tsv"
    conda:
        "../../envs/otfs.yaml"
    threads: 1
    resources:
        mem_mb=256,
        runtime=5,
    params:
        folder=str(CONDITIONS_DIR),
        scope=lambda w: DATA_NOTES_SCOPE.format(target_set=w.target_set),
    script:
        "../scripts/data_notes.py"
