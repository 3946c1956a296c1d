"""Zero-shot feature selection (otfs.zero_shot._semfs, Wang et al.) and its experiment's helpers."""

import numpy as np
import pytest

from otfs.zero_shot._semfs import (
    LassoSelector,
    SemanticFeatureSelector,
    SpectralSelector,
    class_attribute_matrix,
    clustering_accuracy,
)


def _planted(seed=0, n_classes=8, m=6, d=40, k=4, per_class=30):
    """Only ``k`` of ``d`` features are generated from the class attributes; the rest is noise."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_classes, m))
    y = np.repeat(np.arange(n_classes), per_class)
    informative = A[y] @ rng.normal(size=(m, k)) + 0.3 * rng.normal(size=(len(y), k))
    X = np.hstack([informative, rng.normal(size=(len(y), d - k))])
    perm = rng.permutation(d)
    return X[:, perm], y, A, np.sort(np.argsort(perm)[:k])


def _objective(X, y, A, s, W, alpha, gamma):
    """Eq. 5 written out directly."""
    Ys = A[y]
    centres = np.vstack([X[y == c].mean(axis=0) for c in np.unique(y)])
    D = np.diag(s)
    return (np.sum((Ys - X @ D @ W) ** 2) + alpha * np.sum((Ys - centres[y] @ D @ W) ** 2)
            + gamma * np.sum(W ** 2))


@pytest.mark.parametrize("alpha", [1.0, 0.0])
def test_planted_features_rank_on_top_and_objective_decreases(alpha):
    X, y, A, informative = _planted()
    sel = SemanticFeatureSelector(n_features_to_select=4, alpha=alpha, max_iter=30).fit(X, y, A)
    np.testing.assert_array_equal(np.sort(sel.order_[:4]), informative)
    np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), informative)
    assert np.all(sel.scores_ >= 0)
    trace = sel.objective_
    assert trace.size == 2 * sel.n_iter_ + 1 and sel.n_iter_ == 30
    assert np.all(np.diff(trace) <= 1e-9 * abs(trace[0]))  # every W and s update
    assert trace[-1] < trace[0]
    # the recorded objective is Eq. 5 at the returned (s, W)
    assert trace[-1] == pytest.approx(_objective(X, y, A, sel.scores_, sel.coef_, alpha, 0.1), rel=1e-9)
    assert sel.ranking_[sel.order_[0]] == 1


def test_projected_gradient_reaches_the_bounded_minimum():
    """On a quadratic whose minimum over s >= 0 has zeros: monotone decrease, s >= 0, the L-BFGS-B optimum."""
    from scipy.optimize import minimize

    from otfs.zero_shot._semfs import projected_gradient

    rng = np.random.default_rng(3)
    B = rng.normal(size=(8, 6))
    H = B.T @ B + 0.1 * np.eye(6)
    lin = rng.normal(size=6)
    f = lambda s: s @ H @ s - 2 * lin @ s  # noqa: E731
    step = 1.0 / (2.0 * np.linalg.eigvalsh(H)[-1])
    s, values = np.ones(6), []
    for _ in range(400):
        s = projected_gradient(H, lin, s, step, 1)
        values.append(f(s))
    assert np.all(s >= 0) and np.sum(s == 0) >= 1  # the bound is active
    assert np.all(np.diff(values) <= 1e-12)
    ref = minimize(f, np.ones(6), jac=lambda s: 2 * (H @ s - lin), bounds=[(0, None)] * 6, method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-12})
    np.testing.assert_allclose(s, ref.x, atol=1e-5)
    s0 = np.ones(6)
    projected_gradient(H, lin, s0, step, 5)
    np.testing.assert_array_equal(s0, np.ones(6))  # the input is not modified


def test_W_update_is_the_closed_form_of_eq8():
    X, y, A, _ = _planted(seed=1, d=12)
    sel = SemanticFeatureSelector(max_iter=1, s_steps=1).fit(X, y, A)
    s = sel.scores_
    Xbar = np.vstack([X[y == c].mean(axis=0) for c in np.unique(y)])[y]
    XD, XbD = X * s, Xbar * s
    W = np.linalg.inv(XD.T @ XD + XbD.T @ XbD + 0.1 * np.eye(12)) @ (XD.T + XbD.T) @ A[y]
    np.testing.assert_allclose(sel.coef_, W, rtol=1e-8, atol=1e-10)


def test_attributes_by_mapping_and_errors():
    y = np.array(["b", "a", "b", "a"])
    classes, A = class_attribute_matrix(y, {"a": [1, 0], "b": [0, 1], "c": [1, 1]})
    assert classes.tolist() == ["a", "b"] and A.tolist() == [[1, 0], [0, 1]]
    with pytest.raises(ValueError, match=r"no vector for the classes \['b'\]"):
        class_attribute_matrix(y, {"a": [1, 0]})
    with pytest.raises(ValueError, match="one row per class"):
        class_attribute_matrix(y, np.ones((3, 2)))
    X = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.raises(ValueError, match="finite"):
        SemanticFeatureSelector().fit(X, y, {"a": [1, np.nan], "b": [0, 1]})


@pytest.mark.filterwarnings("ignore:Graph is not fully connected")  # the planted classes are separate clusters
def test_baselines_find_the_planted_features():
    X, y, _, informative = _planted(seed=2)
    np.testing.assert_array_equal(np.sort(LassoSelector(4).fit(X, y).order_[:4]), informative)
    spectral = SpectralSelector(4, n_clusters=8, n_neighbors=10, random_state=0).fit(X)
    assert len(set(spectral.order_[:4]) & set(informative)) >= 3


def test_clustering_accuracy_is_the_best_matching():
    y = np.array([0, 0, 1, 1, 2, 2])
    assert clustering_accuracy(y, [5, 5, 7, 7, 9, 9]) == 1.0
    assert clustering_accuracy(y, [1, 1, 1, 1, 0, 0]) == pytest.approx(4 / 6)
    assert clustering_accuracy(y, [0, 1, 2, 0, 1, 2]) == pytest.approx(3 / 6)


def test_seen_unseen_split_and_attribute_table(tmp_path):
    from otfs_workflow.stages.semfs import read_attributes, seen_unseen

    seen, unseen = seen_unseen(10, 5, seed=7)
    assert sorted([*seen, *unseen]) == list(range(1, 11)) and unseen.size == 5
    assert seen_unseen(10, 5, seed=7)[1].tolist() == unseen.tolist()
    with pytest.raises(ValueError, match="n_unseen=9"):
        seen_unseen(10, 9, seed=0)
    names = ["backpack", "bike", "calculator", "headphones", "keyboard", "laptop", "monitor", "mouse", "mug",
             "projector"]
    A = read_attributes("data/attributes/office-caltech10.tsv", names)
    assert A.shape[0] == 10 and len({tuple(r) for r in A}) == 10  # every class has its own vector
    bad = tmp_path / "attrs.tsv"
    bad.write_text("class\tx\nbackpack\t1\n")
    with pytest.raises(ValueError, match=r"attrs.tsv: no attributes for the classes \['bike'"):
        read_attributes(bad, names[:2])


@pytest.mark.filterwarnings("ignore:Graph is not fully connected")  # the planted classes are separate clusters
def test_registry_runs_every_selector_and_names_unknown_ones():
    from otfs.zero_shot import ZERO_SHOT_SELECTORS, register_zero_shot_selector
    from otfs_workflow.stages.semfs import _orders

    X, y, A, _ = _planted(seed=4, d=20)
    cfg = {"methods": list(ZERO_SHOT_SELECTORS), "alpha": 1.0, "gamma": 0.1, "max_iter": 5, "s_steps": 5,
           "lasso_alpha": 0.01, "spectral": {"n_neighbors": 10, "alpha": 0.001},
           "ot_ranking": {"reg": 1.0, "norm": "log", "method": "sinkhorn", "max_iter": 1000, "tol": 1e-8}}
    assert {"SemFS", "SemFS/c", "LASSO", "Spectral", "OT ranking", "Random"} <= set(ZERO_SHOT_SELECTORS)
    orders = _orders(X, y, A, X + 0.1, cfg, seed=1)
    for name, (order, seconds) in orders.items():
        assert sorted(order.tolist()) == list(range(20)), name  # a permutation of the features
        assert seconds >= 0
    with pytest.raises(ValueError, match=r"semfs.methods: unknown zero-shot selector 'MCFS'; registered zero-shot selectors: "):
        _orders(X, y, A, X, {**cfg, "methods": ["MCFS"]}, seed=1)
    with pytest.raises(ValueError, match="already registered"):
        register_zero_shot_selector("SemFS")(lambda *a: None)
