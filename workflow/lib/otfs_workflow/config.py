"""Loading and validating the pipeline configuration.

The configuration is checked against a JSON schema
(``workflow/schemas/config.schema.yaml``) that forbids unknown keys, then
against cross-references the schema cannot express (a feature set naming an
unknown dataset, a pair between unknown domains). Every error names the
offending key by its full path, and suggests the closest valid key for a
misspelling.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from otfs_workflow.data.acquisition import mirror_dirs  # noqa: F401  (its home: jobs import it without the registries)
from otfs_workflow.protocol import make_pairs, parse_pair

if TYPE_CHECKING:
    import jsonschema

__all__ = ["ConfigError", "experiment_schemas",
           "MAX_CONFIG_VALUES", "check_config_size", "check_feature_counts", "load_yaml", "mirror_dirs",
           "pairs_for", "references", "validate_config"]


class ConfigError(ValueError):
    """The configuration is invalid."""


#: The most values a configuration may hold once its YAML aliases are expanded: far above any real one
#: (config.yaml: about 1,000), far below what makes checking it slow (an "alias bomb": nine aliases, each
#: repeating the previous one nine times, expand to 387 million values from 10 lines).
MAX_CONFIG_VALUES = 1_000_000


def load_yaml(path: str | os.PathLike):
    """Read a YAML file strictly: a syntax error names the file, the line and the column; a key given twice
    in one mapping is an error naming it; so is a file whose aliases expand to more than
    :data:`MAX_CONFIG_VALUES` values (checked without expanding them)."""
    from otfs_workflow import _yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = _yaml.load(fh)
    except yaml.YAMLError as exc:
        line, column, problem = _yaml.describe(exc)
        where = f"{path}, line {line}, column {column}" if line is not None else str(path)
        raise ConfigError(f"{where}: invalid YAML: {problem}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file in UTF-8 ({exc})") from exc
    check_config_size(data, str(path))
    return data


def check_config_size(config, source: str = "config", limit: int = MAX_CONFIG_VALUES) -> None:
    """Refuse a configuration that holds more than ``limit`` values once its shared parts (YAML aliases) are
    counted every time they appear, naming the key where it grows; counted once per distinct object, so an
    alias bomb is refused in microseconds and without expanding it."""
    sizes: dict[int, int] = {}

    def size(obj) -> int:
        key = id(obj)
        if key in sizes:
            return sizes[key]
        sizes[key] = 1  # a cycle (not from YAML's safe loader) counts once
        if isinstance(obj, Mapping):
            n = 1 + sum(size(v) for v in obj.values())
        elif isinstance(obj, (list, tuple)):
            n = 1 + sum(size(v) for v in obj)
        else:
            n = 1
        sizes[key] = n
        return n

    total = size(config)
    if total <= limit:
        return
    path, node = [], config
    while True:  # follow the largest child down to where one value repeats what lies below it
        children = list(node.items()) if isinstance(node, Mapping) else \
            list(enumerate(node)) if isinstance(node, (list, tuple)) else []
        big = [(k, v) for k, v in children if size(v) > limit]
        if not big:
            break
        k, node = big[0]
        path.append(str(k))
    raise ConfigError(f"{source}: {'.'.join(path) or '<top level>'}: the configuration expands to {total:,} values "
                      f"(more than {limit:,}): YAML aliases that repeat aliases (an \"alias bomb\"); write the values "
                      "out")


def _key_path(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _yaml_hint(value) -> str:
    """Why a name is a boolean: YAML 1.1 (PyYAML's) reads unquoted yes, no, on, off, true and false as ones."""
    if isinstance(value, bool):
        return (" (YAML reads an unquoted yes, no, on, off, true or false, in any of the forms NO, No, no, as a "
                f"boolean, here {value}: quote the name, e.g. \"NO\")")
    return ""


def key_problems(value, source: str = "config", where: tuple = ()) -> list[str]:
    """A line for every mapping key of ``value`` (nested) that is not a string, naming its path: the
    configuration's keys are names, and a key YAML read as a boolean or a number cannot be one."""
    problems = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                path = _key_path(where) if where else "the top level"
                problems.append(f"{source}: {path}: the key {key!r} is not a name{_yaml_hint(key)}")
            problems += key_problems(item, source, (*where, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            problems += key_problems(item, source, (*where, i))
    return problems


def _describe(error: jsonschema.ValidationError, source: str) -> str:
    where = _key_path(error.absolute_path)
    if error.validator == "type" and isinstance(error.instance, bool) and "string" in str(error.validator_value):
        return f"{source}: {where}: {error.message}{_yaml_hint(error.instance)}"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        msgs = []
        for key in extra:
            full = f"{where}.{key}" if error.absolute_path else key
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            msgs.append(f"{source}: unknown key {full!r}{hint}; allowed here: {allowed}")
        return "\n".join(msgs)
    if error.validator == "required":
        return f"{source}: {where}: {error.message}"
    if error.validator in ("anyOf", "oneOf") and "description" in error.schema:
        return f"{source}: {where}: {error.instance!r} is not valid: {error.schema['description']}"
    if error.validator == "pattern" and "description" in error.schema:
        return f"{source}: {where}: {error.instance!r} is not a valid name: {error.schema['description']}"
    return f"{source}: {where}: {error.message}"


def experiment_schemas(folder: str | os.PathLike) -> dict[str, Path]:
    """``{section: schema file}`` of every ``<section>.schema.yaml`` in ``folder``: an experiment's own
    configuration section, found by being there, which is optional (its defaults fill what is left out)."""
    return {p.name.removesuffix(".schema.yaml"): p for p in sorted(Path(folder).glob("*.schema.yaml"))}


#: Sections whose name changed, by their old name: a configuration that still uses one is an error naming the new.
RENAMED_SECTIONS = {"selection": "sample_selection"}


def _snakemake_validate(config: dict, schema_path: Path, sections: Mapping[str, Path], source: str) -> str | None:
    """Snakemake's ``validate`` of ``config`` against the schema and of each experiment's section against its own,
    filling their defaults in place (a section left out becomes one of its defaults); None where all is valid,
    else what Snakemake said ("" for a section that is not a mapping, which ``validate`` would not check)."""
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    for section in sections:
        if config.get(section) is None:
            config[section] = {}
    main = {key: value for key, value in config.items() if key not in sections}
    try:
        validate(main, str(schema_path), set_default=True)
        for section, path in sections.items():
            if not isinstance(config[section], dict):
                return ""
            validate(config[section], str(path), set_default=True)
    except WorkflowError as exc:
        return f"{source}: {exc}"
    finally:
        config.update(main)  # the main schema's defaults of the top level
    return None


def validate_config(config: dict, schema_path: str | os.PathLike, source: str = "config") -> None:
    """Validate ``config`` against the schema, filling its defaults, and against cross-references.

    The schema check is Snakemake's own (:func:`snakemake.utils.validate`),
    which fills the schema's ``default`` of every key left out, in place. An
    experiment's section, declared by ``experiments/<section>.schema.yaml``
    beside the schema, is optional and checked against that file, its defaults
    filled the same way. Where a check fails, every error is named with its key
    path, the closest valid key of a misspelling and why YAML read a name as a
    boolean. Then the cross-references the schema cannot express.

    Raises
    ------
    ConfigError
        With one line per problem, each naming its key.
    """
    renamed = [f"{source}: {old}: renamed {new} (one name per kind: the folder otfs.{new}, the config key, the "
               f"docs); move its keys there" for old, new in RENAMED_SECTIONS.items() if old in config]
    if renamed:
        raise ConfigError("invalid configuration:\n" + "\n".join(renamed))
    schema_path = Path(schema_path)
    sections = experiment_schemas(schema_path.parent / "experiments")
    schema = load_yaml(schema_path)
    clash = sorted(set(sections) & set(schema.get("properties", {})))
    if clash:
        raise ConfigError(f"{schema_path}: the sections {clash} are also declared by an experiment's schema")
    keys = key_problems(config, source)
    failure = "" if keys else _snakemake_validate(config, schema_path, sections, source)
    if failure is not None:  # every error, each named
        import jsonschema  # here: a parse whose configuration was checked before imports none of it

        schema = {**schema, "properties": {**schema.get("properties", {}),
                                           **{s: load_yaml(p) for s, p in sections.items()}}}
        try:
            errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(config),
                            key=lambda e: list(map(str, e.absolute_path)))
        except TypeError:  # a key that is not a string, which `keys` names
            errors = []
        lines = [*keys, *(_describe(e, source) for e in errors)]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines or [failure]))

    problems = [f"{source}: {p}" for p in registry_problems(config, schema)]
    datasets = config["datasets"]
    for name, fs in config["feature_sets"].items():
        if fs["dataset"] not in datasets:
            problems.append(
                f"{source}: feature_sets.{name}.dataset: unknown dataset {fs['dataset']!r} "
                f"(known: {sorted(datasets)})"
            )
        problems += _feature_set_source(name, fs, datasets, source)
    table1 = config["targets"]["table1"]["n_features"]
    grid = [str(c) for c in config["grids"]["table1"]["feature_counts"]]
    for needed in (str(table1), "d"):
        if needed not in grid:
            problems.append(
                f"{source}: grids.table1.feature_counts: {grid} lacks {needed!r}, which "
                "targets.table1 shows"
            )
    for target, spec in config["targets"].items():
        named = list(spec.get("feature_sets", []))
        per_fs = spec.get("n_features")
        if isinstance(per_fs, dict):
            named += list(per_fs)
            for fs in spec.get("feature_sets", []):
                if fs not in per_fs:
                    problems.append(
                        f"{source}: targets.{target}.n_features: no entry for feature set {fs!r}"
                    )
        for fs in named:
            if fs not in config["feature_sets"]:
                problems.append(
                    f"{source}: targets.{target}.feature_sets: unknown feature set {fs!r} "
                    f"(known: {sorted(config['feature_sets'])})"
                )
    pairs = config["protocol"]["pairs"]
    if pairs != "all":
        for pair in pairs:
            try:
                s, t = parse_pair(pair)
            except ValueError as exc:
                problems.append(f"{source}: protocol.pairs: {exc}")
                continue
            if s == t or not any(s in ds["domains"] and t in ds["domains"] for ds in datasets.values()):
                problems.append(
                    f"{source}: protocol.pairs: {pair!r} is not a pair of distinct domains of one dataset ("
                    + "; ".join(f"{name}: {ds['domains']}" for name, ds in datasets.items()) + ")"
                )
    problems += _boosting_problems(config, source)
    problems += _section_problems(config, "semfs", source)
    problems += _section_problems(config, "invariance", source, pairs=False)
    problems += _feature_set_paths(config, source)
    known_domains = {d for ds in datasets.values() for d in ds["domains"]}
    for domain in config["protocol"]["source_per_class_overrides"]:
        if domain not in known_domains:
            close = difflib.get_close_matches(domain, sorted(known_domains), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{source}: protocol.source_per_class_overrides: {domain!r} is not a domain of any "
                            f"dataset{hint}; domains: {sorted(known_domains)}")
    grid = config["wda"]["office"]["grid"]
    if grid not in config["grids"]:
        problems.append(f"{source}: wda.office.grid: unknown grid {grid!r}; grids: {sorted(config['grids'])}")
    if config["wda"]["office"]["feature_set"] not in config["feature_sets"]:
        problems.append(f"{source}: wda.office.feature_set: unknown feature set "
                        f"{config['wda']['office']['feature_set']!r} (known: {sorted(config['feature_sets'])})")
    problems += _reducer_problems(config["wda"], source)
    problems += _adapter_problems(config.get("adapters", {}), source)
    problems += _ranker_problems(config.get("rankers", {}), source)
    if "leaderboard" in config:
        problems += _leaderboard_problems(config, source)
    if "model_selection" in config:
        problems += _model_selection_problems(config, source)
    if "recommend" in config:  # an experiment's section: there, its defaults filled, where its schema is
        problems += _recommend_problems(config, source)
    problems += _grid_metric_problems(config["grids"], source)
    from otfs.adapters import ADAPTERS

    for name, fs in config["feature_sets"].items():
        for adapter in fs.get("inapplicable_adapters") or {}:
            if adapter not in ADAPTERS:
                problems.append(f"{source}: feature_sets.{name}.inapplicable_adapters: {ADAPTERS.unknown_message(adapter)}")
    if "shift" in config:  # an experiment's section: there, its defaults filled, where its schema is
        shift = config["shift"]
        for family, names in shift["families"].items():
            problems += [f"{source}: shift.families.{family}[{i}]: unknown feature set {name!r}; configured: "
                         f"{sorted(config['feature_sets'])}" for i, name in enumerate(names)
                         if name not in config["feature_sets"]]
        problems += [f"{source}: shift.rankers_per_job.{name}: unknown feature set; configured: "
                     f"{sorted(config['feature_sets'])}" for name in shift["rankers_per_job"]
                     if name not in config["feature_sets"]]
        if shift["grid"] not in config["grids"]:
            problems.append(f"{source}: shift.grid: unknown grid {shift['grid']!r}; grids: {sorted(config['grids'])}")
        for family, cfg in shift["regression"].items():
            if cfg["dataset"] not in datasets:
                problems.append(f"{source}: shift.regression.{family}.dataset: unknown dataset {cfg['dataset']!r}; "
                                f"configured: {sorted(datasets)}")
            if family in shift["families"]:
                problems.append(f"{source}: shift.regression.{family}: also a classification family (shift.families)")
    if "shift_recovery" in config:
        from otfs.datasets import get_reader

        try:
            get_reader("planted-shifts", config["shift_recovery"]["data"])
        except (TypeError, ValueError) as exc:
            problems.append(f"{source}: shift_recovery.data: {exc}")
    if problems:
        raise ConfigError("invalid configuration:\n" + "\n".join(problems))


def _grid_metric_problems(grids: Mapping, source: str) -> list[str]:
    """A grid's second classifier is a registered classifier with valid parameters and probabilities (AUC)."""
    from otfs.classification import make_classifier

    problems = []
    for name, grid in grids.items():
        spec = (grid.get("metrics") or {}).get("second_classifier")
        if spec is None:
            continue
        try:
            if not hasattr(make_classifier(spec), "predict_proba"):
                problems.append(f"{source}: grids.{name}.metrics.second_classifier: {spec!r} has no predict_proba "
                                "(the AUC needs one)")
        except (TypeError, ValueError, KeyError) as exc:
            problems.append(f"{source}: grids.{name}.metrics.second_classifier: {exc}")
    return problems


def _param_problems(where: str, build, params: Mapping, source: str) -> list[str]:
    """Build an estimator from ``params`` and validate them (scikit-learn's ``_validate_params``): an unknown
    keyword or an out-of-range value is one problem naming ``where``."""
    try:
        build(**params)._validate_params()
    except (TypeError, ValueError) as exc:
        return [f"{source}: {where}: {exc}"]
    return []


def _adapter_problems(adapters: Mapping, source: str) -> list[str]:
    """Each set of `adapters` hyper-parameters, checked by building the adapter and validating them."""
    from otfs.adapters import ADAPTERS

    problems = []
    for name, params in adapters.items():
        try:
            known = name in ADAPTERS
        except ImportError as exc:  # a skada: name without skada
            problems.append(f"{source}: adapters.{name}: {exc}")
            continue
        if not known:
            problems.append(f"{source}: adapters.{name}: {ADAPTERS.unknown_message(name)}")
        else:
            problems += _param_problems(f"adapters.{name}", ADAPTERS[name], params or {}, source)
    return problems


def _recommend_problems(config: Mapping, source: str) -> list[str]:
    """`recommend`: its feature sets exist; its rankers are registered and include the evaluation's two fixed
    rankers; its adapter is registered; its policy is "learned", "rank-average" or a scorer rule."""
    from otfs.k_selection import SELECTION_RULES
    from otfs.rankers import FEATURE_RANKERS

    cfg, where = config["recommend"], f"{source}: recommend"
    problems = [f"{where}.feature_sets: unknown feature set {fs!r} (known: {sorted(config['feature_sets'])})"
                for fs in cfg.get("feature_sets") or [] if fs not in config["feature_sets"]]
    rankers = cfg.get("rankers") or config.get("model_selection", {}).get("rankers", [])
    problems += [f"{where}.rankers: {FEATURE_RANKERS.unknown_message(r)}" for r in rankers if r not in FEATURE_RANKERS]
    for key, default in (("reference", "ot"), ("relevance", "source-anova")):  # the schema's defaults
        name = (cfg.get("evaluation") or {}).get(key, default)
        if name not in rankers:
            problems.append(f"{where}.evaluation.{key}: {name!r} is not among the candidate rankers {list(rankers)} "
                            "(recommend.rankers, or model_selection.rankers)")
    policy = cfg.get("policy", "learned")
    if policy == "learned" and not any(r not in FEATURE_RANKERS for r in rankers):
        import warnings

        from otfs.k_selection._label_free import describe_policy, learned_policy, policy_rankers

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an adapter without a learned policy: the default adapter's, warned later
            shipped, _ = learned_policy(cfg.get("adapter", "NA"))
        missing = sorted(policy_rankers(shipped) - set(rankers))
        if missing:
            problems.append(f"{where}.rankers: the shipped policy ({describe_policy(shipped)}) reads the ranker(s) "
                            f"{missing}, which are not among the candidate rankers {list(rankers)}; add them, or set "
                            "recommend.policy (\"circular\", another scorer's name, or \"rank-average\")")
    if policy not in ("learned", "rank-average") and (policy not in SELECTION_RULES
                                                      or SELECTION_RULES[policy].kind != "scorer"):
        problems.append(f"{where}.policy: \"learned\", \"rank-average\" or a scorer rule "
                        f"({sorted(n for n in SELECTION_RULES if SELECTION_RULES[n].kind == 'scorer')}); got {policy!r}")
    from otfs.adapters import ADAPTERS

    if cfg.get("adapter", "NA") not in ADAPTERS:
        problems.append(f"{where}.adapter: {ADAPTERS.unknown_message(cfg['adapter'])}")
    return problems


def _model_selection_problems(config: Mapping, source: str) -> list[str]:
    """`model_selection`: its feature sets and grid exist, the grid has the Descending order and d; its rules
    are registered, with valid parameters, and include the references; its classifier is probabilistic; its
    adapters give adapted samples."""
    from otfs.classification import make_classifier
    from otfs.k_selection import SELECTION_RULES

    cfg, where = config["model_selection"], f"{source}: model_selection"
    problems = [f"{where}.feature_sets: unknown feature set {fs!r} (known: {sorted(config['feature_sets'])})"
                for fs in cfg["feature_sets"] if fs not in config["feature_sets"]]
    problems += [f"{where}.pairs_per_job.{fs}: unknown feature set; configured: {sorted(config['feature_sets'])}"
                 for fs in cfg.get("pairs_per_job") or {} if fs not in config["feature_sets"]]
    grid = config["grids"].get(cfg["grid"])
    if grid is None:
        problems.append(f"{where}.grid: unknown grid {cfg['grid']!r}; grids: {sorted(config['grids'])}")
    elif "Descending" not in grid["orders"] or grid["feature_counts"] == "paper" or "d" not in grid["feature_counts"]:
        problems.append(f"{where}.grid: grids.{cfg['grid']} needs the Descending order and \"d\" among its feature "
                        f"counts (the rules are compared with all features); it has {grid['orders']}, "
                        f"{grid['feature_counts']}")
    for name, params in cfg["rules"].items():
        if name not in SELECTION_RULES:
            problems.append(f"{where}.rules.{name}: {SELECTION_RULES.unknown_message(name)}")
        else:
            problems += _param_problems(f"model_selection.rules.{name}", SELECTION_RULES[name], params or {}, source)
    for ref in ("oracle", "all-features"):
        if ref not in cfg["rules"]:
            problems.append(f"{where}.rules: the reference {ref!r} is missing (regret and gain are measured against it)")
    try:
        clf = make_classifier(cfg["classifier"])
        if not hasattr(clf, "predict_proba"):
            problems.append(f"{where}.classifier: {cfg['classifier']!r} has no predict_proba; the scorers need one")
    except (TypeError, ValueError, KeyError) as exc:
        problems.append(f"{where}.classifier: {exc}")
    from otfs.adapters import ADAPTERS

    for name in cfg["adapters"]:
        try:
            adapter = ADAPTERS[name](**dict(config.get("adapters", {}).get(name) or {}))
            if getattr(adapter, "predicts_labels", False):
                problems.append(f"{where}.adapters: {name!r} predicts labels without adapted samples; the scorers "
                                "need an adapter with adapted samples")
        except (KeyError, TypeError, ValueError, ImportError):
            pass  # reported by the registry check and `adapters`
    return problems


def references(value) -> list[str]:
    """`leaderboard.reference` as a list: one ranker's name, or several."""
    return [value] if isinstance(value, str) else list(value)


def _leaderboard_problems(config: Mapping, source: str) -> list[str]:
    """The leaderboard's grid exists, has the Descending order and at least two feature counts, among them
    the fixed fraction; its feature sets exist; its reference is one of its rankers."""
    cfg = config["leaderboard"]
    problems = [f"{source}: leaderboard.feature_sets: unknown feature set {fs!r} (known: "
                f"{sorted(config['feature_sets'])})" for fs in cfg["feature_sets"] if fs not in config["feature_sets"]]
    for reference in references(cfg["reference"]):
        if reference not in cfg["rankers"]:
            problems.append(f"{source}: leaderboard.reference: {reference!r} is not one of leaderboard.rankers "
                            f"{cfg['rankers']}")
    grid = config["grids"].get(cfg["grid"])
    if grid is None:
        return problems + [f"{source}: leaderboard.grid: unknown grid {cfg['grid']!r}; grids: {sorted(config['grids'])}"]
    counts = grid["feature_counts"]
    if "Descending" not in grid["orders"]:
        problems.append(f"{source}: grids.{cfg['grid']}.orders: the leaderboard needs the Descending order")
    if counts == "paper" or len(counts) < 2 or cfg["fraction"] not in counts:
        problems.append(f"{source}: leaderboard.fraction: {cfg['fraction']!r} must be one of the feature counts "
                        f"of grids.{cfg['grid']} (a list of at least two: {counts})")
    return problems


def _ranker_problems(rankers: Mapping, source: str) -> list[str]:
    """Each set of `rankers` hyper-parameters, checked by building the ranker and validating them. The OT
    rankers take Algorithm 1's and 2's settings from the sections `sample_selection` and `ranking`, never from here."""
    from otfs.rankers import FEATURE_RANKERS, OTFeatureRanker

    problems = []
    for name, params in rankers.items():
        if name not in FEATURE_RANKERS:
            problems.append(f"{source}: rankers.{name}: {FEATURE_RANKERS.unknown_message(name)}")
            continue
        if isinstance(FEATURE_RANKERS[name](), OTFeatureRanker):
            if params:
                problems.append(f"{source}: rankers.{name}: the OT rankers take their settings from the "
                                f"sections `sample_selection` (Algorithm 1) and `ranking` (Algorithm 2); got {sorted(params)}")
            continue
        problems += _param_problems(f"rankers.{name}", FEATURE_RANKERS[name], params or {}, source)
    return problems


def _reducer_problems(cfg: Mapping, source: str) -> list[str]:
    """Every parameter set of `wda.methods` and `wda.ablation.variants`, each of its candidates merged over
    the fixed parameters as the experiment does (otfs.reducers._base), checked by building the estimator and
    validating its parameters, so a typo stops the run before any job."""
    from functools import partial

    from otfs.reducers._base import REDUCERS, split_candidates

    sets = [(f"wda.methods.{m}", m, p) for m, p in cfg["methods"].items()]
    sets += [(f"wda.ablation.variants.{name}.params", spec.get("method", "WDA"), spec.get("params"))
             for name, spec in cfg.get("ablation", {}).get("variants", {}).items()]
    problems = []
    for where, method, params in sets:
        try:
            fixed, candidates = split_candidates(params)
        except ValueError as exc:
            problems.append(f"{source}: {where}.candidates: {exc}")
            continue
        build = partial(REDUCERS[method], 1, 2, 0)
        for i, cand in enumerate(candidates):
            at = where + (f".candidates[{i}]" if cand else "")
            problems += _param_problems(at, build, {**fixed, **cand}, source)
    return problems


def _registered_names(value, schema: Mapping, root: Mapping, path: str):
    """``(key path, name, registry group)`` of every config value whose schema names a registry (``registry:``)."""
    while "$ref" in schema:  # local references (#/$defs/<name>); an experiment's section names no registry
        if not schema["$ref"].startswith("#/"):
            return
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    if "registry" in schema and isinstance(value, str):
        yield path, value, schema["registry"]
    for branch in schema.get("oneOf", []):  # a name or a list of names: the branch of the value's type yields
        yield from _registered_names(value, branch, root, path)
    if isinstance(value, Mapping):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            sub_schema = props.get(key, extra if isinstance(extra, Mapping) else None)
            if sub_schema is not None:
                yield from _registered_names(sub, sub_schema, root, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, sub in enumerate(value):
            yield from _registered_names(sub, schema["items"], root, f"{path}[{i}]")


def registry_problems(config: Mapping, schema: Mapping) -> list[str]:
    """Names in ``config`` that the schema ties to a registry (``registry: otfs.adapters``) but nothing
    is registered under, plug-ins (folders, entry points) included: one message each, naming its key."""
    from otfs.registry import get_registry

    problems = []
    for path, name, group in _registered_names(config, schema, schema, ""):
        registry = get_registry(group)
        if name not in registry:
            problems.append(f"{path}: {registry.unknown_message(name)}")
    return problems


def _section_problems(config: Mapping, section: str, source: str, pairs: bool = True) -> list[str]:
    """Cross-references of a related-method section: its feature set and its pairs of that set's domains."""
    cfg = config[section]
    fs = cfg["feature_set"]
    if fs not in config["feature_sets"]:
        return [f"{source}: {section}.feature_set: unknown feature set {fs!r} (known: {sorted(config['feature_sets'])})"]
    dataset = config["datasets"].get(config["feature_sets"][fs]["dataset"])
    if dataset is None:  # reported with the feature set
        return []
    domains = dataset["domains"]
    problems = []
    for pair in cfg["pairs"] if pairs else ():
        s, t = parse_pair(pair)
        if s == t or s not in domains or t not in domains:
            problems.append(f"{source}: {section}.pairs: {pair!r} is not a pair of distinct domains ({domains})")
    return problems


def _boosting_problems(config: Mapping, source: str) -> list[str]:
    """Cross-references of config `boosting`: those of every section, and unique task names."""
    cfg = config["boosting"]
    problems = _section_problems(config, "boosting", source)
    names = [task["name"] for task in cfg["tasks"]]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{source}: boosting.tasks: the name {name!r} is used twice")
    return problems


#: What a dataset whose files are read must say about where they come from.
SOURCE_SETTINGS = ("manifest", "local_dir", "mirror_dirs", "download")


def _reader_problems(where: str, fs: Mapping, dataset: Mapping | None) -> list[str]:
    from otfs.datasets import DATASET_READERS, reader_spec

    name, params = reader_spec(fs)
    key = "reader" if "reader" in fs else "folder"
    if name not in DATASET_READERS:
        return []  # the schema's registry check names it
    try:
        reader = DATASET_READERS[name](**params)
        reads_files = dataset is not None and any(reader.files(d) for d in fs.get("domains") or dataset["domains"])
    except (TypeError, ValueError) as exc:
        return [f"{where}.{key}: {exc}"]
    problem = getattr(reader, "problem", "classification")
    if problem != "classification":
        return [f"{where}.{key}: the {name} reader reads a {problem} problem; the benchmark's grid needs class labels "
                "(docs/data-families.md)"]
    missing = [k for k in SOURCE_SETTINGS if reads_files and k not in dataset]
    if missing:
        return [f"{where}: its reader {name!r} reads files, so datasets.{fs['dataset']} needs {missing} "
                "(where the files and their hashes come from)"]
    return []


def _feature_set_source(name: str, fs: Mapping, datasets: Mapping, source: str) -> list[str]:
    """A feature set has a ``reader`` of its dataset's files (``folder``: the released .mat files) or an
    ``extractor``, one only; the reader's parameters are checked by building it, and a dataset whose files
    are read needs the settings that say where they come from."""
    where = f"{source}: feature_sets.{name}"
    has = [k for k in ("reader", "folder", "extractor") if k in fs]
    if len(has) != 1:
        return [f"{where}: give exactly one of 'reader' (a dataset reader and its parameters), 'folder' (the "
                f"released .mat files) and 'extractor' (features extracted from images); got {has or 'neither'}"]
    if "extractor" not in fs:
        return _reader_problems(where, fs, datasets.get(fs["dataset"]))
    from otfs.extractors._base import EXTRACTORS  # imports no deep-learning package

    problems = []
    if "max_samples" in fs:
        problems.append(f"{where}.max_samples: applies to a reader's feature sets only, not to extracted features")
    if fs["extractor"] not in EXTRACTORS:
        problems.append(f"{where}.extractor: {EXTRACTORS.unknown_message(fs['extractor'])}")
    ds = datasets.get(fs["dataset"])
    if ds is not None and not ds.get("image_manifest"):
        problems.append(f"{where}.extractor: dataset {fs['dataset']!r} has no image_manifest "
                        f"(set datasets.{fs['dataset']}.image_manifest)")
    return problems


def _inside(path: str) -> bool:
    """Whether a relative path stays inside its base folder (no absolute path, no '..')."""
    parts = Path(path).parts
    return bool(parts) and not Path(path).is_absolute() and ".." not in parts and "\\" not in path


def _feature_set_paths(config: Mapping, source: str) -> list[str]:
    """Paths that must stay inside their base folder: a feature set's ``folder`` (inside its dataset's
    folders) and the manifests and attribute table the workflow ships (inside the repository).

    The data folders themselves (``local_dir``, ``mirror_dirs``) and a user's voxel table may lie anywhere.
    """
    problems = []  # a feature set's folder: checked by its reader (otfs.datasets.mat)
    repo_paths = {f"datasets.{name}.{key}": ds[key] for name, ds in config["datasets"].items()
                  for key in ("manifest", "image_manifest") if ds.get(key)}
    repo_paths["wda.data.manifest"] = config["wda"]["data"]["manifest"]
    repo_paths["semfs.attributes"] = config["semfs"]["attributes"]
    problems += [f"{source}: {key}: {path!r} must be a relative path inside the repository (no '..', not "
                 "absolute); put the file under data/" for key, path in repo_paths.items() if not _inside(path)]
    return problems


def check_feature_counts(config: Mapping, n_features, source: str = "config") -> list[str]:
    """Every number of features the configuration asks for is within ``[1, d]`` of its feature set.

    Checked before any job runs: a count above ``d`` is an error naming the
    config key, the feature set and its ``d``. A fraction ``"d/k"`` that
    gives 0 (a feature set with few features, e.g. a user's table of 11
    columns and ``"d/32"``) is left out of that feature set's grids and
    tables instead, with a note; so is the paper's ``d/32`` of
    ``feature_counts: paper``, whose step becomes 1 below 32 features
    (:func:`otfs_workflow.protocol.feature_counts`). A list whose every count is left
    out, and a single count that must exist (the leaderboard's fraction,
    boosting's features, Table 6's), are errors. ``n_features(feature_set)``
    gives ``d`` without reading data (the manifest or the extractor); it may
    raise ``KeyError`` for a feature set it cannot size, which is then
    skipped.

    Returns
    -------
    list of str
        The notes: what is left out, for which feature set.

    Raises
    ------
    ConfigError
    """
    from otfs_workflow.protocol import left_out, resolve_count

    sizes = {}
    for fs in config["feature_sets"]:
        try:
            sizes[fs] = int(n_features(fs))
        except KeyError:
            continue
    problems, notes = [], []

    def check(key: str, spec, feature_sets, may_leave_out: bool = True) -> bool:
        """False where ``spec`` is left out for every one of ``feature_sets``."""
        kept = False
        for fs in feature_sets:
            if fs not in sizes:
                kept = True
                continue
            d = sizes[fs]
            if spec == "paper":
                if d < 32:
                    notes.append(f"{key}: 'paper' for feature set {fs!r} (d = {d}): d/32 gives 0 and is left out, "
                                 "then every count from 1 to d")
                kept = True
                continue
            if left_out(spec, d) and may_leave_out:
                notes.append(f"{key}: {spec!r} gives 0 of the {d} features of feature set {fs!r}: left out for it")
                continue
            try:
                resolve_count(spec, d)
                kept = True
            except ValueError:
                problems.append(f"{source}: {key}: {spec!r} gives {_count_value(spec, d)} features for feature "
                                f"set {fs!r}, outside [1, {d}]")
                kept = True
        return kept

    def check_list(key: str, specs, feature_sets, grid: bool = False):
        for fs in feature_sets:
            kept = [check(f"{key}[{i}]", spec, [fs]) for i, spec in enumerate(specs)]
            if specs and fs in sizes and not any(kept):
                problems.append(f"{source}: {key}: every count of {list(specs)} gives 0 of the {sizes[fs]} features "
                                f"of feature set {fs!r}; give counts it has (e.g. \"d\", or integers)")
            elif grid and fs in sizes and not all(kept) and len({_count_value(s, sizes[fs]) for s, k in
                                                                 zip(specs, kept, strict=True) if k}) < 2:
                # a curve's grid that a fraction giving 0 leaves with a single number of features is no curve
                gone = [s for s, k in zip(specs, kept, strict=True) if not k]
                problems.append(f"{source}: {key}: {list(specs)} leaves one number of features of the {sizes[fs]} "
                                f"of feature set {fs!r} ({', '.join(map(repr, gone))} gives 0); give it counts it "
                                "has (integers, or fractions of d it can take)")

    everything = list(config["feature_sets"])
    # The paper's grids serve every feature set; another grid, the feature sets of the sections that name it
    # (a grid no section names: every feature set).
    users: dict[str, list] = {}
    if "leaderboard" in config:
        users.setdefault(config["leaderboard"]["grid"], []).extend(config["leaderboard"]["feature_sets"])
    users.setdefault(config["wda"]["office"]["grid"], []).append(config["wda"]["office"]["feature_set"])
    for name, grid in config["grids"].items():
        specs = grid["feature_counts"]
        feature_sets = everything if name in ("curves", "table1", "table3") or name not in users else users[name]
        feature_sets = list(dict.fromkeys(feature_sets))
        if specs == "paper":
            check(f"grids.{name}.feature_counts", specs, feature_sets)
        else:
            # a curve's grid (not the tables' own, table1 and table3, where d alone is a table's column)
            check_list(f"grids.{name}.feature_counts", specs, feature_sets, grid=name not in ("table1", "table3"))
    targets = config["targets"]
    check("targets.table1.n_features", targets["table1"]["n_features"], targets["table1"]["feature_sets"])
    for target in ("table2", "table5"):
        check_list(f"targets.{target}.n_features", targets[target]["n_features"], targets[target]["feature_sets"])
    for fs, spec in targets["table6"]["n_features"].items():
        check(f"targets.table6.n_features.{fs}", spec, [fs], may_leave_out=False)
    check("boosting.ot_features", config["boosting"]["ot_features"], [config["boosting"]["feature_set"]],
          may_leave_out=False)
    check_list("semfs.counts", config["semfs"]["counts"], [config["semfs"]["feature_set"]])
    if "leaderboard" in config:
        check("leaderboard.fraction", config["leaderboard"]["fraction"], config["leaderboard"]["feature_sets"],
              may_leave_out=False)
    inv = config["invariance"]
    if inv["feature_set"] in sizes and not inv["n_features"] < sizes[inv["feature_set"]]:
        problems.append(f"{source}: invariance.n_features: {inv['n_features']} must be below the "
                        f"{sizes[inv['feature_set']]} features of {inv['feature_set']!r}")
    if problems:
        raise ConfigError("invalid configuration:\n" + "\n".join(problems))
    return list(dict.fromkeys(notes))


def _count_value(spec, d: int):
    if isinstance(spec, str) and spec.startswith("d/"):
        return d // int(spec[2:])
    return d if spec == "d" else spec


def check_clinical_counts(feature_counts, d: int, where: str, source: str = "config") -> None:
    """``clinical.feature_counts`` within ``[1, d]`` of the voxel table (``where`` says which table)."""
    from otfs_workflow.protocol import resolve_count

    problems = []
    for i, spec in enumerate(feature_counts):
        try:
            resolve_count(spec, d)
        except ValueError:
            problems.append(f"{source}: clinical.feature_counts[{i}]: {spec!r} gives {_count_value(spec, d)} "
                            f"features, outside [1, {d}] ({where})")
    if problems:
        raise ConfigError("invalid configuration:\n" + "\n".join(problems))


def pairs_for(config: Mapping, dataset: str) -> list[str]:
    """Adaptation pairs of ``dataset`` selected by ``protocol.pairs``: all ordered pairs of its domains, or
    those of the listed pairs whose two domains are its own."""
    pairs = config["protocol"]["pairs"]
    domains = config["datasets"][dataset]["domains"]
    if pairs == "all":
        return make_pairs(domains)
    return [p for p in pairs if all(d in domains for d in parse_pair(p))]
