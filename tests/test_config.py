"""Configuration validation: every mistake names its key."""

import copy

import pytest
from snakemake.utils import update_config

from otfs.config import ConfigError, load_yaml, mirror_dirs, pairs_for, validate_config

from .conftest import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture()
def config():
    return load_yaml(REPO / "config.yaml")


def test_shipped_configs_are_valid(config):
    validate_config(config, SCHEMA)
    merged = copy.deepcopy(config)
    test = load_yaml(REPO / "config" / "test.yaml")
    update_config(merged, test)  # as `snakemake --configfile config/test.yaml` merges it
    validate_config(merged, SCHEMA)
    assert merged["feature_sets"]["EfficientNetLite0"]["extractor"] == "efficientnet-lite0"
    assert len(pairs_for(config, "office-caltech")) == 12
    assert pairs_for(merged, "office-caltech") == test["protocol"]["pairs"]


def test_misspelt_key_is_named_with_a_suggestion(config):
    config["protocol"]["iteratons"] = config["protocol"].pop("iterations")
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA, source="config.yaml")
    msg = str(err.value)
    assert "unknown key 'protocol.iteratons' (did you mean 'iterations'?)" in msg
    assert "'iterations' is a required property" in msg


def test_misspelt_top_level_key(config):
    config["rankng"] = {}
    with pytest.raises(ConfigError, match=r"unknown key 'rankng' \(did you mean 'ranking'\?\)"):
        validate_config(config, SCHEMA)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: c["selection"].update(strategy="knn"), r"selection.strategy: 'knn' is not one of"),
        (lambda c: c["protocol"].update(iterations=0), r"protocol.iterations: 0 is less than"),
        (lambda c: c["ranking"].update(method="greenkhorn"), r"ranking.method"),
        (lambda c: c["feature_sets"]["surf"].update(dataset="office"), r"feature_sets.surf.dataset: unknown dataset 'office'"),
        (lambda c: c["targets"]["figure7"].update(feature_sets=["sift"]),
         r"targets.figure7.feature_sets: unknown feature set 'sift'"),
        (lambda c: c["targets"]["table6"].update(feature_sets=["surf", "CaffeNet4096"]),
         r"targets.table6.n_features: no entry for feature set 'CaffeNet4096'"),
        (lambda c: c["protocol"].update(pairs=["amazon-amazon"]), r"protocol.pairs: 'amazon-amazon' is not a pair"),
        (lambda c: c["protocol"].update(pairs=["amazon-kitchen"]), r"protocol.pairs: 'amazon-kitchen'"),
        (lambda c: c["feature_sets"]["surf"].update(preprocessing=["whiten"]), r"feature_sets.surf.preprocessing.0"),
    ],
)
def test_invalid_values_are_named(config, mutate, message):
    mutate(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)


def test_mirror_dirs_from_config_and_environment(tmp_path):
    cfg = {"mirror_dirs": ["a"], "mirror_env": "OTFS_DATA_MIRROR"}
    env = {"OTFS_DATA_MIRROR": f"{tmp_path}/m1:{tmp_path}/m2"}
    assert [str(p) for p in mirror_dirs(cfg, env)] == ["a", f"{tmp_path}/m1", f"{tmp_path}/m2"]
    assert [str(p) for p in mirror_dirs(cfg, {})] == ["a"]
