# otfs: reproducing "Feature Selection for Unsupervised Domain Adaptation using
# Optimal Transport" (Gautheron, Redko & Lartizien, ECML PKDD 2018).
#
#   snakemake --cores 16 all              # every table and figure of the paper
#   snakemake --cores 16 available        # every target the present data allows
#   snakemake --cores 4 figure7           # one figure, and only what it needs
#   snakemake --configfile config/test.yaml --cores 2 available   # the tiny CI run
#   snakemake --cores 2 stage             # fetch and verify every input (a login node)
#   snakemake --profile profiles/slurm all   # on a SLURM cluster (see README)
#
# Stages (workflow/rules/<stage>.smk -> workflow/scripts/<stage>.py ->
# workflow/lib/otfs_workflow/stages/<stage>.py): acquisition, extraction (features from images),
# cache, ranking (Algorithms 1 and 2), classification, aggregation, tables, plotting;
# clinical (section 5.2, on a generated or user-supplied voxel table);
# benchmarks (`snakemake --cores 2 bench`: speed against the straightforward
# implementations, and the ranking's scaling study; `time_profile`: where
# the pipeline's time went, from the rules' benchmark files).
import os
import sys

from snakemake.utils import min_version

# 9.12: the workflow profile's report-metadata (from 9.11), and an ILP scheduler that runs on pulp's own
# solver (9.11 asks for a cbc on the PATH); the test suite runs the test configuration under this release too
# (tests/test_snakemake_versions.py)
min_version("9.12")


# A YAML syntax error in config.yaml is named with its file and line before
# Snakemake reads it (Snakemake's own message names neither).
sys.path[:0] = [os.path.join(workflow.basedir, d) for d in ("src", "workflow/lib")]
from otfs_workflow.config import load_yaml  # noqa: E402

# Every job runs this checkout's library (src/otfs), pipeline package
# (workflow/lib/otfs_workflow) and benchmark suite (benchmarks/otfs_benchmarks):
# the scripts (which Snakemake copies before running them) and the jobs of a
# cluster inherit this, so no script edits sys.path.
# Plug-in packages on an existing PYTHONPATH stay after them.
os.environ["PYTHONPATH"] = os.pathsep.join(
    p
    for p in (
        os.path.join(workflow.basedir, "src"),
        os.path.join(workflow.basedir, "workflow", "lib"),
        os.path.join(workflow.basedir, "benchmarks"),
        os.environ.get("PYTHONPATH"),
    )
    if p
)
# Every job hashes strings with one seed: an iteration over a set of names
# (scikit-posthocs draws the critical-difference diagram's bars so) then has
# one order, and a figure the same bytes, run after run. A seed the user set
# is kept.
os.environ.setdefault("PYTHONHASHSEED", "0")


envvars:
    "PYTHONPATH",
    "PYTHONHASHSEED",


load_yaml(os.path.join(workflow.basedir, "config.yaml"))


configfile: os.path.join(workflow.basedir, "config.yaml")


report: "workflow/report/workflow.rst"


# The related methods' experiments: each is declared in one place, its file
# workflow/rules/<name>.smk (configuration handle, input functions, rules, and
# a target rule named like it); `related` and `all` build their target rules.
RELATED_EXPERIMENTS = [
    "wda",
    "invariance",
    "boosting",
    "semfs",
    "shift_recovery",
    "leaderboard",
    "model_selection",
]


include: "workflow/rules/common.smk"
include: "workflow/rules/targets.smk"
include: "workflow/rules/acquisition.smk"
include: "workflow/rules/extraction.smk"
include: "workflow/rules/cache.smk"
include: "workflow/rules/ranking.smk"
include: "workflow/rules/classification.smk"
include: "workflow/rules/aggregation.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/plotting.smk"
include: "workflow/rules/clinical.smk"
include: "workflow/rules/benchmarks.smk"
include: "workflow/rules/wda.smk"
include: "workflow/rules/invariance.smk"
include: "workflow/rules/boosting.smk"
include: "workflow/rules/semfs.smk"
include: "workflow/rules/shift_recovery.smk"
include: "workflow/rules/leaderboard.smk"
include: "workflow/rules/model_selection.smk"
include: "workflow/rules/recommend.smk"
include: "workflow/rules/shift.smk"
include: "workflow/rules/run_log.smk"
include: "workflow/rules/data_notes.smk"


# Local rules run where Snakemake itself runs, never submitted to a cluster:
# the jobs that fetch data (a login node has the network that compute nodes
# often lack), and the aggregation, tables and figures (seconds and at most
# 310 MB each, measured). Every other job is submitted when a cluster profile
# is used (profiles/slurm).
localrules:
    acquire,
    acquire_images,
    aggregate,
    feature_table,
    collect_results,
    make_table1,
    make_table2,
    make_table3,
    make_table5,
    make_table6,
    compare_figure2,
    make_comparison,
    plot_figure1,
    plot_figure2,
    plot_figure5,
    plot_figure6,
    plot_figure7,
    data_notes,


rule all:
    default_target: True
    input:
        lambda w: main_target_files("paper"),
        "results/paper/data_notes.csv",


rule available:
    input:
        lambda w: main_target_files("available"),
        "results/available/data_notes.csv",


rule table1:
    input:
        target_files("paper", "table1"),


rule figure1:
    input:
        target_files("paper", "figure1"),


rule table2:
    input:
        target_files("paper", "table2"),


rule figure2:
    input:
        target_files("paper", "figure2"),


rule table3:
    input:
        target_files("paper", "table3"),


rule table5:
    input:
        target_files("paper", "table5"),


rule table6:
    input:
        target_files("paper", "table6"),


rule figure7:
    input:
        target_files("paper", "figure7"),


rule figure5:
    input:
        target_files("paper", "figure5"),


rule figure6:
    input:
        target_files("paper", "figure6"),


rule comparison:
    input:
        "results/paper/comparison/summary.csv",


# Data staging: every input of `all` downloaded and verified against its hash,
# here. Run it on a cluster's login node before `--profile profiles/slurm all`,
# so that no compute job needs the network.
rule stage:
    input:
        # a function: evaluated only when `stage` is asked for
        lambda w: staged_files(),


# The related methods' experiments (RELATED_EXPERIMENTS): their target rules.
rule related:
    input:
        [getattr(rules, name).input for name in RELATED_EXPERIMENTS],


# Checked once every rule is defined (otfs_workflow.plan.check_rule_conventions).
check_rule_conventions(workflow.rules)
