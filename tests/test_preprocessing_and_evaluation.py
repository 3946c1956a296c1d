"""Preprocessing of the released protocol, and the 1-NN evaluation."""

import numpy as np
import pytest

from otfs.adapters import ADAPTERS, get_adapter
from otfs.classification import accuracy_curve, one_nn_accuracy
from otfs.preprocessing import apply_steps, row_sum_normalize, zscore


def test_row_sum_normalize():
    X = np.array([[1, 3, 0], [0, 0, 0], [2, 2, 4]], dtype=np.uint8)
    Y = row_sum_normalize(X)
    np.testing.assert_allclose(Y[[0, 2]].sum(1), 1.0)
    np.testing.assert_array_equal(Y[1], 0.0)  # an empty histogram stays finite
    assert X.dtype == np.uint8 and X[0, 1] == 3
    with pytest.raises(ValueError, match="non-negative"):
        row_sum_normalize(-np.ones((2, 2)))


def test_zscore_constant_feature_is_zero_not_nan():
    X = np.column_stack([np.arange(5.0), np.full(5, 7.0)])
    Z = zscore(X)
    assert np.isfinite(Z).all()
    np.testing.assert_allclose(Z[:, 0].std(), 1.0)
    np.testing.assert_array_equal(Z[:, 1], 0.0)
    np.testing.assert_array_equal(X[:, 1], 7.0)


def test_apply_steps():
    X = np.random.RandomState(0).poisson(2, size=(6, 4)).astype(float) + 1
    np.testing.assert_allclose(apply_steps(X, ["row_sum_normalize", "zscore"]),
                               zscore(row_sum_normalize(X)))
    with pytest.raises(ValueError, match="unknown preprocessing step 'whiten'"):
        apply_steps(X, ["whiten"])


def test_one_nn_accuracy_by_hand():
    Xs = np.array([[0.0], [10.0]])
    ys = np.array([1, 2])
    Xt = np.array([[1.0], [9.0], [4.0], [6.0]])
    yt = np.array([1, 2, 2, 2])
    assert one_nn_accuracy(Xs, ys, Xt, yt) == 75.0


def test_accuracy_curve_records():
    rng = np.random.RandomState(0)
    Xs, Xt = rng.randn(20, 6), rng.randn(25, 6)
    ys, yt = rng.randint(2, size=20), rng.randint(2, size=25)
    orders = {"Descending": np.arange(6), "Ascending": np.arange(6)[::-1]}
    rows = accuracy_curve(Xs, ys, Xt, yt, orders, [2, 6])
    assert [(r["order"], r["n_features"]) for r in rows] == [
        ("Descending", 2), ("Descending", 6), ("Ascending", 2), ("Ascending", 6)]
    assert rows[1]["accuracy"] == rows[3]["accuracy"]  # all features: order irrelevant
    assert rows[0]["accuracy"] == one_nn_accuracy(Xs[:, :2], ys, Xt[:, :2], yt)
    with pytest.raises(ValueError, match="not a permutation"):
        accuracy_curve(Xs, ys, Xt, yt, {"bad": [0, 0, 1, 2, 3, 4]}, [2])


def test_accuracy_curve_hands_the_adapter_the_columns_as_fancy_indexing_gives_them():
    # the curve gathers its points' columns from column-major copies; an adapter must get the very arrays
    # Xs[:, cols] of the caller's (row-major) matrix gives, values and memory layout, so that its round-off,
    # and every accuracy, stays what it was
    rng = np.random.RandomState(3)
    Xs, Xt = rng.randn(30, 50), rng.randn(40, 50)
    ys, yt = rng.randint(2, size=30), rng.randint(2, size=40)
    order = rng.permutation(50)

    class Spy:
        def __init__(self):
            self.seen = []

        def adapt(self, A, y, B):
            self.seen.append((A.copy(order="K"), A.strides, B.copy(order="K"), B.strides))
            return get_adapter("CORAL").adapt(A, y, B)

    spy = Spy()
    rows = accuracy_curve(Xs, ys, Xt, yt, {"o": order}, [1, 7, 50], adapter=spy)
    for (A, a_strides, B, b_strides), n in zip(spy.seen, [1, 7, 50], strict=True):
        want_s, want_t = Xs[:, order[:n]], Xt[:, order[:n]]
        assert (a_strides, b_strides) == (want_s.strides, want_t.strides)
        np.testing.assert_array_equal(A, want_s)
        np.testing.assert_array_equal(B, want_t)
        Zs, Zt = get_adapter("CORAL").adapt(want_s, ys, want_t)
        row = rows[[1, 7, 50].index(n)]
        assert row["accuracy"] == one_nn_accuracy(Zs, ys, Zt, yt)
    assert Xs.flags["C_CONTIGUOUS"] and Xt.flags["C_CONTIGUOUS"]  # the caller's arrays are left as they were


def test_adapter_registry():
    assert "NA" in ADAPTERS
    Xs, Xt = np.ones((3, 2)), np.zeros((4, 2))
    A, B = get_adapter("NA").adapt(Xs, [1, 2, 1], Xt)
    A[0, 0] = 5
    assert Xs[0, 0] == 1  # returns copies
    with pytest.raises(ValueError, match="unknown adapter 'XX'"):
        get_adapter("XX")


@pytest.mark.parametrize("layout", ["C", "F", "transposed"])
@pytest.mark.parametrize("axis", [0, 1])
def test_zscore_is_scikit_learns_scale_bit_for_bit(layout, axis):
    """The z-score is written out (no scikit-learn import in the ranking jobs): it must stay sklearn's."""
    import warnings

    from sklearn.preprocessing import scale

    rng = np.random.default_rng(axis)
    cases = [rng.normal(size=(37, 23)), rng.exponential(size=(40, 9)) * 1e3,
             np.hstack([rng.normal(size=(30, 4)), np.full((30, 1), 5.0)]),  # a constant column
             rng.normal(size=(25, 6)) * 1e-9 + 1e8]  # large offsets: scikit-learn's second centring
    for X in cases:
        X = np.asfortranarray(X) if layout == "F" else np.ascontiguousarray(X.T).T if layout == "transposed" else X
        before = X.copy()
        with warnings.catch_warnings(record=True) as ours_w:
            warnings.simplefilter("always")
            ours = zscore(X, axis=axis)
        with warnings.catch_warnings(record=True) as theirs_w:
            warnings.simplefilter("always")
            theirs = scale(X, axis=axis)
        assert np.array_equal(ours, theirs)
        assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]
        assert np.array_equal(X, before)
    with pytest.raises(ValueError, match="axis must be 0 or 1"):
        zscore(cases[0], axis=2)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_row_sum_normalize_is_scikit_learns_l1_normalize_bit_for_bit(layout):
    from sklearn.preprocessing import normalize

    rng = np.random.default_rng(5)
    X = rng.poisson(3.0, size=(60, 800)).astype(float)
    X[7] = 0.0  # an all-zero row stays zero
    X[9, :3] = 1e-300  # a row whose sum is below 10 eps is left as it is
    X[9, 3:] = 0.0
    X = np.asfortranarray(X) if layout == "F" else X
    before = X.copy()
    ours = row_sum_normalize(X)
    assert np.array_equal(ours, normalize(X, norm="l1", axis=1))
    assert np.array_equal(X, before) and not np.shares_memory(ours, X)
    assert np.allclose(ours[[0, 1]].sum(axis=1), 1.0) and not ours[7].any()


def test_curve_metrics_equal_scikit_learns_on_the_same_predictions():
    """balanced accuracy of the 1-NN and a second classifier's accuracy, balanced accuracy and AUC, with and
    without adaptation, against scikit-learn computed here on the same columns."""
    import warnings

    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score
    from sklearn.neighbors import KNeighborsClassifier

    from otfs.adapters import get_adapter
    from otfs.classification import accuracy_curve, balanced_accuracy

    rng = np.random.default_rng(3)
    Xs, Xt = rng.normal(size=(60, 6)), rng.normal(0.3, 1.2, size=(90, 6))
    ys = (Xs[:, 0] + 0.5 * rng.normal(size=60) > 0.6).astype(int) + 1   # imbalanced classes
    yt = (Xt[:, 0] + 0.5 * rng.normal(size=90) > 0.6).astype(int) + 1
    order = [0, 3, 1, 5, 2, 4]
    metrics = {"balanced_accuracy": True, "second_classifier": "logistic-regression"}
    for adapter in (None, get_adapter("CORAL")):
        rows = accuracy_curve(Xs, ys, Xt, yt, {"Descending": order}, [2, 6], adapter=adapter, metrics=metrics)
        for row in rows:
            cols = order[: row["n_features"]]
            A, B = (Xs[:, cols], Xt[:, cols]) if adapter is None else adapter.adapt(Xs[:, cols], ys, Xt[:, cols])
            pred = KNeighborsClassifier(1, algorithm="brute").fit(A, ys).predict(B)
            assert row["accuracy"] == pytest.approx(100 * np.mean(pred == yt), abs=1e-12)
            assert row["balanced_accuracy"] == pytest.approx(100 * balanced_accuracy_score(yt, pred), abs=1e-12)
            lr = LogisticRegression(max_iter=1000).fit(A, ys)
            assert row["second_accuracy"] == pytest.approx(100 * lr.score(B, yt), abs=1e-12)
            assert row["second_balanced_accuracy"] == pytest.approx(
                100 * balanced_accuracy_score(yt, lr.predict(B)), abs=1e-12)
            assert row["second_auc"] == pytest.approx(100 * roc_auc_score(yt, lr.predict_proba(B)[:, 1]), abs=1e-12)
    assert balanced_accuracy([1, 1, 1, 2], [1, 1, 1, 1]) == 50.0
    with pytest.raises(ValueError, match=r"metrics: unknown \['f1'\]"):
        accuracy_curve(Xs, ys, Xt, yt, {"Descending": order}, [2], metrics={"f1": True})
    # an AUC that is undefined (one target class) is NaN, with a warning, never a number
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (row,) = accuracy_curve(Xs, ys, Xt, np.ones(90, int), {"Descending": order}, [3], metrics=metrics)
    assert np.isnan(row["second_auc"]) and any("AUC undefined" in str(w.message) for w in caught)


def test_multiclass_auc_is_macro_one_vs_rest():
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from otfs.classification import second_classifier_scores

    rng = np.random.default_rng(0)
    Xs, Xt = rng.normal(size=(90, 4)), rng.normal(size=(60, 4))
    ys, yt = np.repeat([1, 2, 3], 30), np.repeat([1, 2, 3], 20)
    Xs[:, 0] += ys
    Xt[:, 0] += yt
    got = second_classifier_scores("logistic-regression", Xs, ys, Xt, yt)
    lr = LogisticRegression(max_iter=1000).fit(Xs, ys)
    assert got["second_auc"] == pytest.approx(100 * roc_auc_score(yt, lr.predict_proba(Xt), multi_class="ovr"),
                                              abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_roc_auc_is_scikit_learns_with_ties(seed):
    """The Mann–Whitney AUC against scikit-learn's trapezoids: continuous and heavily tied scores (a
    classifier's probabilities of 0 and 1, rounded scores), unbalanced labels, and the multiclass macro
    one-vs-rest mean; one class only is an error."""
    from sklearn.metrics import roc_auc_score

    from otfs.classification import roc_auc

    rng = np.random.default_rng(seed)
    y = rng.random(300) < [0.5, 0.1, 0.03, 0.5][seed]
    y[:2] = [True, False]
    for score in (rng.normal(size=300) + y, np.round(rng.normal(size=300) + y, 1),
                  (rng.random(300) < 0.3 + 0.4 * y).astype(float), np.zeros(300)):
        assert roc_auc(y, score) == pytest.approx(roc_auc_score(y, score), rel=1e-14, abs=1e-15)
    labels = rng.integers(0, 5, size=400)
    labels[:5] = np.arange(5)
    proba = rng.dirichlet(np.ones(5), size=400)
    proba[:, 2] = np.round(proba[:, 2], 2)
    proba /= proba.sum(axis=1, keepdims=True)
    macro = np.mean([roc_auc(labels == c, proba[:, c]) for c in range(5)])
    assert macro == pytest.approx(roc_auc_score(labels, proba, multi_class="ovr", average="macro"), rel=1e-14)
    with pytest.raises(ValueError, match="one class only"):
        roc_auc(np.ones(10, dtype=bool), np.arange(10.0))


def test_l2_normalize_is_scikit_learns():
    from sklearn.preprocessing import normalize

    from otfs.preprocessing import apply_steps, l2_normalize

    rng = np.random.default_rng(1)
    X = rng.poisson(0.3, size=(50, 40)).astype(float)
    X[3] = 0.0  # an empty document stays empty
    np.testing.assert_allclose(l2_normalize(X), normalize(X, norm="l2"), rtol=1e-15, atol=0)
    assert np.all(l2_normalize(X)[3] == 0) and np.all(X[3] == 0)
    np.testing.assert_array_equal(apply_steps(X, ["l2_normalize"]), l2_normalize(X))


def test_the_standardized_logistic_regression_is_scikit_learns_pipeline_and_stable_on_a_badly_scaled_input():
    """The families' second classifier, {name: logistic-regression, standardize: true}: scikit-learn's StandardScaler
    and LogisticRegression, and on a badly scaled input (an embedding of norm ~1,000, as TCA's) its predictions do not
    move when the input moves by 1e-13 relative, where L-BFGS on the unscaled input stops at different points."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from otfs.classification import make_classifier, second_classifier_scores

    spec = {"name": "logistic-regression", "standardize": True}
    rng = np.random.default_rng(4)
    Xs, Xt = rng.normal(size=(200, 60)), rng.normal(0.2, 1.0, size=(500, 60))
    ys = (Xs[:, :3].sum(1) + rng.normal(size=200) > 0).astype(int)
    yt = (Xt[:, :3].sum(1) + rng.normal(size=500) > 0).astype(int)
    scale = np.geomspace(1, 1000, 60)  # features from 1 to 1,000: badly conditioned
    Xs, Xt = Xs * scale, Xt * scale
    got = second_classifier_scores(spec, Xs, ys, Xt, yt)
    ref = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(Xs, ys)
    assert got["second_accuracy"] == pytest.approx(100 * ref.score(Xt, yt), abs=1e-12)
    base = make_classifier(spec).fit(Xs, ys).predict(Xt)
    for seed in range(3):
        noise = 1 + 1e-13 * np.random.default_rng(seed).standard_normal(Xs.shape)
        assert np.array_equal(make_classifier(spec).fit(Xs * noise, ys).predict(Xt), base)
    assert type(make_classifier("logistic-regression")).__name__ == "LogisticRegression"
    with pytest.raises(ValueError, match="standardize must be true or false"):
        make_classifier({"name": "logistic-regression", "standardize": "yes"})
