"""Configuration validation: every mistake names its key."""

import copy

import pytest
import yaml
from snakemake.utils import update_config

from otfs_workflow.config import (
    ConfigError,
    check_clinical_counts,
    check_feature_counts,
    load_yaml,
    mirror_dirs,
    pairs_for,
    validate_config,
)

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
    office = set(config["datasets"]["office-caltech"]["domains"])
    assert pairs_for(merged, "office-caltech") == [p for p in test["protocol"]["pairs"]
                                                   if set(p.split("-")) <= office]
    assert pairs_for(merged, "wine-quality") == ["red-white"]
    # every other shipped configuration file, merged on config.yaml as --configfile merges it
    for extra in sorted((REPO / "config").glob("*.yaml")):
        merged = copy.deepcopy(config)
        update_config(merged, load_yaml(extra))
        validate_config(merged, SCHEMA, source=str(extra))
    full = load_yaml(REPO / "config" / "leaderboard-full.yaml")
    assert set(config["leaderboard"]["rankers"]) < set(full["leaderboard"]["rankers"])
    assert set(config["leaderboard"]["feature_sets"]) < set(full["leaderboard"]["feature_sets"])
    assert full["grids"]["leaderboard"]["iterations"] == config["protocol"]["iterations"]


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


def test_a_renamed_section_names_its_new_name(config):
    config["selection"] = {"tie_break": "lowest"}  # the section's name before sample_selection
    with pytest.raises(ConfigError, match=r"config: selection: renamed sample_selection .*move its keys there"):
        validate_config(config, SCHEMA)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: c["ranking"].update(ranker="ot-knn"),
         r"ranking.ranker: unknown feature ranker 'ot-knn'; registered feature rankers: "
         r"\[.*'ot', 'ot-1nn', 'ot-random'.*\] \(did you mean 'ot-1nn'\?\)"),
        (lambda c: c["targets"]["table5"].update(rankers=["ot", "1nn"]),
         r"targets.table5.rankers\[1\]: unknown feature ranker '1nn'"),
        (lambda c: c.update(rankers={"ot": {"reg": 2.0}}),
         r"rankers.ot: the OT rankers take their settings from the sections `sample_selection` .* got \['reg'\]"),
        (lambda c: c.update(rankers={"otx": {}}), r"rankers.otx: unknown feature ranker 'otx'"),
        (lambda c: c["targets"]["table3"]["adapters"].append("OT4"),
         r"targets.table3.adapters\[5\]: unknown adapter 'OT4'; registered adapters: \['CORAL', "),
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


# --- cross-checks the schema cannot express, before any job runs ----------------------------
SIZES = {"surf": 800, "GoogleNet1024": 1024, "CaffeNet4096": 4096, "EfficientNetLite0": 1280}


def test_shipped_feature_counts_fit_every_feature_set(config):
    check_feature_counts(config, SIZES.__getitem__)


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["grids"]["table3"].update(feature_counts=["d/1024", "d/2048"]),
     r"config: grids.table3.feature_counts: every count of \['d/1024', 'd/2048'\] gives 0 of the 800 features of "
     r"feature set 'surf'"),
    (lambda c: c["grids"]["curves"].update(feature_counts=[900]),
     r"grids.curves.feature_counts\[0\]: 900 gives 900 features for feature set 'surf', outside \[1, 800\]"),
    (lambda c: c["targets"]["table6"]["n_features"].update(surf="d/1000"),
     r"targets.table6.n_features.surf: 'd/1000' gives 0 features for feature set 'surf'"),
    (lambda c: c["targets"]["table1"].update(n_features=5000),
     r"targets.table1.n_features: 5000 gives 5000 features for feature set 'CaffeNet4096', outside \[1, 4096\]"),
    (lambda c: c["boosting"].update(ot_features="d/1024"), r"boosting.ot_features: 'd/1024' gives 0 features"),
    (lambda c: c["invariance"].update(n_features=800), r"invariance.n_features: 800 must be below the 800 features"),
])
def test_a_feature_count_outside_d_is_named(config, mutate, message):
    mutate(config)
    with pytest.raises(ConfigError, match=message):
        check_feature_counts(config, SIZES.__getitem__)


def test_a_fraction_that_gives_no_feature_is_left_out_with_a_note(config):
    # a user's table of 11 or 13 features: d/32 gives 0, so it is left out of that feature set's grids and
    # tables (not an error while the DAG is built); 'paper' counts every feature below d = 32
    sizes = {**SIZES, "EfficientNetLite0": 11}
    notes = check_feature_counts(config, sizes.__getitem__)
    assert "grids.curves.feature_counts: 'paper' for feature set 'EfficientNetLite0' (d = 11): d/32 gives 0 and is " \
           "left out, then every count from 1 to d" in notes
    assert "targets.table2.n_features[0]: 'd/32' gives 0 of the 11 features of feature set 'EfficientNetLite0': " \
           "left out for it" in notes
    assert not check_feature_counts(config, SIZES.__getitem__)  # nothing left out at the paper's sizes
    from otfs_workflow.protocol import feature_counts, resolve_feature_counts

    assert feature_counts(11) == list(range(1, 12)) and feature_counts(13)[-1] == 13
    assert resolve_feature_counts(["d/32", "d/8", "d/2", "d"], 13) == [1, 6, 13]
    assert feature_counts(800) == [25, *range(50, 801, 50)]  # unchanged at the paper's sizes


def test_a_fraction_that_leaves_a_grid_one_number_of_features_is_named(config):
    # on d = 11, d/20 gives 0: the curves would have the one point d; with d/2 beside it, d/20 is left out
    sizes = {**SIZES, "EfficientNetLite0": 11}
    config["grids"]["curves"]["feature_counts"] = ["d/20", "d"]
    with pytest.raises(ConfigError, match=r"config: grids.curves.feature_counts: \['d/20', 'd'\] leaves one number of "
                                          r"features of the 11 of feature set 'EfficientNetLite0' \('d/20' gives 0\)"):
        check_feature_counts(config, sizes.__getitem__)
    config["grids"]["curves"]["feature_counts"] = ["d/20", "d/2", "d"]
    assert ("grids.curves.feature_counts[0]: 'd/20' gives 0 of the 11 features of feature set 'EfficientNetLite0': "
            "left out for it") in check_feature_counts(config, sizes.__getitem__)
    config["grids"]["curves"]["feature_counts"] = ["d"]  # one number asked for is the user's to ask
    assert not [n for n in check_feature_counts(config, sizes.__getitem__) if n.startswith("grids.curves")]
    # the tables' grids keep d alone where their fraction gives 0 (the shipped table1 grid on 4 features)
    config["grids"]["curves"]["feature_counts"] = "paper"
    assert "grids.table1.feature_counts[0]: 'd/8' gives 0 of the 4 features of feature set 'EfficientNetLite0': " \
           "left out for it" in check_feature_counts(config, {**SIZES, "EfficientNetLite0": 4}.__getitem__)


def test_clinical_counts_are_checked_against_the_tables_width():
    check_clinical_counts([1, 50, "d"], 95, "synthetic")
    with pytest.raises(ConfigError, match=r"clinical.feature_counts\[1\]: 200 gives 200 features, outside \[1, 95\] "
                                          r"\(d = 95"):
        check_clinical_counts([5, 200], 95, "d = 95, clinical.synthetic.n_features")


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["protocol"]["source_per_class_overrides"].update(dslrr=8),
     r"protocol.source_per_class_overrides: 'dslrr' is not a domain of any dataset \(did you mean 'dslr'\?\)"),
    (lambda c: c["wda"]["office"].update(grid="curvez"),
     r"wda.office.grid: unknown grid 'curvez'; grids: \['curves', 'families', 'leaderboard', 'table1', 'table3', 'wda'\]"),
    (lambda c: c["feature_sets"]["surf"].update(folder="../surf"),
     r"feature_sets.surf.folder: folder '../surf' must be a relative path inside the dataset's folders"),
    (lambda c: c["feature_sets"]["surf"].update(folder="/etc"), r"feature_sets.surf.folder: folder '/etc' must be a "),
    (lambda c: c["feature_sets"]["surf"].update(reader={"name": "matt", "folder": "surf"}),
     r"feature_sets.surf.reader.name: unknown dataset reader 'matt'; registered dataset readers: "
     r"\['20newsgroups', 'amazon-reviews-400', 'amazon-reviews-5000', 'corn-nir', 'heart-disease', 'landmine', "
     r"'mat', 'planted-shifts', 'tabular', 'usps-mnist', 'wifi', 'wine-quality'\]"),
    (lambda c: c["feature_sets"]["surf"].update(reader={"name": "mat", "folder": "surf", "fmt": 1}),
     r"feature_sets.surf: give exactly one of 'reader' .* got \['reader', 'folder'\]"),
    (lambda c: (c["feature_sets"]["surf"].pop("folder"), c["feature_sets"]["surf"].update(reader={"name": "mat"})),
     r"feature_sets.surf.reader: .*missing 1 required positional argument: 'folder'"),
    (lambda c: c["datasets"]["office-caltech"].pop("local_dir"),
     r"feature_sets.surf: its reader 'mat' reads files, so datasets.office-caltech needs \['local_dir'\]"),
    (lambda c: c["datasets"]["office-caltech"].update(manifest="../elsewhere.tsv"),
     r"datasets.office-caltech.manifest: '../elsewhere.tsv' must be a relative path inside the repository"),
    (lambda c: c["semfs"].update(attributes="/tmp/attributes.tsv"),
     r"semfs.attributes: '/tmp/attributes.tsv' must be a relative path inside the repository"),
    (lambda c: c["adapters"].update(OT3={"reg": -1.0}),
     r"adapters.OT3: The 'reg' parameter of SinkhornLpl1Adapter must be a float in the range \(0.0, inf\)"),
    (lambda c: c["adapters"].update(OT3={"regg": 2.0}), r"adapters.OT3: .*unexpected keyword argument 'regg'"),
    (lambda c: c["adapters"].update(OT9={}), r"adapters.OT9: unknown adapter 'OT9'; registered adapters: "),
    (lambda c: c["wda"]["methods"]["WDA"]["candidates"][1].update(reg_lamda=0.3),
     r"wda.methods.WDA.candidates\[1\]: .*unexpected keyword argument 'reg_lamda'"),
    (lambda c: c["wda"]["methods"]["WDA"].update(max_iter=0),
     r"wda.methods.WDA.candidates\[0\]: The 'max_iter' parameter of WassersteinDiscriminantAnalysis must be"),
    (lambda c: c["wda"]["ablation"]["variants"]["pot-default"]["params"].update(init="lda"),
     r"wda.ablation.variants.pot-default.params: The 'init' parameter of WassersteinDiscriminantAnalysis"),
    (lambda c: c["wda"]["ablation"]["variants"].update(bad={"method": "PCA", "params": {"n_component": 3}}),
     r"wda.ablation.variants.bad.params: .*unexpected keyword argument 'n_component'"),
    (lambda c: c["leaderboard"].update(reference="fmmd"),
     r"leaderboard.reference: 'fmmd' is not one of leaderboard.rankers \['ot', 'wasserstein1d'"),
    (lambda c: c["leaderboard"].update(reference=["ot", "fmmd"]),
     r"leaderboard.reference: 'fmmd' is not one of leaderboard.rankers \['ot', 'wasserstein1d'"),
    (lambda c: c["leaderboard"].update(reference=["ot", "no-such-ranker"]),
     r"leaderboard.reference\[1\]: .*'no-such-ranker'"),
])
def test_cross_references_are_named(config, mutate, message):
    mutate(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("protocol:\n  iterations: 3\n  pairs: [a, b\nselection: {}\n")
    with pytest.raises(ConfigError, match=r"bad.yaml, line 4, column 10: invalid YAML: while parsing a flow "
                                          r"sequence expected ',' or ']', but got ':'"):
        load_yaml(bad)
    bad.write_text("a:\n\tb: 1\n")
    with pytest.raises(ConfigError, match=r"bad.yaml, line 2, column 1: invalid YAML: .*found character '.t'"):
        load_yaml(bad)


def test_the_strict_reading_on_libyaml_equals_pyyamls_own_and_keeps_its_errors(monkeypatch):
    # otfs_workflow._yaml.load parses with libyaml where PyYAML has it (every Snakemake invocation reads the
    # configuration and its schemas): every YAML file of the repository reads the same as with the pure-Python
    # StrictLoader, and a refused document gives StrictLoader's own message and position
    import yaml

    from otfs_workflow import _yaml

    assert yaml.__with_libyaml__ and _yaml._CStrictLoader is not None  # the fast path is the one tested here
    files = [p for p in REPO.rglob("*.y*ml") if p.suffix in (".yaml", ".yml")
             and not {".venv", ".snakemake", "results", "node_modules"} & set(p.relative_to(REPO).parts)]
    assert len(files) >= 10
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert _yaml.load(text) == yaml.load(text, Loader=_yaml.StrictLoader), path  # noqa: S506
    bad = ["protocol:\n  iterations: 2\nprotocol:\n  iterations: 3\n", "a: [1, 2\nb: 3\n", "a:\n\tb: 1\n",
           "a: b: c\n", "- a\nb: 1\n", "a: &x [1]\nb: *y\n"]
    for text in bad:
        with pytest.raises(yaml.YAMLError) as fast:
            _yaml.load(text)
        with pytest.raises(yaml.YAMLError) as pure:
            yaml.load(text, Loader=_yaml.StrictLoader)  # noqa: S506
        assert type(fast.value) is type(pure.value) and str(fast.value) == str(pure.value), text
    # without libyaml, the pure-Python loader alone
    monkeypatch.setattr(_yaml, "_CStrictLoader", None)
    assert _yaml.load("a: 1\nb: [x]\n") == {"a": 1, "b": ["x"]}
    with pytest.raises(yaml.constructor.ConstructorError, match="given twice"):
        _yaml.load("a: 1\na: 2\n")


def test_an_experiments_section_is_optional_and_its_defaults_fill_what_is_left_out(config, tmp_path):
    # a schema with an experiment's section beside it, found by being there; Snakemake's `validate` fills both
    schema = load_yaml(SCHEMA)
    schema["properties"]["benchmarks"]["properties"]["note"] = {"type": "string", "default": "filled"}
    (tmp_path / "experiments").mkdir()
    (tmp_path / "config.schema.yaml").write_text(yaml.safe_dump(schema))
    (tmp_path / "experiments" / "mine.schema.yaml").write_text(yaml.safe_dump({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "properties": {"rankers": {"type": "array", "default": ["ot"]},
                       "grid": {"type": "object", "properties": {"k": {"type": "integer", "default": 5}},
                                "default": {}}}}))
    left_out = copy.deepcopy(config)
    validate_config(left_out, tmp_path / "config.schema.yaml")
    assert left_out["mine"] == {"rankers": ["ot"], "grid": {"k": 5}} and left_out["benchmarks"]["note"] == "filled"
    given = {**copy.deepcopy(config), "mine": {"rankers": ["ks"], "grid": {"k": 3}}}
    validate_config(given, tmp_path / "config.schema.yaml")
    assert given["mine"] == {"rankers": ["ks"], "grid": {"k": 3}}
    for bad, key in (({"rankerz": []}, r"unknown key 'mine.rankerz' \(did you mean 'rankers'\?\)"),
                     ({"grid": {"k": "five"}}, r"config: mine.grid.k: 'five' is not of type 'integer'"),
                     (3, r"config: mine: 3 is not of type 'object'")):
        with pytest.raises(ConfigError, match=key):
            validate_config({**copy.deepcopy(config), "mine": bad}, tmp_path / "config.schema.yaml")


def test_the_shift_section_is_checked_against_its_schema(config):
    filled = copy.deepcopy(config)
    validate_config(filled, SCHEMA)  # config.yaml leaves it out: the schema's defaults
    assert filled["shift"]["families"]["wifi"] == ["wifi_t1t2", "wifi_t1t3", "wifi_t2t3"]
    assert filled["shift"]["regression"]["corn"]["iterations"] == 5
    config["shift"] = {"families": {"wine": []}}
    with pytest.raises(ConfigError, match=r"shift.families.wine"):
        validate_config(config, SCHEMA)
    config["shift"] = {"family": {"wine": ["wine"]}}
    with pytest.raises(ConfigError, match=r"unknown key 'shift.family' \(did you mean 'families'\?\)"):
        validate_config(config, SCHEMA)
    # a regression family's dataset is a configured one, and its name no classification family's
    corn = {"dataset": "corn-nir", "file": "corn-nir/cornData.mat", "responses": ["oil"]}
    config["shift"] = {"regression": {"corn": {**corn, "dataset": "corn"}}}
    with pytest.raises(ConfigError, match=r"config: shift.regression.corn.dataset: unknown dataset 'corn'; configured"):
        validate_config(copy.deepcopy(config), SCHEMA)
    config["shift"] = {"regression": {"wine": corn}, "families": {"wine": ["wine"]}}
    with pytest.raises(ConfigError, match=r"config: shift.regression.wine: also a classification family"):
        validate_config(copy.deepcopy(config), SCHEMA)


def test_a_name_yaml_reads_as_a_boolean_is_named_with_its_key(config, tmp_path):
    # a domain NO, unquoted: YAML 1.1 reads it as False, as a list item and as a mapping's key
    from otfs_workflow.plan_cache import digest

    text = ("datasets:\n  mine: {domains: [NO, b]}\n"
            "feature_sets:\n  mine:\n    dataset: mine\n    reader: {name: tabular, files: {NO: a.csv, b: b.csv}, "
            "label: y}\n    preprocessing: [zscore]\n")
    (tmp_path / "mine.yaml").write_text(text)
    mine = load_yaml(tmp_path / "mine.yaml")
    assert mine["datasets"]["mine"]["domains"][0] is False
    merged = copy.deepcopy(config)
    update_config(merged, mine)
    assert len(digest(merged)) == 64  # the plan cache's key reads it, so that the validation names the keys
    assert digest(merged) != digest({**merged, "datasets": {**merged["datasets"], "mine": {"domains": ["NO", "b"]}}})
    with pytest.raises(ConfigError) as err:
        validate_config(merged, SCHEMA)
    msg = str(err.value)
    assert "config: feature_sets.mine.reader.files: the key False is not a name (YAML reads an unquoted yes, no" in msg
    assert "config: datasets.mine.domains.0: False is not of type 'string' (YAML reads" in msg
    assert 'quote the name, e.g. "NO"' in msg
