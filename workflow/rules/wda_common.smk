# The wda experiment's configuration handle and input functions (its rules: wda.smk).

WDA_CONFIG = config["wda"]
WDA_EVAL_KEYS = (
    "methods",
    "splits",
    "cv_folds",
    "p_grid",
    "k_grid",
    "noise_features",
    "train_fraction",
    "max_train",
    "max_test",
    "overrides",
)


def uci_raw(w):
    """Raw files of one UCI data set (none for those scikit-learn ships)."""
    return [f"data/uci/raw/{p}" for p in raw_files(w.dataset)]


def wda_eval_cfg(extra=()):
    """The part of config `wda` a job depends on (editing another key reruns nothing)."""
    return {k: WDA_CONFIG[k] for k in (*WDA_EVAL_KEYS, *extra)}


def wda_ablation_cfg(w):
    """An ablation job's part of config `wda`: Table 1's protocol keys and its own variant only."""
    ab = WDA_CONFIG["ablation"]
    return {
        **wda_eval_cfg(),
        "ablation": {
            "splits": ab["splits"],
            "variants": {w.variant: ab["variants"][w.variant]},
        },
    }


def wda_ablation_datasets():
    """Each variant's data sets: those of `wda.ablation.datasets`, or the part of them its own `datasets`
    names. A smaller configuration thus narrows every variant with `ablation.datasets` alone, whatever
    variants it inherits from config.yaml (Snakemake merges a --configfile into the defaults, key by key).
    A variant left with none is left out, with a note.
    """
    ab = WDA_CONFIG["ablation"]
    runs, notes = {}, []
    for v, spec in ab["variants"].items():
        own = spec.get("datasets")
        runs[v] = [d for d in (own or ab["datasets"]) if d in ab["datasets"]]
        if not runs[v]:
            notes.append(
                f"wda.ablation.variants.{v}: its datasets {own} are not among wda.ablation.datasets "
                f"{ab['datasets']}: left out"
            )
    return runs, notes


WDA_ABLATION_DATASETS, _WDA_ABLATION_NOTES = wda_ablation_datasets()
print_notes(_WDA_ABLATION_NOTES)


def wda_ablation_runs(w=None):
    """(data set, variant) runs of the WDA ablation (wda_ablation_datasets)."""
    return [
        f"results/wda/ablation/runs/{d}/{v}.tsv"
        for v, datasets in WDA_ABLATION_DATASETS.items()
        for d in datasets
    ]


def wda_ablation_table1_runs(w=None):
    """Table 1's WDA runs of the ablation's data sets (their first splits are shown beside the variants)."""
    if "WDA" not in WDA_CONFIG["methods"]:
        return []
    return [
        f"results/wda/runs/{d}/WDA.tsv"
        for d in WDA_CONFIG["ablation"]["datasets"]
        if d in WDA_CONFIG["datasets"]
    ]


WDA_OFFICE_FS = WDA_CONFIG["office"]["feature_set"]


def wda_office_inputs(w):
    return [
        f"results/runs/{WDA_OFFICE_FS}/classification/{MAIN_RANKER}/{a}/{WDA_CONFIG['office']['grid']}/{p}.tsv"
        for a in WDA_CONFIG["office"]["adapters"]
        for p in fs_pairs(WDA_OFFICE_FS)
    ]
