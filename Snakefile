# otfs: reproducing "Feature Selection for Unsupervised Domain Adaptation using
# Optimal Transport" (Gautheron, Redko & Lartizien, ECML PKDD 2018).
#
#   snakemake --cores 16 all              # the paper's targets
#   snakemake --cores 4 figure7           # one figure and only what it needs
#   snakemake --configfile config/test.yaml --cores 2 all   # the tiny CI run
#
# Stages (workflow/rules/<stage>.smk -> workflow/scripts/<stage>.py ->
# src/otfs/stages/<stage>.py): acquisition, cache, selection, ranking,
# classification, aggregation, plotting.

import os

from snakemake.utils import min_version

min_version("9.0")


configfile: os.path.join(workflow.basedir, "config.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/acquisition.smk"
include: "workflow/rules/cache.smk"
include: "workflow/rules/selection.smk"
include: "workflow/rules/ranking.smk"
include: "workflow/rules/classification.smk"
include: "workflow/rules/aggregation.smk"
include: "workflow/rules/plotting.smk"


rule all:
    default_target: True
    input:
        rules.figure7.input,
        "results/results_long.tsv",
