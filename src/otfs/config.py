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

import jsonschema
import yaml

from .protocol import make_pairs, parse_pair

__all__ = ["ConfigError", "load_yaml", "mirror_dirs", "pairs_for", "validate_config"]


class ConfigError(ValueError):
    """The configuration is invalid."""


def load_yaml(path: str | os.PathLike):
    """Read a YAML file, naming it on a syntax error."""
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from exc


def _key_path(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _describe(error: jsonschema.ValidationError, source: str) -> str:
    where = _key_path(error.absolute_path)
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
    return f"{source}: {where}: {error.message}"


def validate_config(config: Mapping, schema_path: str | os.PathLike, source: str = "config") -> None:
    """Validate ``config`` against the schema and cross-references.

    Raises
    ------
    ConfigError
        With one line per problem, each naming its key.
    """
    schema = load_yaml(schema_path)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise ConfigError("invalid configuration:\n" + "\n".join(_describe(e, source) for e in errors))

    problems = []
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
        for name in {fs["dataset"] for fs in config["feature_sets"].values()}:
            domains = datasets[name]["domains"]
            for pair in pairs:
                try:
                    s, t = parse_pair(pair)
                except ValueError as exc:
                    problems.append(f"{source}: protocol.pairs: {exc}")
                    continue
                bad = [x for x in (s, t) if x not in domains]
                if bad or s == t:
                    problems.append(
                        f"{source}: protocol.pairs: {pair!r} is not a pair of distinct "
                        f"domains of dataset {name!r} ({domains})"
                    )
    problems += _boosting_problems(config, source)
    problems += _section_problems(config, "semfs", source)
    if problems:
        raise ConfigError("invalid configuration:\n" + "\n".join(problems))


def _section_problems(config: Mapping, section: str, source: str) -> list[str]:
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
    for pair in cfg["pairs"]:
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


def _feature_set_source(name: str, fs: Mapping, datasets: Mapping, source: str) -> list[str]:
    """A feature set has a ``folder`` of released files or an ``extractor``, not both."""
    where = f"{source}: feature_sets.{name}"
    has = [k for k in ("folder", "extractor") if k in fs]
    if len(has) != 1:
        return [f"{where}: give exactly one of 'folder' (released .mat files) and 'extractor' "
                f"(features extracted from images); got {has or 'neither'}"]
    if "extractor" not in fs:
        return []
    from .extraction import EXTRACTORS  # imports no deep-learning package

    problems = []
    if fs["extractor"] not in EXTRACTORS:
        close = difflib.get_close_matches(fs["extractor"], list(EXTRACTORS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problems.append(f"{where}.extractor: unknown extractor {fs['extractor']!r}{hint}; "
                        f"registered: {sorted(EXTRACTORS)}")
    ds = datasets.get(fs["dataset"])
    if ds is not None and not ds.get("image_manifest"):
        problems.append(f"{where}.extractor: dataset {fs['dataset']!r} has no image_manifest "
                        f"(set datasets.{fs['dataset']}.image_manifest)")
    return problems


def pairs_for(config: Mapping, dataset: str) -> list[str]:
    """Adaptation pairs of ``dataset`` selected by ``protocol.pairs``."""
    pairs = config["protocol"]["pairs"]
    return make_pairs(config["datasets"][dataset]["domains"]) if pairs == "all" else list(pairs)


def mirror_dirs(dataset_cfg: Mapping, environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Mirror folders of a dataset: those of the config, then the environment's."""
    dirs = [Path(p) for p in dataset_cfg.get("mirror_dirs", [])]
    env = dataset_cfg.get("mirror_env")
    if env and environ.get(env):
        dirs.extend(Path(p) for p in environ[env].split(os.pathsep) if p)
    return dirs
