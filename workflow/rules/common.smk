# Shared set-up: the library on the path, config validation, helpers.
import atexit
import copy
import functools
import os
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

# The library gives POT NumPy arrays only; without this, `import ot` also imports
# PyTorch when it is installed (the extraction extra), about 1.4 s per job. Jobs
# inherit the variable; the extraction rule imports PyTorch itself.
os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")

REPO = Path(workflow.basedir)
SRC = REPO / "src"
# The pipeline always runs the library (src/otfs) and the pipeline package
# (workflow/lib/otfs_workflow) of this checkout (the scripts do the same).
sys.path[:0] = [str(SRC), str(REPO / "workflow" / "lib")]

from otfs_workflow.plan_cache import PlanCache, code_signature  # noqa: E402
from otfs_workflow.config import (
    check_config_size,
    load_yaml,
    references,
    validate_config,
)  # noqa: E402
from otfs.datasets._readers import get_reader  # noqa: E402
from otfs.extractors._base import get_extractor  # noqa: E402
from otfs_workflow.plan import (
    CLINICAL_TARGETS,
    OT_RANKER_SETTINGS,
    RECOMMEND_OUT,
    SHIFT_OUT,
    CodeInputs,
    Plan,
    agg_files,
    images_dir,
    pairs_domains,
    reporter,
    check_rule_conventions,
    repo_file as repo_file_of,
    rule_name_part,
)  # noqa: E402
from otfs_workflow.provenance import package_versions  # noqa: E402
from otfs_workflow.snakemake_scheduler import apply_patches  # noqa: E402

# Snakemake's rate limiter starts a re-evaluation timer chain per finished job,
# and each chain re-runs the job selection every second (snakemake/snakemake#3804):
# one pending timer at a time instead. Its SIGTERM handler takes a lock the
# scheduling loop may hold, and then waits for it forever: a handler that never
# blocks. Each applies only where Snakemake's method is the buggy one, and never
# stops the parse (otfs_workflow.snakemake_scheduler).
apply_patches()

# Files given with --configfile, read again strictly: Snakemake keeps the last of a
# key given twice in silence, and an alias bomb would make the checks below take
# hours. Then the merged configuration's size, before anything walks it.
for _configfile in workflow.overwrite_configfiles:
    load_yaml(_configfile)
check_config_size(config)
# What parsing asks the library (the configuration's checks, the registries'
# names and files, the rankers' traits) depends on the code and the
# configuration alone: the answers are kept in .snakemake/otfs-plan/, under a
# signature of the library, the workflow's package and schemas and the installed
# packages, so that a parse after the first imports none of the methods
# (otfs_workflow.plan_cache). The process that schedules jobs writes them.
PLAN = PlanCache(
    code_signature(
        [
            SRC / "otfs",
            REPO / "workflow" / "lib" / "otfs_workflow",
            REPO / "workflow" / "schemas",
        ]
    ),
    write=workflow.is_main_process,
)
atexit.register(PLAN.save)
# ``compute()``, or its answer kept from an earlier parse of the same code (PlanCache.get).
plan_answer = PLAN.get


# The configuration, checked by Snakemake's `validate` with the schema's defaults filled, and
# cross-checked (otfs_workflow.config.validate_config); kept for the next parse of the same one.
# A copy: what the parse changes in config (paths made relative below) stays out of the kept answer.
_checked = plan_answer(
    "validate_config",
    config,
    lambda: validate_config(
        config, REPO / "workflow" / "schemas" / "config.schema.yaml"
    )
    or config,
)
config.clear()
config.update(copy.deepcopy(_checked))


# A file of the repository, relative to the working directory where it lies inside it (plan.repo_file).
repo_file = functools.partial(repo_file_of, REPO)
# Paths of repository files named in the config are relative to the repository.
for _ds in config["datasets"].values():
    if _ds.get("manifest"):
        _ds["manifest"] = repo_file(_ds["manifest"])
    if _ds.get("image_manifest"):
        _ds["image_manifest"] = repo_file(_ds["image_manifest"])
config["wda"]["data"]["manifest"] = repo_file(config["wda"]["data"]["manifest"])

# What the rules plan from the configuration (feature sets, pairs, scopes, parameters, paths, input
# functions): otfs_workflow.plan, tested on its own (tests/test_plan.py); its methods under the names
# the rule files use.
P = Plan(config, answer=plan_answer)
registry_origin, registry_origins, registry_names = (
    P.registry_origin,
    P.registry_origins,
    P.registry_names,
)
fs_config, fs_dataset, fs_domains, fs_pairs = (
    P.fs_config,
    P.fs_dataset,
    P.fs_domains,
    P.fs_pairs,
)
fs_reader, fs_n_features, is_extracted = P.fs_reader, P.fs_n_features, P.is_extracted
raw_path, features_file, dataset_manifest = (
    P.raw_path,
    P.features_file,
    P.dataset_manifest,
)
reader_files, reader_local_files = P.reader_files, P.reader_local_files
counts, cache_config, applicable_adapters = (
    P.counts,
    P.cache_config,
    P.applicable_adapters,
)
pair_source_per_class, source_settings = P.pair_source_per_class, P.source_settings
ranker_strategy, ranker_needs_class_labels, ranker_params = (
    P.ranker_strategy,
    P.ranker_needs_class_labels,
    P.ranker_params,
)
k_selection_kind, adapter_params, grid_config = (
    P.k_selection_kind,
    P.adapter_params,
    P.grid_config,
)
curves_job_params = P.curves_job_params
pair_caches, cache_inputs, aggregate_caches = (
    P.pair_caches,
    P.cache_inputs,
    P.aggregate_caches,
)
local_domains, require_obtainable = P.local_domains, P.require_obtainable
scope_for, scope_pairs, target_feature_sets = (
    P.scope_for,
    P.scope_pairs,
    P.target_feature_sets,
)
aggregate_run, agg = P.aggregate_run, P.agg
batch_aggregate_tables, batch_aggregate_params, batch_aggregate_outputs = (
    P.batch_aggregate_tables,
    P.batch_aggregate_params,
    P.batch_aggregate_outputs,
)


# No wildcard spans a '/', so each output pattern matches one kind of file.
wildcard_constraints:
    feature_set=r"[A-Za-z0-9_]+",
    dataset=r"[A-Za-z0-9_-]+",
    domain=r"[A-Za-z0-9_]+",
    extractor=r"[A-Za-z0-9_.-]+",
    pair=r"[A-Za-z0-9_]+-[A-Za-z0-9_]+",
    selection=r"[A-Za-z0-9_]+",  # a name of otfs.sample_selection.STRATEGIES, plug-ins included
    ranker=r"[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*",  # a name of otfs.rankers.FEATURE_RANKERS, plug-ins included
    adapter=r"(skada:)?[A-Za-z0-9_]+",  # a name of otfs.adapters.ADAPTERS, or skada:NAME
    grid=r"[A-Za-z0-9_]+",
    scope=r"all|[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)+",
    target_set=r"paper|available",
    repetition=r"\d+",
    method=r"[A-Za-z0-9_]+",
    name=r"[a-z]+",
    file=r"[A-Za-z0-9_.-]+",


# Scheduling: among the jobs ready to run, those of the paper's reproduction
# (its tables and figures, and section 5.2's clinical study: the rules with
# `priority: PRIORITY_PAPER`) start first; every other job (the related
# methods, the image sets' leaderboard, the data families' grid) has
# Snakemake's default priority, 0. So `available` delivers the paper's tables
# and figures first, whatever order the DAG lists its jobs in.
PRIORITY_PAPER = 50
# The images' acquisition and extraction ask for several threads (IMAGE_THREADS).
# A job starts only when its threads are free at once, and a stream of 1-thread
# jobs frees one core at a time, so these would wait for the end of the run.
# They rank above every other job instead: acquire_images starts while all
# cores are free, and each extract_features asks for no more threads than the
# acquire_images whose end makes it ready, so it starts on the cores freed.
# Snakemake's default scheduler (ilp) picks the jobs whose priorities have the
# largest sum, so an image job outranks as many 1-thread paper jobs as it takes
# cores; the greedy scheduler takes them by priority alone.
IMAGE_THREADS = 4
PRIORITY_IMAGES = PRIORITY_PAPER * IMAGE_THREADS + 1


# Every rule's code manifest, derived from imports when the workflow is parsed
# and written by the process that schedules jobs; a process that runs jobs
# scheduled by another (a cluster job step) reads what that one wrote
# (otfs_workflow.plan.CodeInputs).
script_code = CodeInputs(REPO, P, write=workflow.is_main_process).script_code


# Every registered ranker and adapter: what the benchmarks, which run them all, name.
ALL_RANKERS = registry_names("otfs.rankers")
ALL_ADAPTERS = registry_names("otfs.adapters")
# The params of a ranking job (rule rank_features; run_family_pair's, named with a prefix).
ranking_job_params = P.ranking_job_params


# Notes about one feature set: printed when the run starts (workflow/rules/run_log.smk), for the feature
# sets that the run's jobs use only, so that a target that reads one feature set is not told about others.
FEATURE_SET_NOTES = []  # (feature set, note)
# Every number of features asked for is within [1, d] of its feature set: checked
# before any job runs, from the manifests (no data needed).
# A fraction that gives 0 of a small feature set's d is left out of its grids and
# tables, with a note (printed at the start, and in the tables' captions).
FEATURE_COUNT_NOTES = P.feature_count_notes()
for _note in FEATURE_COUNT_NOTES:
    _named = [fs for fs in config["feature_sets"] if f"feature set {fs!r}" in _note]
    FEATURE_SET_NOTES.append((_named[0] if _named else None, f"note: {_note}"))


count_notes = P.count_notes


# A user's tables (a reader with inspect(): otfs.datasets.tabular), read and checked before any job:
# every bad cell or column of every file, and each configured pair's domains, in one error.
if workflow.is_main_process:
    _problems, _notes = P.user_table_findings(Path(".snakemake") / "otfs-inspect")
    for _fs, _note in _notes:
        FEATURE_SET_NOTES.append((_fs, _note))
    if _problems:
        raise WorkflowError("your data cannot run:\n" + "\n".join(_problems))


# --- data availability -------------------------------------------------------
# "paper" targets use every configured domain and may download; "available"
# targets use the domains whose files are present locally, never downloading.
TARGET_SETS = ("paper", "available")


PAPER = repo_file("data", "paper")  # published numbers, transcribed
ITERATIONS = P.iterations
# Shown in report captions (a version change rebuilds tables and figures).
VERSIONS = ", ".join(f"{k} {v}" for k, v in package_versions().items())
# The ranker of the paper's tables and figures (Table 5 compares the OT rankers).
MAIN_RANKER = P.main_ranker
