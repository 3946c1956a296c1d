# What the main process says of a run (otfs_workflow.run_log.Run): at the start, the
# jobs it plans and their estimated duration on the given cores (from the job
# costs measured in workflow/resources/job_costs.tsv), and the notes about the
# feature sets its jobs use; at the end, the jobs' warnings counted by kind
# (each job's log has them in full; logs/conditions.md lists them all), where
# the results are, and which jobs failed.
from otfs_workflow.run_log import CONDITIONS_DIR, DATA_NOTES_SCOPE, Run

RUN = Run(REPO / "workflow" / "resources" / "job_costs.tsv", REPO)


onstart:
    for line in RUN.start(workflow, FEATURE_SET_NOTES):
        print(line, file=sys.stderr)


onsuccess:
    for line in RUN.end(workflow, True):
        print(line, file=sys.stderr)


onerror:
    for line in RUN.end(workflow, False):
        print(line, file=sys.stderr)
