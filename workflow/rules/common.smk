# Shared set-up: the library on the path, config validation, helpers.
import atexit
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

from otfs_workflow.codedeps import scoped_manifest  # noqa: E402
from otfs_workflow.plan_cache import PlanCache, code_signature  # noqa: E402
from otfs.registry import get_registry  # noqa: E402
from otfs.datasets._clinical import voxel_table_width  # noqa: E402
from otfs_workflow.config import (
    check_clinical_counts,
    check_config_size,
    load_yaml,
    check_feature_counts,
    pairs_for,
    references,
    experiment_schemas,
    fill_defaults,
    validate_config,
)  # noqa: E402
from otfs_workflow.data.images import domain_images  # noqa: E402
from otfs.datasets._uci import raw_files  # noqa: E402
from otfs_workflow.data.manifest import read_manifest  # noqa: E402
from otfs.datasets._readers import get_reader, reader_spec  # noqa: E402
from otfs_workflow.data.inspection import inspect_files  # noqa: E402
from otfs.extractors._base import get_extractor  # noqa: E402
from otfs_workflow.protocol import (
    DegenerateDomainError,
    check_pair,
    parse_pair,
    left_out,
    resolve_feature_counts,
    source_per_class,
    usable_counts,
)  # noqa: E402
from otfs_workflow.provenance import package_versions  # noqa: E402
from otfs_workflow.stages.acquisition import sources_for  # noqa: E402
from otfs_workflow.stages.ranking import build_ranker, pairs_strategy  # noqa: E402
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
# An experiment may declare its own configuration section, optional, in
# workflow/schemas/experiments/<section>.schema.yaml: its defaults fill what the
# configuration leaves out, and the section is checked with the rest.
EXPERIMENT_SCHEMAS = experiment_schemas(REPO / "workflow" / "schemas" / "experiments")
for _section, _schema in EXPERIMENT_SCHEMAS.items():
    config[_section] = fill_defaults(config.get(_section), _schema)
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


def plan_answer(question, args, compute):
    """``compute()``, or its answer kept from an earlier parse of the same code (PlanCache.get)."""
    return PLAN.get(question, args, compute)


def _validated():
    validate_config(
        config,
        REPO / "workflow" / "schemas" / "config.schema.yaml",
        sections=EXPERIMENT_SCHEMAS,
    )
    return True


plan_answer("validate_config", config, _validated)


def repo_file(*parts):
    """A file of the repository, as a path relative to the working directory where it lies inside it (the
    usual case: Snakemake runs in the repository), else absolute. A project folder copied or moved
    elsewhere then keeps the same input paths, and Snakemake reruns nothing."""
    path = REPO.joinpath(*parts)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# Paths of repository files named in the config are relative to the repository.
for _ds in config["datasets"].values():
    if _ds.get("manifest"):
        _ds["manifest"] = repo_file(_ds["manifest"])
    if _ds.get("image_manifest"):
        _ds["image_manifest"] = repo_file(_ds["image_manifest"])
config["wda"]["data"]["manifest"] = repo_file(config["wda"]["data"]["manifest"])


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
# scheduled by another (a cluster job step) reads what that one wrote.
_PACKAGE_DIRS = (SRC / "otfs", REPO / "workflow" / "lib" / "otfs_workflow")
_SCRIPTS = {p.name for p in (REPO / "workflow" / "scripts").glob("*.py")}
# The registries whose methods a rule names, by the keyword script_code takes.
_SCOPED_KINDS = {"rankers": "otfs.rankers", "adapters": "otfs.adapters"}


def script_code(script, **methods):
    """The code manifest of ``workflow/scripts/<script>``: a rule's ``code`` input.

    Snakemake does not follow a script's imports, so each rule depends on
    the library files its script imports, transitively, derived from the code
    (otfs_workflow.codedeps: every import, at module level and inside
    functions), never kept by hand, and listed with their content's digest in
    one file under .snakemake/otfs-code/, rewritten when parsing finds that an
    edit changed it. Of the rankers' and the adapters' folders, only the files
    of the methods a job runs count: ``rankers=`` and ``adapters=`` name them,
    as a wildcard (``rankers="ranker"``: the job's own) or a list of names. So
    a new ranker file reruns no existing job, and an edit of one adapter
    reruns that adapter's jobs alone. Each job imports those files first, and
    checks at its end that every module it ran is among the files listed
    (otfs_workflow.stages.job): a job that loads a method it did not name
    fails, naming the module.
    """
    if script not in _SCRIPTS:
        raise WorkflowError(f"script_code({script!r}): no workflow/scripts/{script}")
    unknown = sorted(set(methods) - set(_SCOPED_KINDS))
    if unknown:
        raise WorkflowError(
            f"script_code({script!r}): unknown keyword {unknown}; use {sorted(_SCOPED_KINDS)}"
        )
    if any(isinstance(v, str) for v in methods.values()):
        return _ScopedCode(script, methods)
    return _scoped_code_of_modules(script, _key(_modules_of(methods)))


class _ScopedCode:
    """``script_code`` where the methods are wildcards (an input function of the job's wildcards).

    Every manifest a job could ask for, one per module that registers a method
    of the kind (the folder's files, an entry point's module, the module of a
    namespace such as skada:NAME), is written when the workflow is parsed (a file
    written while Snakemake builds the DAG could be missed by its listing of
    the folder, taken once).
    """

    def __init__(self, script, methods):
        self.script, self.methods = script, methods
        wild = [kind for kind, v in methods.items() if isinstance(v, str)]
        fixed = {
            kind: tuple(v) for kind, v in methods.items() if not isinstance(v, str)
        }
        for kind in wild:
            group = _SCOPED_KINDS[kind]
            for module in registry_origins(group):
                _scoped_code_of_modules(
                    script, _key({**_modules_of(fixed), group: [module]})
                )

    def __call__(self, wildcards):
        names = {
            kind: [wildcards[v]] if isinstance(v, str) else list(v)
            for kind, v in self.methods.items()
        }
        return _scoped_code_of_modules(self.script, _key(_modules_of(names)))


def _modules_of(methods):
    """``{registry group: [module, ...]}`` of ``{kind: [method name, ...]}``."""
    out = {}
    for kind, names in methods.items():
        group = _SCOPED_KINDS[kind]
        out[group] = sorted({registry_origin(group, n) for n in names})
    return out


def registry_origin(group, name):
    """The module that registers ``name`` in the registry ``group`` (Registry.origin)."""
    return plan_answer(
        "registry_origin", [group, name], lambda: get_registry(group).origin(name)
    )


def registry_origins(group):
    """Every module that registers a method of the registry ``group`` (Registry.origins)."""
    return plan_answer("registry_origins", group, lambda: get_registry(group).origins())


def registry_names(group):
    """Every name registered in ``group``, plug-ins included, sorted."""
    return plan_answer("registry_names", group, lambda: sorted(get_registry(group)))


def _key(plugins):
    return tuple(sorted((g, tuple(sorted(set(m)))) for g, m in plugins.items()))


# Every registered ranker and adapter: what the benchmarks, which run them all, name.
ALL_RANKERS = registry_names("otfs.rankers")
ALL_ADAPTERS = registry_names("otfs.adapters")


@functools.cache
def _scoped_code_of_modules(script, plugins):
    return str(
        scoped_manifest(
            REPO / "workflow" / "scripts" / script,
            _PACKAGE_DIRS,
            {group: list(modules) for group, modules in plugins},
            write=workflow.is_main_process,
        )
    )


def fs_config(feature_set):
    try:
        return config["feature_sets"][feature_set]
    except KeyError:
        raise ValueError(
            f"unknown feature set {feature_set!r}; configured: {sorted(config['feature_sets'])}"
        ) from None


def fs_dataset(feature_set):
    return config["datasets"][fs_config(feature_set)["dataset"]]


def fs_domains(feature_set):
    return fs_config(feature_set).get("domains") or fs_dataset(feature_set)["domains"]


def is_extracted(feature_set):
    """Whether a feature set is extracted from images (else read from released files)."""
    return "extractor" in fs_config(feature_set)


def raw_path(feature_set, relpath):
    """Where the pipeline acquires a file of a feature set's dataset (a manifest path)."""
    return f"data/raw/{fs_config(feature_set)['dataset']}/{relpath}"


def images_dir(dataset, domain):
    """The acquired images of one domain."""
    return f"data/raw/{dataset}/images/{domain}"


def features_file(feature_set, domain):
    """The extraction output behind one domain of an extracted feature set."""
    fs = fs_config(feature_set)
    return f"data/features/{fs['dataset']}/{fs['extractor']}/{domain}.h5"


def rule_name_part(name):
    """``name`` (a feature set's) as part of a rule's name: a character other than a letter, digit or ``_``
    becomes ``_``."""
    return re.sub(r"\W", "_", name)


def pair_caches(w):
    """Cache files of the two domains of the pair ``w.pair``."""
    return [f"data/cache/{w.feature_set}/{d}.h5" for d in parse_pair(w.pair)]


def pairs_domains(pairs):
    """Domains that appear in ``pairs``, in first-seen order."""
    return list(dict.fromkeys(d for p in pairs for d in parse_pair(p)))


def fs_pairs(feature_set):
    domains = set(fs_domains(feature_set))
    pairs = pairs_for(config, fs_config(feature_set)["dataset"])
    return [p for p in pairs if set(parse_pair(p)) <= domains]


def fs_reader(feature_set):
    """The dataset reader of a feature set read from files (None for an extracted one)."""
    spec = reader_spec(fs_config(feature_set))
    return None if spec is None else get_reader(*spec)


@functools.cache
def dataset_manifest(dataset):
    """A dataset's parsed manifest, or None where it has none."""
    path = config["datasets"][dataset].get("manifest")
    return read_manifest(path) if path else None


def reader_files(feature_set, domain):
    """The manifest paths a feature set's reader reads ``domain`` from ([] for an extracted set)."""
    reader = fs_reader(feature_set)
    return [] if reader is None else reader.files(domain)


def reader_local_files(feature_set, domain):
    """The files a feature set's reader reads ``domain`` from in place (a user's own tables)."""
    reader = fs_reader(feature_set)
    return [] if reader is None else [str(p) for p in reader.local_files(domain)]


@functools.cache
def fs_n_features(feature_set):
    """Number of features of a feature set, from its reader or extractor (no data needed); once per
    parse (a user's table's header is read once, however many rules and captions ask).
    """
    fs = fs_config(feature_set)
    if is_extracted(feature_set):
        name = fs["extractor"]
        return plan_answer(
            "extractor_n_features", name, lambda: get_extractor(name).n_features
        )
    try:
        return fs_reader(feature_set).count_features(
            list(fs_domains(feature_set)), dataset_manifest(fs["dataset"])
        )
    except (KeyError, ValueError) as exc:
        raise WorkflowError(f"feature set {feature_set!r}: {exc}") from exc


# --- rankers -----------------------------------------------------------------
# The OT rankers (ot, ot-1nn, ot-random) take Algorithm 1's settings from config
# `sample_selection` and Algorithm 2's from `ranking`; every other ranker its own from
# `rankers.<name>` (its defaults where absent). otfs_workflow.config checks both.
OT_RANKER_SETTINGS = {
    "sample_selection": ("tie_break", "emd_max_iter"),
    "ranking": ("reg", "norm", "method", "max_iter", "tol"),
}


@functools.cache
def ranker_strategy(name):
    """The sample-selection strategy whose pairs ranker ``name`` ranks (the OT rankers), else None."""
    params = config.get("rankers", {}).get(name)
    return plan_answer(
        "ranker_strategy",
        [name, params],
        lambda: pairs_strategy(build_ranker(name, params)),
    )


def ranker_needs_class_labels(name):
    """Whether ranker ``name``, with its configured parameters, reads class labels."""
    params = config.get("rankers", {}).get(name)
    return plan_answer(
        "ranker_needs_class_labels",
        [name, params],
        lambda: bool(build_ranker(name, params).needs_class_labels()),
    )


def k_selection_kind(name):
    """The kind of the choice-of-k rule ``name`` (``scorer``, ``data``, ...)."""
    return plan_answer(
        "k_selection_kind", name, lambda: get_registry("otfs.k_selection")[name].kind
    )


def ranker_params(name):
    """A ranker's parameters, as the ranking stage builds it."""
    params = dict(config.get("rankers", {}).get(name) or {})
    if ranker_strategy(name):
        for section, keys in OT_RANKER_SETTINGS.items():
            params.update({k: config[section][k] for k in keys})
    return params


def pair_source_per_class(pair, feature_set):
    """Source samples per class of each iteration of ``pair``: the feature set's `source_per_class` where it
    has one (a data family's own protocol), else config `protocol` (with its per-domain overrides).
    """
    own = fs_config(feature_set).get("source_per_class")
    if own is not None:
        return source_per_class(parse_pair(pair)[0], own, {})
    return source_per_class(
        parse_pair(pair)[0],
        config["protocol"]["source_per_class"],
        config["protocol"]["source_per_class_overrides"],
    )


def cache_config(feature_set):
    """The settings of a feature set that its caches depend on: not the protocol keys of later stages
    (`source_per_class`, `inapplicable_adapters`), so that changing those rebuilds no cache.
    """
    return {
        k: v
        for k, v in fs_config(feature_set).items()
        if k not in ("source_per_class", "inapplicable_adapters")
    }


def applicable_adapters(feature_set, adapters):
    """``adapters`` without those the feature set declares inapplicable (`inapplicable_adapters`)."""
    skip = fs_config(feature_set).get("inapplicable_adapters") or {}
    return [a for a in adapters if a not in skip]


def adapter_params(name):
    """An adapter's hyper-parameters from config `adapters` (none: its defaults)."""
    return dict(config.get("adapters", {}).get(name) or {})


def ranking_job_params(prefix=""):
    """The params of a ranking job (rule rank_features; run_family_pair's, named with ``prefix``)."""
    return {
        f"{prefix}ranker_params": lambda w: ranker_params(w.ranker),
        f"{prefix}per_class": lambda w: pair_source_per_class(w.pair, w.feature_set),
        f"{prefix}iterations": lambda w: ranking_iterations(w.feature_set, w.ranker),
    }


def curves_job_params(adapters, grid=None, prefix=""):
    """The params of a job that runs the curves of ``adapters`` on one grid: the job's {grid} wildcard
    (rule classify_leaderboard_adapters), or ``grid`` (run_family_pair's, named with ``prefix``).
    """

    def of(w):
        return grid_config(w.grid if grid is None else grid)

    return {
        f"{prefix}adapters": list(adapters),
        f"{prefix}adapter_params": [adapter_params(a) for a in adapters],
        f"{prefix}orders": lambda w: of(w)["orders"],
        f"{prefix}feature_counts": lambda w: of(w)["feature_counts"],
        f"{prefix}iterations": lambda w: of(w).get("iterations"),
        f"{prefix}metrics": lambda w: of(w).get("metrics", {}),
    }


def grid_config(name):
    """The grid ``name`` of config ``grids``; an unknown one is an error naming the grids."""
    try:
        return config["grids"][name]
    except KeyError:
        raise WorkflowError(
            f"unknown grid {name!r} (a file path names it); config grids: {sorted(config['grids'])}"
        ) from None


# Every number of features asked for is within [1, d] of its feature set: checked
# before any job runs, from the manifests (no data needed).
# A fraction that gives 0 of a small feature set's d is left out of its grids and
# tables, with a note (printed here, and in the tables' captions).
def print_notes(notes):
    """Print the configuration's notes (what a smaller configuration leaves out), once per run."""
    if workflow.is_main_process:
        for note in notes:
            print(f"note: {note}", file=sys.stderr)


# Notes about one feature set: printed when the run starts (workflow/rules/run_log.smk), for the feature
# sets that the run's jobs use only, so that a target that reads one feature set is not told about others.
FEATURE_SET_NOTES = []  # (feature set, note)


def defer_note(feature_set, note):
    """A note about ``feature_set``, printed at the run's start if one of its jobs uses that feature set."""
    FEATURE_SET_NOTES.append((feature_set, note))


FEATURE_COUNT_NOTES = check_feature_counts(config, fs_n_features)
for _note in FEATURE_COUNT_NOTES:
    _named = [fs for fs in config["feature_sets"] if f"feature set {fs!r}" in _note]
    defer_note(_named[0] if _named else None, f"note: {_note}")


def count_notes(feature_set):
    """The notes of FEATURE_COUNT_NOTES about one feature set (for its tables' captions)."""
    return [n for n in FEATURE_COUNT_NOTES if f"feature set {feature_set!r}" in n]


def check_user_tables():
    """A user's tables (a reader with inspect(): otfs.datasets.tabular), read and checked before any job:
    every bad cell or column of every file, and each configured pair's domains (enough samples and
    classes, labels in common) in one error. What was found is remembered in .snakemake/otfs-inspect
    while the files and the reader's parameters stay the same."""
    problems = []
    for fs in config["feature_sets"]:
        if is_extracted(fs):
            continue
        reader = fs_reader(fs)
        if not hasattr(reader, "inspect"):
            continue
        files = [p for d in fs_domains(fs) for p in reader_local_files(fs, d)]
        if not all(Path(p).is_file() for p in files):
            continue  # `available` leaves it out; `all` says where to put it
        try:
            found = inspect_files(reader, Path(".snakemake") / "otfs-inspect")
        except ValueError as exc:
            problems.append(f"feature set {fs!r}: {exc}")
            continue
        for domain, found_domain in found["domains"].items():
            if found_domain.get("constant") and domain in fs_domains(fs):
                defer_note(
                    fs,
                    f"feature set {fs!r}: domain {domain!r}: {len(found_domain['constant'])} feature(s) "
                    f"constant there {found_domain['constant']}: they carry nothing in it",
                )
        for pair in fs_pairs(fs):
            s, t = parse_pair(pair)
            src, tgt = found["domains"][s], found["domains"][t]
            try:
                notes = check_pair(
                    pair,
                    None if src.get("unlabelled") else src["labels"],
                    None if tgt.get("unlabelled") else tgt["labels"],
                    target_rows=tgt["rows"],
                )
            except DegenerateDomainError as exc:
                problems.append(f"feature set {fs!r}: {exc}")
                continue
            for note in notes:
                defer_note(fs, f"feature set {fs!r}: {note}")
    if problems:
        raise WorkflowError("your data cannot run:\n" + "\n".join(problems))


if workflow.is_main_process:
    check_user_tables()


def counts(feature_set, specs):
    """Resolve "d/8"-style specs for a feature set, those that give 0 of its d left out (a note says so)."""
    return usable_counts(specs, fs_n_features(feature_set))


# --- inputs of the acquisition and cache rules ----------------------------------
SOURCE_KEYS = (
    "local_dir",
    "mirror_dirs",
    "mirror_env",
    "download",
    "download_timeout_s",
)


def source_settings(dataset):
    """The settings of a dataset that say where its files come from (and only those,
    so that editing another setting of the dataset does not refetch its files)."""
    ds = config["datasets"][dataset]
    return {k: ds[k] for k in SOURCE_KEYS if k in ds}


def cache_inputs(w):
    """The files a feature set's reader reads a domain from (and the manifest), or an extracted
    feature set's extraction output."""
    if is_extracted(w.feature_set):
        return {"features": features_file(w.feature_set, w.domain)}
    inputs = {
        "raw": [
            raw_path(w.feature_set, r) for r in reader_files(w.feature_set, w.domain)
        ],
        "local": reader_local_files(w.feature_set, w.domain),
    }
    inputs = {
        k: v for k, v in inputs.items() if v
    }  # Snakemake misplaces an empty named list
    if fs_dataset(w.feature_set).get("manifest"):
        inputs["manifest"] = fs_dataset(w.feature_set)["manifest"]
    return inputs


# --- data availability -------------------------------------------------------
# "paper" targets use every configured domain and may download; "available"
# targets use the domains whose files are present locally, never downloading.
TARGET_SETS = ("paper", "available")


def _search_folders(feature_set):
    fs = fs_config(feature_set)
    return [
        folder
        for _, folder in sources_for(
            fs["dataset"], fs_dataset(feature_set), None
        ).folders()
    ]


@functools.cache
def _images_present(dataset, domain):
    """Whether every image of a domain is in the acquired folder or a searched folder."""
    if Path(images_dir(dataset, domain)).is_dir():
        return True
    ds = config["datasets"][dataset]
    folders = [f for _, f in sources_for(dataset, ds, None).folders()]
    try:
        records = domain_images(read_manifest(ds["image_manifest"]), domain)
    except ValueError:
        return False
    return all(any((f / r.entry.path).is_file() for f in folders) for r in records)


def _present(feature_set, domain):
    """Whether a domain's input is local: the acquired copy or a searched folder."""
    fs = fs_config(feature_set)
    if is_extracted(feature_set):
        return Path(features_file(feature_set, domain)).is_file() or _images_present(
            fs["dataset"], domain
        )
    if not all(Path(p).is_file() for p in reader_local_files(feature_set, domain)):
        return False
    if not reader_files(feature_set, domain):
        return True  # nothing to acquire: generated, or read in place
    folders = _search_folders(feature_set)
    return all(
        Path(raw_path(feature_set, rel)).is_file()
        or any((f / rel).is_file() for f in folders)
        for rel in reader_files(feature_set, domain)
    )


def local_domains(feature_set):
    """Domains of a feature set whose input is present locally (raw, local, mirrors)."""
    return [d for d in fs_domains(feature_set) if _present(feature_set, d)]


def require_obtainable(feature_set):
    """Fail while the DAG is built if a file is neither local nor downloadable."""
    if fs_dataset(feature_set).get("download"):
        return  # the acquisition job fetches it, or fails naming the file
    missing = [
        d for d in fs_domains(feature_set) if d not in local_domains(feature_set)
    ]
    if missing:
        fs, ds = fs_config(feature_set), fs_dataset(feature_set)
        if is_extracted(feature_set):
            where = ", ".join(
                f"{Path(ds['local_dir']) / 'images' / d}/<class>/<file>"
                for d in missing
            )
        else:
            where = ", ".join(
                [
                    str(Path(ds["local_dir"]) / rel)
                    for d in missing
                    for rel in reader_files(feature_set, d)
                ]
                + [
                    p
                    for d in missing
                    for p in reader_local_files(feature_set, d)
                    if not Path(p).is_file()
                ]
            )
        how = (
            f", set {ds['mirror_env']}, or enable datasets.{fs['dataset']}.download"
            if ds.get("mirror_env")
            else ""
        )
        raise WorkflowError(
            f"feature set {feature_set!r}: the data of domain(s) {missing} cannot be obtained "
            f"(not found locally and downloads are disabled). Put the files at {where}{how}. "
            "`snakemake available` builds every target the present data allows."
        )


def scope_for(target_set, feature_set):
    """Domain scope of a feature set in a target set: "all", or "a+b+c" when partial."""
    if target_set == "paper":
        require_obtainable(feature_set)
        return "all"
    present = local_domains(feature_set)
    return "all" if present == list(fs_domains(feature_set)) else "+".join(present)


def scope_pairs(feature_set, scope):
    """Configured pairs of a feature set within the domains of ``scope``."""
    domains = set(fs_domains(feature_set) if scope == "all" else scope.split("+"))
    return [p for p in fs_pairs(feature_set) if set(parse_pair(p)) <= domains]


def target_feature_sets(target_set, names):
    """Feature sets a target covers: as configured, or those with data for a pair."""
    if target_set == "paper":
        return list(names)
    return [fs for fs in names if scope_pairs(fs, scope_for("available", fs))]


def aggregate_caches(w):
    """The caches of the domains of an aggregate's pairs (its scope)."""
    return [
        f"data/cache/{w.feature_set}/{d}.h5"
        for d in pairs_domains(scope_pairs(w.feature_set, w.scope))
    ]


def aggregate_run(w, ranker, adapter):
    """The parameters of one aggregate: rule aggregate's `run`, an entry of a batch's `runs`."""
    return {
        "feature_set": w.feature_set,
        "scope": w.scope,
        "ranker": ranker,
        "adapter": adapter,
        "grid": w.grid,
        "pairs": len(scope_pairs(w.feature_set, w.scope)),
        "iterations": len(ITERATIONS),
    }


def batch_aggregate_tables(rankers, adapters):
    """Input function: the run tables of a batch of aggregates, every (ranker, adapter) in the outputs' order
    (rules aggregate_family, aggregate_leaderboard; script aggregation_batch.py)."""
    return lambda w: expand(
        "results/runs/{fs}/classification/{ranker}/{adapter}/{grid}/{pair}.tsv",
        fs=w.feature_set,
        ranker=rankers,
        adapter=adapters,
        grid=w.grid,
        pair=scope_pairs(w.feature_set, w.scope),
    )


def batch_aggregate_params(rankers, adapters):
    """Params function: the `runs` of a batch of aggregates, in the same order."""
    return lambda w: [aggregate_run(w, r, a) for r in rankers for a in adapters]


def batch_aggregate_outputs(name, rankers, adapters):
    """One of rule aggregate's files (``name``) of every (ranker, adapter) of a batch."""
    return expand(
        "results/aggregate/{{feature_set}}/{{scope}}/{ranker}/{adapter}/{{grid}}/"
        + name,
        ranker=rankers,
        adapter=adapters,
    )


def agg(target_set, feature_set, ranker=None, adapter="NA", grid="curves"):
    """Folder of one aggregate, for the scope of ``feature_set`` in ``target_set``."""
    scope = scope_for(target_set, feature_set)
    ranker = ranker or MAIN_RANKER
    return f"results/aggregate/{feature_set}/{scope}/{ranker}/{adapter}/{grid}"


def agg_files(prefixes, kinds=("per_pair.tsv", "summary.tsv", "provenance.json")):
    prefixes = [prefixes] if isinstance(prefixes, str) else prefixes
    return [f"{p}/{k}" for p in prefixes for k in kinds]


PAPER = repo_file("data", "paper")  # published numbers, transcribed
ITERATIONS = list(range(config["protocol"]["iterations"]))
# Shown in report captions (a version change rebuilds tables and figures).
VERSIONS = ", ".join(f"{k} {v}" for k, v in package_versions().items())
# The ranker of the paper's tables and figures (Table 5 compares the OT rankers).
MAIN_RANKER = config["ranking"]["ranker"]


# --- conventions every rule follows, checked before any job runs -----------------
# Rules that fetch data are exempt from code inputs: their outputs are checked
# against the manifests' hashes, whatever code fetched them (editing the
# acquisition code does not refetch gigabytes).
CONTENT_ADDRESSED_RULES = {"acquire", "acquire_images", "acquire_uci"}


def check_rule_conventions(workflow_rules):
    """Every rule with a script lists that script's import closure as its ``code`` input, and every
    benchmark file lies under ``logs/benchmarks/<rule>/`` (otfs_workflow.cluster maps a file to its rule by it).
    """
    problems = []
    for r in workflow_rules:
        if r.benchmark is not None and not str(r.benchmark).startswith(
            f"logs/benchmarks/{r.name}/"
        ):
            problems.append(
                f"rules.{r.name}: benchmark {r.benchmark} is not under logs/benchmarks/{r.name}/"
            )
        if not r.script or r.name in CONTENT_ADDRESSED_RULES:
            continue
        script = Path(r.script).name
        if "code" not in r.input.keys():
            if not any(
                callable(f) for f in r.input
            ):  # an unpacked input function may give it: the tests check
                problems.append(
                    f'rules.{r.name}: no code input; write code=script_code("{script}")'
                )
            continue
        declared = r.input.get("code")
        if isinstance(declared, _ScopedCode):
            if declared.script != script:
                problems.append(
                    f"rules.{r.name}: its code input is the code manifest of {declared.script}, "
                    f'not of its script {script}; write code=script_code("{script}", ...)'
                )
            continue
        declared = (
            {str(declared)} if isinstance(declared, str) else {str(f) for f in declared}
        )
        if not declared or not all(
            Path(d).name.split("@")[0].removesuffix(".json") == script for d in declared
        ):
            problems.append(
                f"rules.{r.name}: its code input is not the code manifest of {script}; "
                f'write code=script_code("{script}")'
            )
    if problems:
        raise WorkflowError("workflow conventions broken:\n" + "\n".join(problems))
