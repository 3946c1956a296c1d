# The paper's tables and figures, and what each needs. Two target sets:
#   results/paper/...      every configured domain (`all`, and the named rules)
#   results/available/...  the domains whose files are present (`available`)

TARGETS_CONFIG = config["targets"]
TABLE_EXTS = ["csv", "tex", "md", "comparison.csv"]
CURVE_EXTS = ["pdf", "png", "csv"]
TOY_EXTS = ["pdf", "png"]
PER_FS = {
    "table1": TABLE_EXTS,
    "figure1": CURVE_EXTS,
    "figure2": [*CURVE_EXTS, "comparison.csv"],
    "table3": TABLE_EXTS,
    "table5": TABLE_EXTS,
}
MULTI_FS = {"table2": TABLE_EXTS, "table6": TABLE_EXTS, "figure7": CURVE_EXTS}
TOYS = {"figure5": TOY_EXTS, "figure6": TOY_EXTS}


@functools.cache
def shift_family_feature_sets():
    """The feature sets of the data families (config `shift.families`)."""
    return frozenset(
        fs for names in config["shift"]["families"].values() for fs in names
    )


@functools.cache
def shift_data_feature_sets():
    """The feature sets of the shift data (config `shift`): those of a family, and every other one read
    from a manifest of a family's or a regression's dataset (a family that a smaller configuration
    leaves out of `shift.families` is not thereby one of the paper's image feature sets).
    """
    members = shift_family_feature_sets()
    manifests = {fs_dataset(fs).get("manifest") for fs in members} | {
        config["datasets"][c["dataset"]].get("manifest")
        for c in config["shift"].get("regression", {}).values()
    }
    manifests.discard(None)
    return frozenset(members) | {
        fs
        for fs in config["feature_sets"]
        if fs_dataset(fs).get("manifest") in manifests
    }


@functools.cache
def _listed_feature_sets():
    """The feature sets that a section of config lists by name (`targets.*`, `leaderboard`,
    `model_selection`, the related methods' experiments): their grids may read every iteration.
    """
    sections = [*config.values(), *TARGETS_CONFIG.values()]
    return frozenset(
        fs
        for sec in sections
        if isinstance(sec, dict) and isinstance(sec.get("feature_sets"), list)
        for fs in sec["feature_sets"]
    )


@functools.cache
def _all_iteration_rankers():
    """The rankers that the paper's grids read on every iteration: `ranking.ranker` and the rankers a
    target of `targets` names (Table 5's sample-selection strategies)."""
    names = {config["ranking"]["ranker"]}
    for section in TARGETS_CONFIG.values():
        if isinstance(section, dict):
            names.update(section.get("rankers") or [])
    return frozenset(names)


def _first_iterations(reads):
    """ranked_iterations' form for grids that read the first ``reads`` iterations (None: every one)."""
    if not reads or None in reads or max(reads) >= len(ITERATIONS):
        return ITERATIONS
    return {"ranked": ITERATIONS[: max(reads)], "protocol": len(ITERATIONS)}


def ranking_iterations(feature_set, ranker=None):
    """What rank_features ranks (otfs_workflow.protocol.ranked_iterations): the protocol's iterations, or
    the first n that every grid reading the ranking reads, with the protocol's count (a reader of more
    fails, naming the file):
    - a feature set of the shift data that no other section lists: the grids `shift.grid` and
      `model_selection.grid`;
    - a ``ranker`` that no paper target reads (`_all_iteration_rankers`) and that `leaderboard` or
      `model_selection` lists for this feature set: the grids of the sections that list it (the
      leaderboard's zoo reads 5 of 19).
    Anything else (a ranking asked for by its path included) is ranked on every iteration.
    """
    if (
        feature_set in shift_data_feature_sets()
        and feature_set not in _listed_feature_sets()
    ):
        return _first_iterations(
            [
                grid_config(g).get("iterations")
                for g in (SHIFT_CONFIG["grid"], MODEL_SELECTION_CONFIG["grid"])
            ]
        )
    if ranker is None or ranker in _all_iteration_rankers():
        return ITERATIONS
    return _first_iterations(
        [
            grid_config(section["grid"]).get("iterations")
            for section in (LEADERBOARD_CONFIG, MODEL_SELECTION_CONFIG)
            if feature_set in section["feature_sets"] and ranker in section["rankers"]
        ]
    )


@functools.cache
def batched_pairs(feature_set):
    """The pairs of ``feature_set`` that the rules made per feature set (rank_pairs_, classify_pairs_,
    score_pairs_ <feature set>) run in one job: those with data, the `available` scope that the
    leaderboard and model selection read; none for the shift data's feature sets (whose data families
    run each pair in one job, rule run_family_pair).
    """
    if feature_set in shift_data_feature_sets():
        return []
    return scope_pairs(feature_set, scope_for("available", feature_set))


def batched_feature_sets(section):
    """The feature sets of config ``section`` (`leaderboard`, `model_selection`) that have pairs to batch."""
    return [fs for fs in config[section]["feature_sets"] if batched_pairs(fs)]


def pair_batched_rankings():
    """``{feature_set: rankers}`` ranked one job per (feature set, ranker) for all its `batched_pairs`
    (rules rank_pairs_<feature set>): the rankers of the leaderboard and model selection that no paper
    target reads (`ranking_iterations` ranks them on the iterations those grids read). Each such ranking
    of a pair takes seconds; one job per pair paid as much again for its interpreter and imports.
    """
    batched = {}
    by_section = {
        "leaderboard": config["leaderboard"]["rankers"],
        "model_selection": model_selection_rankers(),
    }
    for section, rankers in by_section.items():
        for fs in batched_feature_sets(section):
            for r in rankers:
                if r not in _all_iteration_rankers():
                    batched.setdefault(fs, set()).add(r)
    return {fs: sorted(rankers) for fs, rankers in batched.items()}


def model_selection_rankers():
    """The rankers whose choice-of-k rows a target reads on `model_selection`'s feature sets: its own, and
    the label-free recommendation's candidates (config `recommend.rankers`, recommend.smk).
    """
    return list(
        dict.fromkeys(
            [
                *config["model_selection"]["rankers"],
                *(config["recommend"]["rankers"] or []),
            ]
        )
    )


def per_fs_sets(target_set, target):
    """Feature sets of a per-feature-set target: as configured for the paper;
    every feature set with data for the available set, except Figure 2 which
    is GoogleNet's (its configured list), and except the shift data's feature
    sets (shift_data_feature_sets), which have their own targets."""
    if target_set == "paper" or target == "figure2":
        names = TARGETS_CONFIG[target]["feature_sets"]
    else:
        shift = shift_data_feature_sets()
        names = [fs for fs in config["feature_sets"] if fs not in shift]
    if (
        target == "table1"
    ):  # its ↘/↗ count gives 0 of a small feature set's d: left out (a note says so)
        spec = TARGETS_CONFIG["table1"]["n_features"]
        names = [fs for fs in names if not left_out(spec, fs_n_features(fs))]
    return target_feature_sets(target_set, names)


def multi_fs_sets(target_set, target):
    return target_feature_sets(target_set, TARGETS_CONFIG[target]["feature_sets"])


def target_files(target_set, target):
    """Output files of one target in one target set."""
    base = f"results/{target_set}/{target}"
    if target in PER_FS:
        return [
            f"{base}/{fs}.{e}"
            for fs in per_fs_sets(target_set, target)
            for e in PER_FS[target]
        ]
    if target in MULTI_FS:
        if not multi_fs_sets(target_set, target):
            return []
        return [f"{base}/{target}.{e}" for e in MULTI_FS[target]]
    return [f"{base}/{target}.{e}" for e in TOYS[target]]


def all_target_files(target_set):
    files = []
    for target in [*PER_FS, *MULTI_FS, *TOYS]:
        files += target_files(target_set, target)
    return files


def feature_tables(target_set):
    """The paper ranker's features by name (features.tsv) of every feature set of a target set's curves."""
    return [
        f"{agg(target_set, fs).rsplit('/', 2)[0]}/features.tsv"
        for fs in per_fs_sets(target_set, "figure1")
    ]


def comparison_files(target_set):
    return [f for f in all_target_files(target_set) if f.endswith(".comparison.csv")]


def target_aggregates(target_set):
    """Aggregate folders behind the curve-based targets of a target set."""
    out = []
    for fs in per_fs_sets(target_set, "table1"):
        out += [
            agg(target_set, fs, adapter=a, grid="table1")
            for a in TARGETS_CONFIG["table1"]["adapters"]
        ]
    for fs in per_fs_sets(target_set, "figure1"):
        out.append(agg(target_set, fs))
    for fs in per_fs_sets(target_set, "figure2"):
        out += [
            agg(target_set, fs, adapter=a)
            for a in TARGETS_CONFIG["figure2"]["adapters"]
        ]
    for fs in per_fs_sets(target_set, "table3"):
        out += [
            agg(target_set, fs, adapter=a, grid="table3")
            for a in TARGETS_CONFIG["table3"]["adapters"]
        ]
    for fs in per_fs_sets(target_set, "table5"):
        out += [
            agg(target_set, fs, ranker=r) for r in TARGETS_CONFIG["table5"]["rankers"]
        ]
    for target in MULTI_FS:
        out += [agg(target_set, fs) for fs in multi_fs_sets(target_set, target)]
    return list(dict.fromkeys(out))


# --- output helpers of the table and figure rules -----------------------------
from otfs_workflow.tables import FEATURE_SET_NAMES  # noqa: E402


def fs_section(stem, section):
    """The report's category of an output: the paper's ``section``, but for a per-feature-set output of a
    feature set that is not of the paper's dataset (a user's), a category of that feature set's own.
    """
    if "{feature_set}" not in stem:
        return section

    def category(wildcards):
        fs = wildcards.feature_set
        paper = {
            fs_config(f)["dataset"]
            for f in PAPER_FEATURE_SETS
            if f in config["feature_sets"]
        }
        dataset = fs_config(fs)["dataset"]
        return section if dataset in paper else f"Feature set {fs} (dataset {dataset})"

    return category


def table_outputs(stem, caption, section, subcategory):
    section = fs_section(stem, section)
    return {
        "csv": report(
            f"{stem}.csv", caption=caption, category=section, subcategory=subcategory
        ),
        "tex": f"{stem}.tex",
        "md": f"{stem}.md",
        "comparison": report(
            f"{stem}.comparison.csv",
            caption="../report/comparison.rst",
            category=section,
            subcategory=subcategory,
        ),
    }


def fs_title(feature_set, target_set, extra=""):
    scope = scope_for(target_set, feature_set)
    where = "" if scope == "all" else f", domains {scope.replace('+', ', ')}"
    return f"{FEATURE_SET_NAMES.get(feature_set, feature_set)} (d = {fs_n_features(feature_set)}){where}{extra}"


# What the report's captions say of a feature set and of the run: computed here
# from the configuration (a user's dataset is described as what it is), and given
# to the rules as params, so a caption never reads a key that does not exist.
PAPER_FEATURE_SETS = {
    "surf": "the paper's SURF bag of words (released features)",
    "CaffeNet4096": "the paper's CaffeNet fc7 features (released features; the paper's Tables 1, 3, 5 and Figure 1)",
    "GoogleNet1024": "the paper's GoogleNet features (released features; the paper's Figure 2 and Table 6)",
    "EfficientNetLite0": "not the paper's: extracted here from the 2,533 raw images with an ImageNet-pretrained "
    "EfficientNet-Lite0 (penultimate layer)",
}


def fs_about(feature_set, target_set="available"):
    """One sentence on a feature set for the captions: its name, d, domains, where its features come
    from, its preprocessing, and what the grids leave out for it."""
    fs = fs_config(feature_set)
    scope = scope_for(target_set, feature_set)
    domains = fs_domains(feature_set) if scope == "all" else scope.split("+")
    if feature_set in PAPER_FEATURE_SETS:
        source = PAPER_FEATURE_SETS[feature_set]
    elif is_extracted(feature_set):
        source = (
            f"extracted by {fs['extractor']} from the images of dataset {fs['dataset']}"
        )
    else:
        name, params = reader_spec(fs)
        source = f"read by the {name} reader"
        if name == "tabular":
            files = ", ".join(
                str(params["files"][d]) for d in domains if d in params["files"]
            )
            source += f" from {files}, label column {params.get('label') or 'label'!r}"
            if params.get("missing", "error") != "error":
                source += f", missing values imputed by the {params['missing']} of " + (
                    "the domain"
                    if params.get("impute_from", "domain") == "domain"
                    else "every domain"
                )
    text = (
        f"Feature set **{feature_set}** (dataset {fs['dataset']}; domains {', '.join(domains)}; "
        f"d = {fs_n_features(feature_set)}): {source}; preprocessing "
        f"{', '.join(fs['preprocessing']) or 'none'}."
    )
    notes = count_notes(feature_set)
    return text + (" Left out: " + "; ".join(notes) + "." if notes else "")


def run_caption(feature_sets=None):
    """The run's protocol for the captions (every key read here exists: the schema requires it); the
    per-domain overrides of the source samples are those of ``feature_sets``' domains.
    """
    p, sel, r = config["protocol"], config["sample_selection"], config["ranking"]
    domains = {
        d for fs in (feature_sets or config["feature_sets"]) for d in fs_domains(fs)
    }
    overrides = ", ".join(
        f"{d}: {n}" for d, n in p["source_per_class_overrides"].items() if d in domains
    )
    per_class = (
        "every source sample"
        if p["source_per_class"] == "all"
        else f"{p['source_per_class']} source samples per class"
    )
    return (
        f"{p['iterations']} iterations per pair, {per_class}"
        + (f" ({overrides})" if overrides else "")
        + f", all target samples; Algorithm 1: exact OT sample selection (ties: {sel['tie_break']}, "
        f"iteration limit {sel['emd_max_iter']}); Algorithm 2: entropic OT between the features, reg {r['reg']}, "
        f"cost {r['norm']}, POT method {r['method']!r}; seeds SHA-256(feature set|pair|iteration|purpose). "
        f"Versions: {VERSIONS}."
    )


def curve_outputs(stem, caption, section, subcategory):
    section = fs_section(stem, section)
    return {
        "pdf": f"{stem}.pdf",
        "png": report(
            f"{stem}.png", caption=caption, category=section, subcategory=subcategory
        ),
        "csv": f"{stem}.csv",
    }


def staged_files():
    """Every file `all` reads from outside: each feature set's released files, or the
    images its features are extracted from, for every configured domain."""
    files = []
    for feature_set in config["feature_sets"]:
        require_obtainable(feature_set)
        dataset = fs_config(feature_set)["dataset"]
        for domain in fs_domains(feature_set):
            if is_extracted(feature_set):
                files.append(images_dir(dataset, domain))
            else:
                files += [
                    raw_path(feature_set, r) for r in reader_files(feature_set, domain)
                ]
    return list(dict.fromkeys(files))


def main_target_files(target_set):
    """What `all` (target set paper) or `available` builds, but its data notes."""
    files = [
        *all_target_files(target_set),
        *feature_tables(target_set),
        f"results/{target_set}/comparison/summary.csv",
        f"results/{target_set}/results_long.tsv",
        *[f for files in CLINICAL_TARGETS.values() for f in files],
    ]
    if target_set == "paper":
        files += [f for name in RELATED_EXPERIMENTS for f in getattr(rules, name).input]
    else:  # the data families whose files are present (none without them), and their verdict
        files += shift_available_targets()
    return files
