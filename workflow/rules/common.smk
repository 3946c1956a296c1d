# Shared set-up: the library on the path, config validation, helpers.
import sys
from pathlib import Path

REPO = Path(workflow.basedir)
SRC = REPO / "src"
# The pipeline always runs the library of this checkout (the scripts do the same).
sys.path.insert(0, str(SRC))

from otfs.config import pairs_for, validate_config  # noqa: E402
from otfs.protocol import feature_counts, parse_pair, source_per_class  # noqa: E402

validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")

# Paths of repository files named in the config are relative to the repository.
for _ds in config["datasets"].values():
    _ds["manifest"] = str(REPO / _ds["manifest"])

# Results are reproducible only with pinned seeds: no wildcard may contain '/'.
wildcard_constraints:
    feature_set=r"[A-Za-z0-9_]+",
    dataset=r"[A-Za-z0-9_-]+",
    domain=r"[A-Za-z0-9_]+",
    pair=r"[A-Za-z0-9_]+-[A-Za-z0-9_]+",
    selection=r"ot|1nn|random",
    adapter=r"[A-Za-z0-9_]+",


def lib(*modules):
    """Library source files a rule depends on (Snakemake does not track imports)."""
    base = ["__init__.py", "_checks.py", "io.py", "stages/__init__.py"]
    return sorted({str(SRC / "otfs" / m) for m in (*base, *modules)})


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


def raw_file(feature_set, domain):
    """The acquired raw file of one domain of a feature set."""
    fs = fs_config(feature_set)
    return f"data/raw/{fs['dataset']}/{fs['folder']}/{domain}.mat"


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


ITERATIONS = list(range(config["protocol"]["iterations"]))
SELECTION = config["selection"]["strategy"]


def figure7_tables():
    """Long tables behind the Figure 7 target."""
    fig7 = config["targets"]["figure7"]
    return [
        f"results/tables/{fs}/{SELECTION}/{fig7['adapter']}/long.tsv"
        for fs in fig7["feature_sets"]
    ]
