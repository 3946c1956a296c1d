# The paper's tables and figures, and what each needs. Two target sets:
#   results/paper/...      every configured domain (`all`, and the named rules)
#   results/available/...  the domains whose files are present (`available`)

TARGETS_CONFIG = config["targets"]
# What each target reads and builds (otfs_workflow.plan.Plan, tested in tests/test_plan.py).
shift_family_feature_sets = P.shift_family_feature_sets
ranking_iterations, batched_pairs = P.ranking_iterations, P.batched_pairs
batched_feature_sets, pair_batched_rankings = (
    P.batched_feature_sets,
    P.pair_batched_rankings,
)
model_selection_rankers = P.model_selection_rankers
per_fs_sets, multi_fs_sets, target_files = (
    P.per_fs_sets,
    P.multi_fs_sets,
    P.target_files,
)
all_target_files, target_aggregates = P.all_target_files, P.target_aggregates


def feature_tables(target_set):
    """The paper ranker's features by name (features.tsv) of every feature set of a target set's curves."""
    return [
        f"{agg(target_set, fs).rsplit('/', 2)[0]}/features.tsv"
        for fs in per_fs_sets(target_set, "figure1")
    ]


def comparison_files(target_set):
    return [f for f in all_target_files(target_set) if f.endswith(".comparison.csv")]


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
