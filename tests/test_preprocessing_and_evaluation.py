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
