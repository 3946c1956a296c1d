"""Non-linear domain adaptation with boosting (otfs.domain_classifiers._boosting, Becker et al.)."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.tree import DecisionTreeRegressor

from otfs.domain_classifiers._boosting import DomainAdaptationBoosting, _TaskData, _TreeBuilder, bin_edges


def _binary(n, d, rng, shift=None):
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    return (X + shift if shift is not None else X), y


@pytest.mark.parametrize(("depth", "min_leaf"), [(1, 1), (3, 1), (3, 10)])
def test_one_task_is_ordinary_boosting(depth, min_leaf):
    """With one task: weighted least-squares trees (scikit-learn's) and the same line search, step for step."""
    rng = np.random.default_rng(1)
    X, y = _binary(400, 6, rng)
    model = DomainAdaptationBoosting(n_estimators=30, max_depth=depth, min_samples_leaf=min_leaf,
                                     max_bins=10_000).fit(X, y)
    r = 2.0 * y - 1
    f = np.zeros(len(y))
    for _ in range(30):
        w = np.exp(-r * f)
        w /= w.max()
        h = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=min_leaf, random_state=0).fit(
            X, r, sample_weight=w).predict(X)
        step = minimize_scalar(lambda a, w=w, h=h: float(np.dot(w, np.exp(-a * r * h))), bounds=(0, 100),
                               method="bounded", options={"xatol": 1e-10}).x
        f += 0.1 * step * h
    np.testing.assert_allclose(model.decision_function(X), f, atol=1e-6)
    assert np.all(np.diff(model.train_loss_) <= 1e-12)  # the line search never increases the loss
    assert model.train_loss_[-1] < 0.7 * model.train_loss_[0]


def test_thresholds_recover_a_per_feature_shift():
    rng = np.random.default_rng(0)
    shift = np.array([1.5, -1.0, 0.0, 0.5, 2.0])
    Xs = rng.normal(size=(400, 5))
    ys = (Xs[:, 0] > 0.3).astype(int)
    Xt = rng.normal(size=(100, 5))
    yt = (Xt[:, 0] > 0.3).astype(int)
    Xt = Xt + shift
    X, y = np.vstack([Xs, Xt]), np.r_[ys, yt]
    domain = np.r_[["source"] * 400, ["target"] * 100]
    model = DomainAdaptationBoosting(n_estimators=20, max_depth=1).fit(X, y, sample_domain=domain)
    assert model.domains_.tolist() == ["source", "target"]
    th = model.thresholds(0)  # every split is on the informative feature
    assert th.shape == (20, 2)
    assert abs(np.median(th[:, 0]) - 0.3) < 0.15
    assert abs(np.median(th[:, 1] - th[:, 0]) - 1.5) < 0.15
    acc_own = np.mean(model.predict(Xt, np.full(100, "target")) == yt)
    acc_source = np.mean(model.predict(Xt, np.full(100, "source")) == yt)
    assert acc_own > 0.9 > 0.6 > acc_source  # the source thresholds misread the shifted target
    with pytest.raises(ValueError, match="not seen in fit"):
        model.predict(Xt, np.full(100, "other"))


def test_multi_task_split_is_the_exhaustive_optimum():
    """The shared-leaf split search against every pair of per-task thresholds on small problems."""
    rng = np.random.default_rng(0)
    for _ in range(40):
        d, ns, nt = 3, 30, 12
        Xs, Xt = rng.normal(size=(ns, d)), rng.normal(size=(nt, d)) + rng.normal(size=d)
        rs, rt = np.where(rng.random(ns) < 0.5, 1.0, -1.0), np.where(rng.random(nt) < 0.5, 1.0, -1.0)
        ws, wt = rng.random(ns), rng.random(nt)
        builder = _TreeBuilder([_TaskData(Xs, 64), _TaskData(Xt, 64)], [ws, wt], [rs, rt], 1, 1,
                               np.linspace(-1, 1, 9), 2)
        node = builder.build([np.arange(ns), np.arange(nt)])[0]
        W, S = ws.sum() + wt.sum(), ws @ rs + wt @ rt

        def gain(ls, lt):
            nl = ls.sum() + lt.sum()
            if nl in (0, ns + nt):
                return -np.inf
            WL, SL = ws[ls].sum() + wt[lt].sum(), (ws * rs)[ls].sum() + (wt * rt)[lt].sum()
            return SL**2 / WL + (S - SL) ** 2 / (W - WL) - S**2 / W

        best = max(gain(Xs[:, j] <= a, Xt[:, j] <= b) for j in range(d)
                   for a in np.r_[-np.inf, Xs[:, j]] for b in np.r_[-np.inf, Xt[:, j]])
        f, thr = node[0], node[1]
        assert f >= 0
        assert gain(Xs[:, f] <= thr[0], Xt[:, f] <= thr[1]) == pytest.approx(best, rel=1e-9)


def test_bin_edges_exact_then_quantiles():
    x = np.array([3.0, 1.0, 2.0, 2.0])
    np.testing.assert_array_equal(bin_edges(x, 8), [1.5, 2.5])
    assert bin_edges(np.ones(5), 8).size == 0
    edges = bin_edges(np.random.default_rng(0).normal(size=1000), 16)
    assert edges.size <= 15 and np.all(np.diff(edges) > 0)


def test_contract_and_errors():
    from sklearn.base import clone

    rng = np.random.default_rng(2)
    X, y = _binary(120, 4, rng)
    X_copy = X.copy()
    model = DomainAdaptationBoosting(n_estimators=5)
    assert clone(model).get_params() == model.get_params()
    assert model.fit(X, y) is model
    np.testing.assert_array_equal(X, X_copy)
    labels = np.where(y == 1, "pos", "neg")
    pred = DomainAdaptationBoosting(n_estimators=5).fit(X, labels).predict(X)
    assert set(pred) <= {"neg", "pos"}
    with pytest.raises(ValueError, match="binary"):
        DomainAdaptationBoosting(n_estimators=2).fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="sample_domain"):
        DomainAdaptationBoosting(n_estimators=2).fit(X, y, sample_domain=np.zeros(3))
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DomainAdaptationBoosting(n_estimators=2).fit(X_nan, y)


def test_task_samples_balanced_and_errors():
    from otfs_workflow.stages.boosting import nested_labelled, task_samples

    names = ["a", "b", "c", "d"]
    y = np.repeat([1, 2, 3, 4], [10, 4, 6, 3])
    rng = np.random.default_rng(0)
    idx, lab = task_samples(y, names, {"name": "t", "positive": ["a"]}, rng)
    assert (lab == 1).sum() == (lab == -1).sum() == 10  # a (10) against b, c, d (13) drawn down to 10
    assert set(y[idx[lab == 1]]) == {1} and set(y[idx[lab == -1]]) <= {2, 3, 4}
    idx, lab = task_samples(y, names, {"name": "t", "positive": ["a", "b"], "negative": ["d"]}, rng)
    assert (lab == 1).sum() == 3 and set(y[idx[lab == -1]]) == {4}
    with pytest.raises(ValueError, match=r"task 't': unknown classes \['e'\]"):
        task_samples(y, names, {"name": "t", "positive": ["e"]}, rng)
    with pytest.raises(ValueError, match="both positive and negative"):
        task_samples(y, names, {"name": "t", "positive": ["a"], "negative": ["a"]}, rng)
    labels = np.r_[np.ones(20), -np.ones(20)]
    draws = nested_labelled(labels, [4, 10, 20], np.random.default_rng(1))
    assert set(draws[4]) <= set(draws[10]) <= set(draws[20])
    assert [(labels[draws[n]] == 1).sum() for n in (4, 10, 20)] == [2, 5, 10]


def test_config_names_bad_boosting_entries(tmp_path):
    from otfs_workflow.config import ConfigError, load_yaml, validate_config

    cfg = load_yaml("config.yaml")
    cfg["boosting"]["pairs"] = ["amazon-amazon", "amazon-nowhere"]
    cfg["boosting"]["tasks"] = [{"name": "x", "positive": ["bike"]}, {"name": "x", "positive": ["mug"]}]
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, "workflow/schemas/config.schema.yaml")
    text = str(err.value)
    assert "boosting.pairs: 'amazon-amazon'" in text and "'amazon-nowhere'" in text
    assert "boosting.tasks: the name 'x' is used twice" in text
    cfg = load_yaml("config.yaml")
    cfg["protocol"]["pairs"] = ["amazon-dslr"]  # the boosting pair's ranking is built on demand: no error for it
    cfg["semfs"]["pairs"] = ["amazon-mars"]
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, "workflow/schemas/config.schema.yaml")
    assert "semfs.pairs: 'amazon-mars' is not a pair of distinct domains" in str(err.value)
    assert "boosting" not in str(err.value)
    cfg = load_yaml("config.yaml")
    cfg["boosting"]["model"]["n_estimator"] = 10  # a typo
    with pytest.raises(ConfigError, match="n_estimator"):
        validate_config(cfg, "workflow/schemas/config.schema.yaml")
    cfg = load_yaml("config.yaml")
    cfg["boosting"]["counts"] = [10, 15]  # half per class: an odd count cannot be drawn
    with pytest.raises(ConfigError, match=r"boosting\.counts\.1"):
        validate_config(cfg, "workflow/schemas/config.schema.yaml")


def test_registry_and_unknown_method():
    from otfs.domain_classifiers import DOMAIN_CLASSIFIERS, register_domain_classifier
    from otfs_workflow.stages.boosting import _domain_classifier

    assert DOMAIN_CLASSIFIERS["DA boosting"] is DomainAdaptationBoosting
    assert isinstance(_domain_classifier("DA boosting", {"n_estimators": 3}), DomainAdaptationBoosting)
    with pytest.raises(ValueError, match=r"boosting.methods: unknown domain classifier 'Chapelle'; "
                                         r"registered domain classifiers: \['DA boosting'"):
        _domain_classifier("Chapelle", {})
    with pytest.raises(ValueError, match="already registered"):
        register_domain_classifier("DA boosting")(object)
