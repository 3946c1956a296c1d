"""The planning module (otfs_workflow.plan) on its own, without Snakemake: what the rules are given for the
shipped configuration and the test configuration, checked against the configuration files, the data mirror's
files and Snakemake's own expand."""

from __future__ import annotations

import copy
import itertools
from types import SimpleNamespace

import pytest
from snakemake.exceptions import WorkflowError
from snakemake.io import expand
from snakemake.utils import update_config

from otfs_workflow.config import ConfigError, load_yaml, validate_config
from otfs_workflow.plan import (
    CodeInputs,
    PairRule,
    Plan,
    ScopedCode,
    agg_files,
    pairs_domains,
    ranker_shares,
    rule_convention_problems,
    rule_name_part,
)

from .conftest import REPO, mirror_dir


def configuration(*overlays: str) -> dict:
    """config.yaml with ``overlays`` merged in, as Snakemake merges --configfile, the experiments' defaults
    filled and the whole validated, as the workflow does at parse."""
    config = load_yaml(REPO / "config.yaml")
    for overlay in overlays:
        update_config(config, load_yaml(REPO / overlay))
    return validated(config)


def validated(config: dict) -> dict:
    """``config`` validated, with the schemas' defaults filled."""
    validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    return config


@pytest.fixture(scope="module")
def shipped():
    return configuration()


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)  # the configuration's paths are the repository's


def test_a_feature_sets_pairs_are_its_datasets_ordered_pairs(shipped):
    plan = Plan(shipped)
    domains = shipped["datasets"]["office-caltech"]["domains"]
    assert plan.fs_pairs("surf") == [f"{s}-{t}" for s, t in itertools.permutations(domains, 2)]
    assert plan.fs_domains("wifi_t1t2") == ["t1", "t2"]  # its own domains, not the dataset's three
    assert plan.fs_pairs("wifi_t1t2") == ["t1-t2", "t2-t1"]
    assert pairs_domains(["dslr-webcam", "webcam-amazon"]) == ["dslr", "webcam", "amazon"]


def test_unknown_names_are_errors_naming_what_is_configured(shipped):
    plan = Plan(shipped)
    with pytest.raises(ValueError, match=r"unknown feature set 'surff'; configured: \['CaffeNet4096'"):
        plan.fs_config("surff")
    with pytest.raises(WorkflowError, match=r"unknown grid 'curve' .*\['curves', 'families'"):
        plan.grid_config("curve")


def test_the_number_of_features_comes_from_the_manifest_and_the_extractor(shipped, in_repo):
    plan = Plan(shipped)
    assert plan.fs_n_features("surf") == 800 and plan.fs_n_features("GoogleNet1024") == 1024
    assert plan.fs_n_features("EfficientNetLite0") == 1280
    assert plan.counts("surf", ["d/8", "d/2", "d"]) == [100, 400, 800]


def test_the_libraries_answers_go_through_the_answer_hook_once_per_plan(shipped):
    asked = []

    def answer(question, args, compute):
        asked.append(question)
        return compute()

    plan = Plan(shipped, answer=answer)
    assert plan.ranker_strategy("ot") == plan.ranker_strategy("ot") is not None
    assert plan.ranker_strategy("source-anova") is None
    assert asked.count("ranker_strategy") == 2  # ot once, fisher once
    assert "ot" in plan.registry_names("otfs.rankers") and "registry_names" in asked


def test_the_ot_rankers_take_algorithm_1_and_2_settings_from_their_sections(shipped):
    plan = Plan(shipped)
    ot = plan.ranker_params("ot")
    assert {k: ot[k] for k in ("reg", "norm", "method", "max_iter", "tol")} == {
        k: shipped["ranking"][k] for k in ("reg", "norm", "method", "max_iter", "tol")}
    assert ot["tie_break"] == shipped["sample_selection"]["tie_break"]
    assert not {"reg", "tie_break"} & set(plan.ranker_params("source-anova"))


def test_source_samples_per_class_follow_the_protocol_and_a_families_own(shipped):
    plan = Plan(shipped)
    assert plan.pair_source_per_class("dslr-webcam", "surf") == 8  # the protocol's override for dslr
    assert plan.pair_source_per_class("amazon-webcam", "surf") == 20
    assert plan.pair_source_per_class("books-dvd", "amazon400") == 100  # the feature set's own


def test_caches_depend_on_the_cache_settings_only(shipped):
    plan = Plan(shipped)
    assert "inapplicable_adapters" in plan.fs_config("amazon400")
    assert set(plan.cache_config("amazon400")) == set(plan.fs_config("amazon400")) - {
        "source_per_class", "inapplicable_adapters"}
    assert plan.applicable_adapters("amazon400", ["NA", "OT3", "CORAL"]) == ["NA", "CORAL"]


def test_cache_inputs_name_the_raw_files_or_the_extraction(shipped, in_repo):
    plan = Plan(shipped)
    raw = plan.cache_inputs(SimpleNamespace(feature_set="surf", domain="dslr"))
    assert raw["raw"] == ["data/raw/office-caltech/surf/dslr.mat"] and "manifest" in raw
    extracted = plan.cache_inputs(SimpleNamespace(feature_set="EfficientNetLite0", domain="dslr"))
    assert extracted == {"features": "data/features/office-caltech/efficientnet-lite0/dslr.h5"}


def test_the_available_scope_is_the_domains_whose_files_the_mirror_has(shipped, in_repo, monkeypatch):
    monkeypatch.setenv("OTFS_DATA_MIRROR", str(mirror_dir()))
    plan = Plan(shipped)
    present = sorted(p.stem for p in (mirror_dir() / "CaffeNet4096").glob("*.mat"))
    domains = shipped["datasets"]["office-caltech"]["domains"]
    expected = "all" if present == sorted(domains) else "+".join(d for d in domains if d in present)
    assert plan.scope_for("available", "CaffeNet4096") == expected
    assert plan.scope_for("available", "surf") == "all"
    assert plan.agg("available", "surf") == f"results/aggregate/surf/all/{shipped['ranking']['ranker']}/NA/curves"
    covered = plan.target_feature_sets("available", ["surf", "CaffeNet4096"])
    assert covered == (["surf", "CaffeNet4096"] if len(present) >= 2 else ["surf"])


def test_a_domain_neither_present_nor_downloadable_is_an_error_naming_it(shipped, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OTFS_DATA_MIRROR", raising=False)
    config = copy.deepcopy(shipped)
    config["datasets"]["office-caltech"]["download"] = False
    config["datasets"]["office-caltech"]["manifest"] = str(REPO / config["datasets"]["office-caltech"]["manifest"])
    plan = Plan(config)
    assert plan.local_domains("surf") == []
    with pytest.raises(WorkflowError, match=r"feature set 'surf': the data of domain\(s\) \['amazon', 'caltech10', "
                                            r"'dslr', 'webcam'\] cannot be obtained .*data/local/office-caltech/surf/amazon.mat"):
        plan.scope_for("paper", "surf")
    assert Plan(shipped).scope_for("paper", "surf") == "all"  # downloads on: the acquisition fetches it


def test_a_batch_of_aggregates_lists_files_in_snakemakes_expand_order(shipped, in_repo, monkeypatch):
    monkeypatch.setenv("OTFS_DATA_MIRROR", str(mirror_dir()))
    plan = Plan(shipped)
    w = SimpleNamespace(feature_set="surf", scope="all", grid="curves")
    rankers, adapters = ["ot", "source-anova"], ["NA", "CORAL"]
    assert plan.batch_aggregate_tables(rankers, adapters)(w) == expand(
        "results/runs/{fs}/classification/{ranker}/{adapter}/{grid}/{pair}.tsv", fs="surf", ranker=rankers,
        adapter=adapters, grid="curves", pair=plan.fs_pairs("surf"))
    assert plan.batch_aggregate_outputs("summary.tsv", rankers, adapters) == expand(
        "results/aggregate/{{feature_set}}/{{scope}}/{ranker}/{adapter}/{{grid}}/summary.tsv", ranker=rankers,
        adapter=adapters)
    runs = plan.batch_aggregate_params(rankers, adapters)(w)
    assert [(r["ranker"], r["adapter"]) for r in runs] == list(itertools.product(rankers, adapters))
    assert {r["pairs"] for r in runs} == {12} and {r["iterations"] for r in runs} == {shipped["protocol"]["iterations"]}
    assert plan.aggregate_caches(w) == [f"data/cache/surf/{d}.h5" for d in shipped["datasets"]["office-caltech"]["domains"]]
    assert agg_files("a", ("x.tsv",)) == ["a/x.tsv"] and rule_name_part("my-set.v2") == "my_set_v2"


def test_a_curves_jobs_params_are_its_grids(shipped):
    plan = Plan(shipped)
    params = plan.curves_job_params(["NA", "CORAL"], grid="families", prefix="curves_")
    w = SimpleNamespace(grid="ignored")
    assert params["curves_adapters"] == ["NA", "CORAL"]
    assert params["curves_orders"](w) == shipped["grids"]["families"]["orders"]
    assert params["curves_feature_counts"](w) == shipped["grids"]["families"]["feature_counts"]
    by_wildcard = plan.curves_job_params(["NA"])
    assert by_wildcard["orders"](SimpleNamespace(grid="curves")) == shipped["grids"]["curves"]["orders"]


def test_the_test_configuration_plans_fewer_iterations(shipped):
    small = Plan(configuration("config/test.yaml"))
    assert small.iterations == list(range(load_yaml(REPO / "config" / "test.yaml")["protocol"]["iterations"]))
    assert len(small.iterations) < len(Plan(shipped).iterations) == 19


def test_a_users_tables_are_inspected_with_every_problem_and_note(shipped, tmp_path, monkeypatch):
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    rows = {"alpha": [0.1, 0.4, 0.2, 0.9, 0.5, 0.3], "flat": [1.0] * 6, "kind": ["x", "y"] * 3}
    pd.DataFrame(rows).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({**rows, "kind": ["x"] * 6}).to_csv(tmp_path / "b.csv", index=False)  # one class only
    config = copy.deepcopy(shipped)
    config["datasets"] = {"mine": {"domains": ["a", "b"], "local_dir": str(tmp_path)}}
    config["feature_sets"] = {"mine": {"dataset": "mine", "preprocessing": [], "reader": {
        "name": "tabular", "files": {"a": str(tmp_path / "a.csv"), "b": str(tmp_path / "b.csv")}, "label": "kind"}}}
    problems, notes = Plan(config).user_table_findings(tmp_path / "inspect")
    assert any("domain 'a'" in text and "constant there ['flat']" in text for _, text in notes)
    assert {fs for fs, _ in notes} == {"mine"}
    assert problems and all(p.startswith("feature set 'mine': ") for p in problems)
    assert any("a-b" in p or "b-a" in p for p in problems), problems


class _Input(dict):
    """Snakemake's named input list as convention checks read it: keys, get, iteration over the files."""

    def __iter__(self):
        return iter(self.values())


def test_rule_conventions_name_the_rule_and_what_to_write(shipped, in_repo):
    code = CodeInputs(REPO, Plan(shipped), write=False)
    good = code.script_code("ranking.py", rankers="ranker")
    assert isinstance(good, ScopedCode) and good.script == "ranking.py"
    rules = [
        SimpleNamespace(name="rank", benchmark="logs/benchmarks/rank/x.tsv", script="../scripts/ranking.py",
                        input=_Input(code=good)),
        SimpleNamespace(name="late", benchmark="logs/late/x.tsv", script=None, input=_Input()),
        SimpleNamespace(name="bare", benchmark=None, script="../scripts/ranking.py", input=_Input(data="x.h5")),
        SimpleNamespace(name="other", benchmark=None, script="../scripts/ranking.py",
                        input=_Input(code=code.script_code("classification.py", adapters="adapter"))),
        SimpleNamespace(name="acquire", benchmark=None, script="../scripts/acquisition.py", input=_Input()),
    ]
    assert rule_convention_problems(rules) == [
        "rules.late: benchmark logs/late/x.tsv is not under logs/benchmarks/late/",
        'rules.bare: no code input; write code=script_code("ranking.py")',
        "rules.other: its code input is the code manifest of classification.py, not of its script ranking.py; "
        'write code=script_code("ranking.py", ...)',
    ]
    with pytest.raises(WorkflowError, match=r"script_code\('nope.py'\): no workflow/scripts/nope.py"):
        code.script_code("nope.py")
    with pytest.raises(WorkflowError, match=r"unknown keyword \['ranker'\]; use \['adapters', 'rankers'\]"):
        code.script_code("ranking.py", ranker="ranker")


def test_ranker_shares_are_contiguous_and_as_even_as_they_divide():
    rankers = [f"r{i}" for i in range(14)]
    for per_job in range(1, 16):
        shares = ranker_shares(rankers, per_job)
        assert [r for share in shares for r in share] == rankers  # every ranker once, in order
        assert max(map(len, shares)) <= per_job and len(shares) == -(-14 // per_job)
        assert max(map(len, shares)) - min(map(len, shares)) <= 1
    assert ranker_shares(rankers, 3) == [tuple(rankers[0:3]), tuple(rankers[3:6]), tuple(rankers[6:9]),
                                         tuple(rankers[9:12]), tuple(rankers[12:14])]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="per_job must be a positive integer"):
            ranker_shares(rankers, bad)


def test_a_families_pairs_are_split_by_rankers_per_job(shipped):
    plan = Plan(shipped)
    families = sorted({fs for names in shipped["shift"]["families"].values() for fs in names})
    rankers = shipped["leaderboard"]["rankers"]
    rules = plan.family_pair_rules(families, rankers, shipped["leaderboard"]["adapters"])
    per_job = shipped["shift"]["rankers_per_job"]
    with_ot3 = {"landmine", "wifi_t1t2", "wifi_t1t3", "wifi_t2t3", "wine"}  # OT3 applies: a rule of their own
    jobs = {}
    for fs in families:
        n = -(-len(rankers) // per_job.get(fs, len(rankers)))
        base = "run_family_pair_with_ot3" if fs in with_ot3 else "run_family_pair"
        owners = sorted(name for name, job in rules.items() if fs in job.feature_sets)
        # one rule per contiguous share of the rankers, never two rules for the same outputs
        assert owners == ([base] if n == 1 else [f"{base}_part{i}of{n}" for i in range(1, n + 1)]), fs
        assert [r for name in owners for r in rules[name].rankers] == rankers, fs
        assert {rules[name].part for name in owners} == ({""} if n == 1 else {f"_{i}of{n}" for i in range(1, n + 1)})
        assert all(("OT3" in rules[name].adapters) == (fs in with_ot3) for name in owners), fs
        jobs[fs] = n
    # the shipped split: Amazon 5,000 in seven, WiFi in two, the others whole
    assert jobs["amazon5000"] == 7 and jobs["wine"] == jobs["heart"] == jobs["amazon400"] == jobs["landmine"] == 1
    assert all(jobs[fs] == 2 for fs in families if fs.startswith("wifi")), jobs
    assert all(jobs[fs] == 1 for fs in families if fs.startswith("news")), jobs


def test_a_split_pair_reads_its_points_of_all_features_computed_once(shipped):
    plan = Plan(shipped)
    families = sorted({fs for names in shipped["shift"]["families"].values() for fs in names})
    rules = plan.family_pair_rules(families, shipped["leaderboard"]["rankers"], shipped["leaderboard"]["adapters"])
    ends = plan.family_ends_rules(rules)
    # one rule per set of adapters of the split pairs, for exactly the split feature sets
    split = {fs for job in rules.values() if job.part for fs in job.feature_sets}
    assert sorted(ends) == ["classify_family_all_features", "classify_family_all_features_with_ot3"]
    assert sorted(fs for job in ends.values() for fs in job.feature_sets) == sorted(split)
    assert "amazon5000" in split and not {"wine", "heart", "amazon400"} & split
    assert "OT3" in ends["classify_family_all_features_with_ot3"].adapters
    assert "OT3" not in ends["classify_family_all_features"].adapters
    for name, job in rules.items():
        for fs in job.feature_sets:
            pair = plan.fs_pairs(fs)[0]
            files = plan.family_pair_ends(job)(SimpleNamespace(feature_set=fs, pair=pair))
            if not job.part:  # a pair in one job computes them itself
                assert files == {}, name
                continue
            grid, ms_grid = shipped["shift"]["grid"], shipped["model_selection"]["grid"]
            assert files == {
                "curve_ends": f"results/runs/{fs}/all_features/{grid}/{pair}.families.json",
                "ms_ends": f"results/runs/{fs}/all_features/{ms_grid}/{pair}.model_selection.tsv"}, name
            # the adapters of the file are the pair rule's own
            (owner,) = [e for e in ends.values() if fs in e.feature_sets]
            assert owner.adapters == job.adapters, name
    # the name is the pair rule's less its share, whatever the adapters are called
    odd = {"run_family_pair_with_partial_ot_part1of2": PairRule(("NA", "partial_ot"), ("ot",), "_1of2", ["wine"])}
    assert list(plan.family_ends_rules(odd)) == ["classify_family_all_features_with_partial_ot"]
    # the job's params: the grid's metrics and first iterations, the pair's source samples per class
    params = plan.all_features_job_params(["NA", "OT3"])
    w = SimpleNamespace(grid=shipped["shift"]["grid"], feature_set="wine", pair="red-white")
    grid = shipped["grids"][w.grid]
    assert params["adapters"] == ["NA", "OT3"] and params["adapter_params"] == [plan.adapter_params("NA"),
                                                                              plan.adapter_params("OT3")]
    assert params["metrics"](w) == grid.get("metrics", {}) and params["iterations"](w) == plan.iterations[
        :grid["iterations"]]
    assert params["per_class"](w) == plan.pair_source_per_class("red-white", "wine")


def test_rankers_per_job_names_a_configured_feature_set():
    config = load_yaml(REPO / "config.yaml")
    with pytest.raises(ConfigError, match=r"shift\.rankers_per_job\.amazon500: unknown feature set"):
        validated({**config, "shift": {"rankers_per_job": {"amazon500": 2}}})
    with pytest.raises(ConfigError, match=r"shift\.rankers_per_job\.amazon5000: 0 is less than the minimum of 1"):
        validated({**config, "shift": {"rankers_per_job": {"amazon5000": 0}}})


def test_a_feature_sets_choice_of_k_scores_are_split_by_pairs_per_job(shipped, monkeypatch):
    pairs = {"surf": [f"s{i}" for i in range(12)], "EfficientNetLite0": [f"e{i}" for i in range(12)],
             "USPSMNIST": ["usps-mnist", "mnist-usps"]}
    plan = Plan(shipped)
    monkeypatch.setattr(plan, "batched_pairs", lambda fs: pairs.get(fs, []))
    rules = {f"score_pairs_{fs}{part}": share for fs, part, share in plan.score_pair_rules()}
    # the shipped split: SURF's and EfficientNet-Lite0's 12 pairs in two jobs of 6, USPS <-> MNIST's 2 in one
    assert shipped["model_selection"]["pairs_per_job"] == {"surf": 6, "EfficientNetLite0": 6}
    assert sorted(rules) == ["score_pairs_EfficientNetLite0_part1of2", "score_pairs_EfficientNetLite0_part2of2",
                             "score_pairs_USPSMNIST", "score_pairs_surf_part1of2", "score_pairs_surf_part2of2"]
    assert rules["score_pairs_surf_part1of2"] == pairs["surf"][:6] and rules["score_pairs_surf_part2of2"] == pairs[
        "surf"][6:]
    assert rules["score_pairs_USPSMNIST"] == pairs["USPSMNIST"]
    # at most so many pairs a job, as even as they divide, every pair in one job; a feature set not named: one
    config = copy.deepcopy(shipped)
    config["model_selection"]["pairs_per_job"] = {"surf": 5}
    plan = Plan(config)
    monkeypatch.setattr(plan, "batched_pairs", lambda fs: pairs.get(fs, []))
    shares = plan.pair_shares("surf")
    assert [part for part, _ in shares] == ["_part1of3", "_part2of3", "_part3of3"]
    assert [len(share) for _, share in shares] == [4, 4, 4]
    assert [p for _, share in shares for p in share] == pairs["surf"]
    assert plan.pair_shares("EfficientNetLite0") == [("", pairs["EfficientNetLite0"])]


def test_pairs_per_job_names_a_configured_feature_set():
    config = load_yaml(REPO / "config.yaml")
    ms = config["model_selection"]
    with pytest.raises(ConfigError, match=r"model_selection\.pairs_per_job\.surff: unknown feature set"):
        validated({**config, "model_selection": {**ms, "pairs_per_job": {"surff": 6}}})
    with pytest.raises(ConfigError, match=r"model_selection\.pairs_per_job\.surf: 0 is less than the minimum of 1"):
        validated({**config, "model_selection": {**ms, "pairs_per_job": {"surf": 0}}})


def test_the_data_families_inputs_and_targets(shipped, tmp_path, monkeypatch):
    # every family's domains present (a stand-in for the files), the regression family's file not yet
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OTFS_SHIFT_MIRROR", raising=False)
    plan = Plan(shipped)
    monkeypatch.setattr(plan, "local_domains", lambda fs: list(plan.fs_domains(fs)))
    families, board, ms = shipped["shift"]["families"], shipped["leaderboard"], shipped["model_selection"]
    assert plan.shift_families() == list(families) and plan.shift_feature_sets("wifi") == families["wifi"]
    pairs = plan.fs_pairs("wine")
    assert plan.shift_inputs("rankings", "wine") == [f"results/runs/wine/ranking/{r}/{p}.json"
                                                     for r in board["rankers"] for p in pairs]
    assert plan.shift_inputs("k_selection", "wine") == [
        f"results/runs/wine/model_selection/{r}/{ms['grid']}/{p}.tsv" for r in ms["rankers"] for p in pairs]
    assert sorted(pairs) == ["red-white", "white-red"]
    aggregates = plan.shift_inputs("aggregates", "amazon400")
    adapters = plan.applicable_adapters("amazon400", board["adapters"])
    assert len(aggregates) == len(board["rankers"]) * len(adapters) and len(adapters) < len(board["adapters"])
    assert aggregates[0] == f"results/aggregate/amazon400/all/{board['rankers'][0]}/{adapters[0]}/families/long.tsv"
    with pytest.raises(ValueError, match="unknown kind of a family's inputs 'curves'"):
        plan.shift_inputs("curves", "wine")
    verdict = "results/leaderboard/verdict.md"
    assert plan.regression_families() == [] and plan.shift_available_targets()[-1] == verdict
    assert plan.shift_verdict_inputs("k_selection") == [f"results/shift/{f}/k_selection/choices.parquet"
                                                        for f in families]
    # the corn spectra acquired: the regression family joins the verdict's inputs and the targets
    corn = tmp_path / plan.regression_file("corn")
    corn.parent.mkdir(parents=True)
    corn.write_bytes(b"")
    responses = shipped["shift"]["regression"]["corn"]["responses"]
    assert Plan(shipped).regression_families() == ["corn"]
    assert plan.regression_outputs("corn") == [f"results/shift/corn/{r}/results_long.parquet" for r in responses]
    assert plan.shift_verdict_inputs("leaderboard")[-len(responses):] == plan.regression_outputs("corn")
    # no family with data and no regression file: nothing to build, not even the verdict
    corn.unlink()
    monkeypatch.setattr(plan, "local_domains", lambda fs: [])
    assert plan.shift_families() == [] and plan.shift_available_targets() == []


def test_the_leaderboards_choice_of_ks_and_recommendations_inputs(shipped, monkeypatch):
    plan = Plan(shipped)
    monkeypatch.setattr(plan, "local_domains", lambda fs: list(plan.fs_domains(fs)))
    board, ms, rec = shipped["leaderboard"], shipped["model_selection"], shipped["recommend"]
    assert plan.available_pairs("surf") == plan.fs_pairs("surf") and len(plan.fs_pairs("surf")) == 12
    assert plan.leaderboard_feature_sets() == board["feature_sets"]
    rankings = plan.leaderboard_inputs("rankings")
    assert len(rankings) == sum(len(plan.fs_pairs(fs)) for fs in board["feature_sets"]) * len(board["rankers"])
    assert len(plan.leaderboard_inputs("aggregates")) == len(board["feature_sets"]) * len(board["rankers"]) * len(
        board["adapters"])
    with pytest.raises(ValueError, match="unknown kind of the leaderboard's inputs"):
        plan.leaderboard_inputs("curves")
    tables = plan.model_selection_pair_tables()
    assert tables[0] == f"results/runs/{ms['feature_sets'][0]}/model_selection/{ms['rankers'][0]}/{ms['grid']}/" \
                        f"{plan.fs_pairs(ms['feature_sets'][0])[0]}.tsv"
    # the recommendation: its rankers and scorers by default those of the choice of k
    assert rec["rankers"] is None and plan.recommend_rankers == ms["rankers"]
    params = plan.recommend_selector_params()
    assert params["scorers"] == plan.k_rules_of_kind("scorer") and "IW" in params["scorers"]
    assert "shift-test" in plan.k_rules_of_kind("data") and "shift-test" not in params["scorers"]
    assert params["n_features_grid"] == list(shipped["grids"][ms["grid"]]["feature_counts"])
    families = plan.recommend_evaluation_families()
    assert families["surf"] == "surf" and families["wifi_t1t3"] == "wifi" and families["news_rec_sci"] == "news"
    assert len(plan.recommend_task_summaries()) == sum(len(plan.fs_pairs(fs)) for fs in families)
    assert plan.recommend_task_tables("wine", "red-white") == [
        f"results/runs/wine/model_selection/{r}/{ms['grid']}/red-white.tsv" for r in ms["rankers"]]
    assert plan.recommend_evaluation_ready()
    assert plan.recommend_pair_outputs("md")[0].startswith(f"results/recommend/{ms['feature_sets'][0]}/")
    # fewer than three families with data: no evaluation
    monkeypatch.setattr(plan, "local_domains", lambda fs: list(plan.fs_domains(fs)) if fs in ("wine", "heart") else [])
    assert set(plan.recommend_evaluation_families().values()) == {"wine", "heart"}
    assert not plan.recommend_evaluation_ready()


def test_the_points_of_all_features_where_the_grid_has_d(shipped, in_repo):
    plan = Plan(shipped)
    grids = shipped["grids"]
    assert "d" in grids["leaderboard"]["feature_counts"] and plan.grid_reads_d("surf", "leaderboard")
    assert plan.all_features_ends("surf", "leaderboard", ["amazon-dslr"]) == [
        "results/runs/surf/all_features/leaderboard/amazon-dslr.json"]
    halves = Plan({**shipped, "grids": {**grids, "leaderboard": {**grids["leaderboard"], "feature_counts": ["d/4", "d/2"]}}})
    assert not halves.grid_reads_d("surf", "leaderboard") and halves.all_features_ends("surf", "leaderboard", ["x"]) == []


def test_the_wda_experiments_inputs_and_parameters(shipped):
    from otfs_workflow.plan import WDA_EVAL_KEYS

    plan, wda = Plan(shipped), shipped["wda"]
    assert plan.uci_raw("iris") == [] and plan.uci_raw("usps") == ["data/uci/raw/usps/zip.train.gz",
                                                                    "data/uci/raw/usps/zip.test.gz"]
    assert list(plan.wda_eval_cfg()) == list(WDA_EVAL_KEYS) and "figure2" in plan.wda_eval_cfg(("figure2",))
    variant = next(iter(wda["ablation"]["variants"]))
    cfg = plan.wda_ablation_cfg(variant)
    assert list(cfg["ablation"]["variants"]) == [variant] and cfg["methods"] == wda["methods"]
    runs, notes = plan.wda_ablation_datasets()
    assert notes == [] and len(plan.wda_ablation_runs()) == sum(len(d) for d in runs.values())
    assert plan.wda_ablation_table1_runs() == [f"results/wda/runs/{d}/WDA.tsv" for d in wda["ablation"]["datasets"]]
    fs = wda["office"]["feature_set"]
    assert len(plan.wda_office_inputs()) == len(wda["office"]["adapters"]) * len(plan.fs_pairs(fs))
    # a variant whose own data sets are none of the ablation's is left out, with a note naming it
    ablation = {**wda["ablation"], "variants": {**wda["ablation"]["variants"], "mine": {"datasets": ["isolet"]}}}
    narrowed = Plan({**shipped, "wda": {**wda, "ablation": ablation, "methods": {"PCA": {}}}})
    runs, notes = narrowed.wda_ablation_datasets()
    assert runs["mine"] == [] and notes == [f"wda.ablation.variants.mine: its datasets ['isolet'] are not among "
                                            f"wda.ablation.datasets {wda['ablation']['datasets']}: left out"]
    assert narrowed.wda_ablation_table1_runs() == []


def test_what_the_paper_targets_read_and_how_many_iterations_each_ranking_ranks(shipped, monkeypatch):
    from otfs_workflow.plan import MULTI_FS, PER_FS, TOYS

    plan = Plan(shipped)
    monkeypatch.setattr(plan, "local_domains", lambda fs: list(plan.fs_domains(fs)))
    board, ms, n = shipped["leaderboard"], shipped["model_selection"], shipped["protocol"]["iterations"]
    shift_sets = plan.shift_data_feature_sets()
    assert {"wine", "amazon5000", "wifi_t1t3"} <= shift_sets and "surf" not in shift_sets
    # the paper's ranker on every iteration; a shift feature set on the first that its grids read
    assert plan.ranking_iterations("surf", "ot") == list(range(n))
    reads = max(shipped["grids"][g]["iterations"] for g in (shipped["shift"]["grid"], ms["grid"]))
    assert plan.ranking_iterations("wine") == {"ranked": list(range(reads)), "protocol": n}
    # a ranker only the leaderboard and the choice of k read, on the images: their grids' iterations
    zoo = next(r for r in board["rankers"] if r not in plan.all_iteration_rankers())
    assert "surf" in board["feature_sets"] and plan.ranking_iterations("surf", zoo)["ranked"] == list(
        range(shipped["grids"][board["grid"]]["iterations"]))
    assert plan.batched_pairs("wine") == [] and plan.batched_pairs("surf") == plan.fs_pairs("surf")
    batched = plan.pair_batched_rankings()
    assert zoo in batched["surf"] and "ot" not in batched["surf"] and "wine" not in batched
    assert plan.model_selection_rankers() == ms["rankers"]
    # the targets' files
    assert plan.target_files("paper", "figure5") == ["results/paper/figure5/figure5.pdf",
                                                     "results/paper/figure5/figure5.png"]
    assert plan.target_files("available", "table1")[:2] == ["results/available/table1/surf.csv",
                                                            "results/available/table1/surf.tex"]
    assert not any(fs in shift_sets for fs in plan.per_fs_sets("available", "table1"))
    assert len(plan.all_target_files("paper")) == sum(len(plan.target_files("paper", t))
                                                      for t in [*PER_FS, *MULTI_FS, *TOYS])
    aggregates = plan.target_aggregates("paper")
    assert len(aggregates) == len(set(aggregates)) and aggregates[0] == plan.agg(
        "paper", plan.per_fs_sets("paper", "table1")[0], adapter=shipped["targets"]["table1"]["adapters"][0],
        grid="table1")


def test_the_captions_and_the_files_all_reads(shipped, in_repo, monkeypatch):
    monkeypatch.setenv("OTFS_DATA_MIRROR", str(mirror_dir()))
    plan = Plan(shipped)
    about = plan.fs_about("surf", "paper")
    assert about.startswith("Feature set **surf** (dataset office-caltech; domains amazon, caltech10, dslr, webcam; "
                            "d = 800): the paper's SURF bag of words (released features); preprocessing ")
    assert plan.fs_title("surf", "paper") == "SURF (d = 800)"
    caption = plan.run_caption(["surf"], "numpy 2")
    assert caption.startswith(f"{shipped['protocol']['iterations']} iterations per pair") and caption.endswith(
        "Versions: numpy 2.")
    notes = plan.feature_count_notes()  # wine has d = 11: the paper's d/32 gives 0
    assert plan.count_notes("surf") == [] and plan.count_notes("wine") == [n for n in notes if "'wine'" in n] != []
    staged = plan.staged_files()
    assert "data/raw/office-caltech/surf/dslr.mat" in staged and len(staged) == len(set(staged))
    assert plan.feature_tables("paper")[0].endswith("/features.tsv")
    assert all(f.endswith(".comparison.csv") for f in plan.comparison_files("paper"))
    # what `all` and `available` build: the paper's set with the related experiments' files, the other with the
    # data families' (none without their files), each with the tables, the comparisons and the clinical study
    from otfs_workflow.plan import CLINICAL_TARGETS

    paper = plan.main_target_files("paper", related=lambda: ["results/wda/table1.csv"])
    assert paper[:len(plan.all_target_files("paper"))] == plan.all_target_files("paper")
    assert paper[-1] == "results/wda/table1.csv" and CLINICAL_TARGETS["figure4"][0] in paper
    monkeypatch.setattr(plan, "shift_available_targets", lambda: ["results/leaderboard/verdict.md"])
    available = plan.main_target_files("available", related=lambda: pytest.fail("available builds no related target"))
    assert available[-1] == "results/leaderboard/verdict.md" and "results/available/results_long.tsv" in available


def test_a_users_feature_sets_outputs_go_to_a_report_category_of_their_own(shipped):
    config = copy.deepcopy(shipped)
    config["feature_sets"]["mine"] = {**config["feature_sets"]["wine"]}
    plan = Plan(config)
    stem = "results/paper/table1/{feature_set}"
    outputs = plan.table_outputs(stem, "../report/table1.rst", "Tables", "Table 1")
    assert list(outputs) == ["csv", "tex", "md", "comparison"] and outputs["tex"] == f"{stem}.tex"
    category = outputs["csv"].flags["report"].category
    assert category(SimpleNamespace(feature_set="surf")) == "Tables"
    assert category(SimpleNamespace(feature_set="mine")) == "Feature set mine (dataset wine-quality)"
    assert outputs["comparison"].flags["report"].caption.endswith("../report/comparison.rst")
    curves = plan.curve_outputs("results/paper/figure7/figure7", "../report/figure7.rst", "Figures", "Figure 7")
    assert list(curves) == ["pdf", "png", "csv"] and curves["png"].flags["report"].category == "Figures"


def test_the_related_experiments_runs_and_parameters(shipped):
    from otfs_workflow.plan import RELATED_KEYS

    plan, boosting = Plan(shipped), shipped["boosting"]
    for section in ("boosting", "invariance", "semfs"):
        assert list(plan.related_params(section)) == list(RELATED_KEYS[section])
        assert plan.related_runs(section) and all(f.startswith(f"results/{section}/runs/")
                                                  for f in plan.related_runs(section))
    assert len(plan.related_runs("boosting")) == len(boosting["pairs"]) * len(boosting["tasks"]) * boosting[
        "repetitions"]
    assert plan.related_runs("invariance") == [f"results/invariance/runs/{shipped['invariance']['feature_set']}/"
                                               f"{p}.json" for p in plan.fs_pairs(shipped["invariance"]["feature_set"])]
    task = boosting["tasks"][0]
    assert plan.boosting_task(task["name"]) == task
    with pytest.raises(ValueError, match="no runs of a related experiment 'wda'"):
        plan.related_runs("wda")
    assert plan.clinical_user_table() == ({} if shipped["clinical"]["data"] == "synthetic"
                                          else {"table": shipped["clinical"]["data"]})


def test_the_clinical_data_check_names_a_missing_table_and_counts_beyond_its_width(shipped, tmp_path):
    from otfs_workflow.config import ConfigError

    config = copy.deepcopy(shipped)
    config["clinical"].update(data="synthetic", feature_counts=[1, config["clinical"]["synthetic"]["n_features"]])
    Plan(config).check_clinical_data()  # within [1, d] of the generated table
    config["clinical"]["feature_counts"] = [1, config["clinical"]["synthetic"]["n_features"] + 1]
    with pytest.raises(ConfigError, match=r"clinical.feature_counts\[1\].*clinical.synthetic.n_features"):
        Plan(config).check_clinical_data()
    config["clinical"].update(data=str(tmp_path / "absent.csv"), feature_counts=[1, 3])
    with pytest.raises(WorkflowError, match="clinical.data: voxel table .*absent.csv' not found"):
        Plan(config).check_clinical_data()
    table = tmp_path / "voxels.csv"
    table.write_text("exam,domain,label,f0,f1\n")  # d = 2: the header alone decides
    config["clinical"]["data"] = str(table)
    with pytest.raises(ConfigError, match=r"clinical.feature_counts\[1\]: 3 gives 3 features, outside \[1, 2\] "
                                          r"\(d = 2, the feature columns of .*voxels.csv\)"):
        Plan(config).check_clinical_data()


def test_a_families_target_names_what_is_missing_where_no_pair_has_data(shipped, monkeypatch):
    plan = Plan(shipped)
    family = next(iter(shipped["shift"]["families"]))
    targets = plan.shift_family_targets(family)
    monkeypatch.setattr(plan, "local_domains", lambda fs: list(plan.fs_domains(fs)))
    assert targets(SimpleNamespace()) == plan.shift_targets([family])
    monkeypatch.setattr(plan, "local_domains", lambda fs: [])
    with pytest.raises(WorkflowError, match=rf"shift_{family}: none of the feature sets .*\(OTFS_SHIFT_MIRROR\)"):
        targets(SimpleNamespace())


def test_a_reporter_flags_its_outputs_for_the_report_with_their_captions():
    from otfs_workflow.plan import reporter

    out = reporter("results/shift/{family}", "Data families", "leaderboard_", "{family}")("table", "csv")
    assert str(out) == "results/shift/{family}/table.csv" and out.flags["report"].caption.endswith(
        "../report/leaderboard_table.rst")
    assert out.flags["report"].category == "Data families" and out.flags["report"].subcategory == "{family}"
    other = reporter("results/leaderboard", "Feature-shift benchmark", "leaderboard_")("cd", "png", "cd")
    assert str(other) == "results/leaderboard/cd.png" and other.flags["report"].subcategory is None


def test_the_rule_files_declare_and_the_planning_module_computes():
    """No rule file defines a function (input functions, targets and checks are the planning module's, tested
    here), and each related experiment is one file, workflow/rules/<name>.smk, with its target rule <name>."""
    import re

    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    defined = [f"{f.name}:{i}" for f in files for i, line in enumerate(f.read_text().splitlines(), 1)
               if re.match(r"\s*(async\s+)?def\s", line)]
    assert not defined, f"functions defined in rule files: {defined}; make them methods of otfs_workflow.plan.Plan"
    experiments = re.search(r"RELATED_EXPERIMENTS = \[(.*?)\]", (REPO / "Snakefile").read_text(), re.S).group(1)
    for name in re.findall(r'"(\w+)"', experiments):
        assert re.search(rf"^rule {name}:", (REPO / "workflow" / "rules" / f"{name}.smk").read_text(), re.M), name
    assert not list((REPO / "workflow" / "rules").glob("*_common.smk"))


def test_an_image_domain_is_present_where_each_of_its_images_is_in_a_searched_folder(shipped, tmp_path, monkeypatch):
    # a manifest of two domains' images: a domain counts as present where every one of its files is in the local
    # folder or a mirror (the other domain's files play no part), and absent where one file is in none or the
    # manifest lists no image of it
    monkeypatch.chdir(tmp_path)
    files = {"images/a/cat/1.jpg": "1", "images/a/dog/2.jpg": "2", "images/b/cat/3.jpg": "3"}
    manifest = tmp_path / "images.tsv"
    manifest.write_text("# class_names: cat,dog\npath\tgit_blob_sha1\n"
                        + "".join(f"{p}\t{'0' * 40}\n" for p in files))
    mirror = tmp_path / "mirror"
    for rel in ["images/a/cat/1.jpg", "images/b/cat/3.jpg"]:
        (mirror / rel).parent.mkdir(parents=True, exist_ok=True)
        (mirror / rel).write_text("x")
    (tmp_path / "local" / "images" / "a" / "dog").mkdir(parents=True)
    (tmp_path / "local" / "images" / "a" / "dog" / "2.jpg").write_text("x")
    monkeypatch.setenv("OTFS_TEST_IMAGES", str(mirror))
    config = copy.deepcopy(shipped)
    config["datasets"]["pics"] = {**config["datasets"]["office-caltech"], "image_manifest": str(manifest),
                                  "local_dir": str(tmp_path / "local"), "mirror_env": "OTFS_TEST_IMAGES",
                                  "mirrors": [], "domains": ["a", "b", "c"]}
    plan = Plan(config)
    assert plan._images_present_now("pics", "a") and plan._images_present_now("pics", "b")
    assert not plan._images_present_now("pics", "c")  # no image of it in the manifest
    (mirror / "images" / "b" / "cat" / "3.jpg").unlink()
    assert not Plan(config)._images_present_now("pics", "b")
    assert Plan(config)._images_present_now("pics", "a")
