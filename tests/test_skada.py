"""skada as a partner: the rankers inside skada's pipelines, skada's estimators as adapters by name, and
skada's metadata routing kept out of every other result."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from .conftest import REPO, require_module, shifted_domains

skada = require_module("skada", "skada", module_level=True)

import sklearn  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402

from otfs._skada import routing  # noqa: E402
from otfs.adapters import ADAPTERS, get_adapter  # noqa: E402
from otfs.classification import accuracy_curve  # noqa: E402
from otfs.rankers._base import FEATURE_RANKERS, OTFeatureRanker  # noqa: E402


def _stacked(Xs, ys, Xt):
    X = np.vstack([Xs, Xt])
    y = np.concatenate([ys, np.full(len(Xt), -1)])
    sample_domain = np.concatenate([np.ones(len(Xs), dtype=int), np.full(len(Xt), -2)])
    return X, y, sample_domain


@pytest.fixture(autouse=True)
def routing_stays_off():
    """Every test here starts and ends with scikit-learn's metadata routing off (as otfs leaves it)."""
    sklearn.set_config(enable_metadata_routing=False)
    yield
    assert sklearn.get_config()["enable_metadata_routing"] is False


@pytest.mark.parametrize("name", ["ot", "ks", "wasserstein1d", "mmd", "domain-auc", "source-anova", "random"])
def test_a_ranker_in_skadas_pipeline_ranks_source_against_target(name):
    # make_da_pipeline routes sample_domain to the ranker: the features it keeps are those of the direct call
    Xs, ys, Xt, yt, shifted = shifted_domains(d=20, k=4)

    def ranker():
        r = FEATURE_RANKERS[name](n_features_to_select=8)
        return r.set_params(random_state=0) if "random_state" in r.get_params() else r

    direct = ranker().fit(Xs, ys, X_target=Xt)
    X, y, sample_domain = _stacked(Xs, ys, Xt)
    with routing(), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # "got no X_target; scoring X against itself" would fail here
        pipe = skada.make_da_pipeline(ranker(), skada.CORALAdapter(), KNeighborsClassifier(1))
        pipe.fit(X, y, sample_domain=sample_domain)
        pipe.score(Xt, yt, sample_domain=np.full(len(Xt), -2))
    fitted = pipe[0].get_estimator()
    np.testing.assert_array_equal(fitted.support_, direct.support_)
    np.testing.assert_array_equal(fitted.scores_, direct.scores_)
    if name != "random":
        assert not fitted.support_[shifted].all()  # ranking X against itself would not see the shift at all


def test_skadas_pipeline_gives_the_projects_accuracy_on_a_surf_pair(tmp_path, mirror):
    # the project's path (cache, Algorithm 1, Algorithm 2, classification with skada's CORAL as adapter
    # skada:CORALAdapter) and skada's pipeline (OTFeatureRanker -> CORALAdapter -> 1-NN with sample_domain)
    # on the same source subset of amazon -> dslr, iteration 0, at d/8 = 100 features
    from otfs_workflow.stages import cache as cache_stage
    from otfs_workflow.stages import classification, ranking

    manifest = REPO / "data" / "manifests" / "office-caltech.tsv"
    fs_cfg = {"dataset": "office-caltech", "folder": "surf", "preprocessing": ["row_sum_normalize", "zscore"]}
    caches = {}
    for domain in ("amazon", "dslr"):
        caches[domain] = str(tmp_path / f"{domain}.h5")
        cache_stage.run("surf", domain, fs_cfg, manifest, {f"surf/{domain}.mat": str(mirror / f"surf/{domain}.mat")},
                        caches[domain])
    rank = tmp_path / "ranking.json"
    ranking.run(caches, "surf", "amazon-dslr", "ot", iterations=[0], per_class=20, output=rank,
                ranker_params={"tie_break": "lowest", "emd_max_iter": 100000})
    ours = classification.run(caches, rank, "skada:CORALAdapter", "test", ["Descending"], ["d/8"],
                              tmp_path / "classification.tsv")
    from otfs_workflow.data.cache import read_domains
    from otfs_workflow.io import read_json

    subset = read_json(rank)["iterations"][0]["source_subset"]
    cache = read_domains(caches)
    src, tgt = cache.domain("amazon"), cache.domain("dslr")
    X, y, sample_domain = _stacked(src.X[subset], src.y[subset], tgt.X)
    with routing():
        pipe = skada.make_da_pipeline(OTFeatureRanker(n_features_to_select=100), skada.CORALAdapter(),
                                      KNeighborsClassifier(1))
        pipe.fit(X, y, sample_domain=sample_domain)
        accuracy = 100 * pipe.score(tgt.X, tgt.y, sample_domain=np.full(len(tgt.y), -2))
    assert ours["accuracy"].iloc[0] == pytest.approx(accuracy, abs=1e-9)
    order = np.asarray(read_json(rank)["iterations"][0]["orders"]["Descending"])
    assert set(np.flatnonzero(pipe[0].get_estimator().support_)) == set(order[:100].tolist())
    # the OT ranker changes the answer: the same pipeline on the first 100 features does worse or differently
    assert 10 < accuracy < 90


def test_skada_estimators_are_adapters_by_name():
    Xs, ys, Xt, yt, _ = shifted_domains(d=12, k=3)
    assert "skada:SubspaceAlignmentAdapter" in ADAPTERS and "skada:KMM" not in ADAPTERS
    with pytest.raises(KeyError, match=r"unknown adapter 'skada:KMM'.*did you mean 'skada:KMMReweight'"):
        ADAPTERS["skada:KMM"]
    with pytest.raises(KeyError, match=r"and skada:<name> for any estimator of skada"):
        ADAPTERS["OT4"]
    # an adapter class with the 1-NN: its adapted samples, then the project's 1-NN, as skada's own pipeline
    order = {"Descending": np.arange(12)}
    ours = accuracy_curve(Xs, ys, Xt, yt, order, [6, 12], adapter=get_adapter("skada:SubspaceAlignmentAdapter",
                                                                              n_components=4))
    X, y, sample_domain = _stacked(Xs, ys, Xt)
    for row in ours:
        n = row["n_features"]
        with routing():
            pipe = skada.make_da_pipeline(skada.SubspaceAlignmentAdapter(n_components=4), KNeighborsClassifier(1))
            pipe.fit(X[:, :n], y, sample_domain=sample_domain)
            expected = 100 * pipe.score(Xt[:, :n], yt, sample_domain=np.full(len(yt), -2))
        assert row["accuracy"] == pytest.approx(expected, abs=1e-9)
    # a factory with its classifier: predictions from skada's pipeline, classifier configurable
    adapter = get_adapter("skada:KMMReweight", classifier="logistic-regression")
    assert adapter.predicts_labels
    got = accuracy_curve(Xs, ys, Xt, yt, order, [12], adapter=adapter)[0]["accuracy"]
    with routing():
        from sklearn.linear_model import LogisticRegression

        clf = LogisticRegression(max_iter=1000).set_fit_request(sample_weight=True)
        ref = skada.KMMReweight(base_estimator=clf).fit(X, y, sample_domain=sample_domain)
        expected = 100 * np.mean(ref.predict(Xt, sample_domain=np.full(len(yt), -2)) == yt)
    assert got == pytest.approx(expected, abs=1e-9)
    # reweighting with the 1-NN would drop the weights in silence: refused, naming the way out
    with pytest.raises(ValueError, match="takes no sample_weight.*classifier: logistic-regression"):
        accuracy_curve(Xs, ys, Xt, yt, order, [12], adapter=get_adapter("skada:KMMReweight"))
    # an unknown parameter names the estimator and its parameters
    with pytest.raises(TypeError, match=r"skada:LinearOTMapping got unexpected parameter\(s\) \['regg'\]"):
        get_adapter("skada:LinearOTMapping", regg=1.0)


def test_skada_adapters_are_checked_by_the_config():
    from otfs_workflow.config import ConfigError, load_yaml, validate_config

    cfg = load_yaml(REPO / "config.yaml")
    cfg["adapters"] = {"skada:LinearOTMapping": {"reg": 1e-6}, "skada:Nope": {}, "skada:CORALAdapter": {"bogus": 1}}
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, REPO / "workflow" / "schemas" / "config.schema.yaml")
    text = str(err.value)
    assert "adapters.skada:Nope: unknown adapter 'skada:Nope'" in text
    assert "adapters.skada:CORALAdapter" in text and "['bogus']" in text
    assert "skada:LinearOTMapping" not in text.replace("adapters.skada:LinearOTMapping", "")


@pytest.mark.subprocess
def test_importing_skada_through_otfs_changes_no_other_result(tmp_path):
    # In a fresh process: a plain scikit-learn pipeline giving the OT ranker its target as documented
    # (ranker__X_target, which fails under metadata routing), before and after otfs uses skada.
    script = textwrap.dedent("""
        import numpy as np, sklearn
        from sklearn.neighbors import KNeighborsClassifier
        from sklearn.pipeline import Pipeline
        from otfs.rankers import OTFeatureRanker
        from otfs.classification import accuracy_curve
        from otfs.adapters import get_adapter

        rng = np.random.RandomState(0)
        Xs, Xt = rng.randn(60, 10), rng.randn(70, 10) + np.r_[np.zeros(7), 3 * np.ones(3)]
        ys, yt = rng.randint(3, size=60), rng.randint(3, size=70)

        def results():
            pipe = Pipeline([("ranker", OTFeatureRanker(n_features_to_select=5)), ("knn", KNeighborsClassifier(1))])
            pipe.fit(Xs, ys, ranker__X_target=Xt)
            curve = accuracy_curve(Xs, ys, Xt, yt, {"D": np.arange(10)}, [5, 10], adapter=get_adapter("OT3"))
            return pipe.predict(Xt).tolist(), [r["accuracy"] for r in curve]

        before = results()
        from otfs.k_selection._base import get_rule, score_adapted
        from otfs.classification import make_classifier
        get_adapter("skada:CORALAdapter").adapt(Xs, ys, Xt)
        score_adapted(Xs, ys, Xt, {"entropy": get_rule("entropy")}, make_classifier("knn"), 1, 0.5, 0)
        assert sklearn.get_config()["enable_metadata_routing"] is False
        assert results() == before, "a result changed once otfs had used skada"
        import sys
        assert "skada" in sys.modules  # otfs did import skada, whose import turns routing on for the process
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok"


def test_import_skada_says_how_to_install_it(monkeypatch):
    from otfs import _skada

    monkeypatch.setitem(sys.modules, "skada_missing_for_test", None)
    with pytest.raises(ImportError, match=r"otfs\[skada\]"):
        _skada.import_skada("skada_missing_for_test")
    assert Path(_skada.__file__).name == "_skada.py"


def test_the_ranker_in_skadas_pipeline_keeps_the_features_of_the_direct_call():
    # the README's skada pipeline (tests/test_docs.py runs the README itself), on generated domains: the
    # ranker, given the stacked domains and sample_domain, keeps the features of the direct call, by name
    import pandas as pd
    import skada
    from sklearn.neighbors import KNeighborsClassifier

    Xs, ys, Xt, yt, _ = shifted_domains(d=120, k=30)
    X, y, sample_domain = _stacked(Xs, ys, Xt)
    names = [f"f{i}" for i in range(X.shape[1])]
    with routing():  # importing skada turns routing on; here it is put back after the test
        pipe = skada.make_da_pipeline(OTFeatureRanker(n_features_to_select=100), skada.CORALAdapter(),
                                      KNeighborsClassifier(1))
        pipe.fit(pd.DataFrame(X, columns=names), y, sample_domain=sample_domain)
        accuracy = pipe.score(pd.DataFrame(Xt, columns=names), yt, sample_domain=np.full(len(yt), -2))
    ranker = pipe[0].get_estimator()
    direct = OTFeatureRanker(n_features_to_select=100).fit(Xs, X_target=Xt)
    np.testing.assert_array_equal(ranker.support_, direct.support_)
    assert list(ranker.get_feature_names_out()) == [names[i] for i in np.flatnonzero(direct.support_)]
    assert 0 <= accuracy <= 1
