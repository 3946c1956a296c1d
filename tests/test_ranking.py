"""Algorithm 2: feature ranking, and its scikit-learn selector."""

import warnings

import numpy as np
import pytest
from sklearn import config_context
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline

from otfs.preprocessing import zscore
from otfs.rankers import (
    OTFeatureRanker,
    feature_coupling_diagonal,
    feature_orders,
    rank_features,
)

from .conftest import shifted_domains, sklearn_checks


@pytest.mark.simd
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("per_domain_zscore", [False, True])
def test_planted_shifted_features_rank_last(seed, per_domain_zscore):
    # The paper's protocol z-scores each domain first; the planted shift (an
    # inverted class signal) must be found with and without that step.
    Xs, _, Xt, _, shifted = shifted_domains(seed=seed)
    if per_domain_zscore:
        Xs, Xt = zscore(Xs), zscore(Xt)
    result = rank_features(Xs, Xt)
    k = shifted.size
    assert set(result.order[-k:].tolist()) == set(shifted.tolist())
    others = np.setdiff1d(np.arange(Xs.shape[1]), shifted)
    assert result.scores[shifted].max() < result.scores[others].min()


@pytest.mark.simd
def test_diagonal_is_part_of_a_coupling_and_identity_scores_high():
    rng = np.random.RandomState(0)
    X = rng.randn(30, 12)
    diag = feature_coupling_diagonal(X, X)
    assert diag.shape == (12,)
    assert np.all(diag > 0) and diag.sum() <= 1 + 1e-9
    # identical domains: each feature keeps more mass on itself than uniform
    assert np.all(diag > 1 / 12**2)


@pytest.mark.simd
def test_solver_methods_agree_on_the_order():
    Xs, _, Xt, _, _ = shifted_domains(seed=4)
    a = rank_features(Xs, Xt, method="sinkhorn").scores
    b = rank_features(Xs, Xt, method="sinkhorn_log").scores
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-9)


@pytest.mark.simd
def test_feature_orders():
    scores = np.array([0.1, 0.5, 0.5, 0.2])
    orders = feature_orders(scores, random_state=0)
    np.testing.assert_array_equal(orders["Descending"], [1, 2, 3, 0])  # ties: index order
    np.testing.assert_array_equal(orders["Ascending"], [0, 3, 2, 1])
    assert sorted(orders["Random"].tolist()) == [0, 1, 2, 3]
    np.testing.assert_array_equal(
        feature_orders(scores, random_state=7)["Random"],
        feature_orders(scores, random_state=7)["Random"],
    )


@pytest.mark.simd
def test_constant_feature_gives_no_nan():
    Xs, _, Xt, _, _ = shifted_domains(seed=5)
    Xs[:, 0] = 3.0
    Xt[:, 0] = 3.0
    scores = rank_features(zscore(Xs), zscore(Xt)).scores
    assert np.isfinite(scores).all()


def test_ranker_attributes_and_pipeline():
    Xs, ys, Xt, yt, shifted = shifted_domains(seed=6)
    Xs0, Xt0 = Xs.copy(), Xt.copy()
    ranker = OTFeatureRanker(n_features_to_select=10).fit(Xs, ys, X_target=Xt)
    np.testing.assert_array_equal(Xs, Xs0)
    np.testing.assert_array_equal(Xt, Xt0)
    d = Xs.shape[1]
    assert ranker.scores_.shape == (d,)
    assert sorted(ranker.ranking_.tolist()) == list(range(1, d + 1))
    np.testing.assert_array_equal(ranker.ranking_[ranker.order_], np.arange(1, d + 1))
    assert ranker.get_support().sum() == 10
    assert not ranker.get_support()[shifted].any()
    assert ranker.transform(Xt).shape == (Xt.shape[0], 10)

    # Without metadata routing, fit parameters are addressed by step name ...
    with config_context(enable_metadata_routing=False):
        pipe = Pipeline([("rank", OTFeatureRanker(n_features_to_select=10)),
                         ("knn", KNeighborsClassifier(1))])
        pipe.fit(Xs, ys, rank__X_target=Xt)
        np.testing.assert_array_equal(pipe.named_steps["rank"].support_, ranker.support_)
        assert pipe.score(Xt, yt) > 0.5
    # ... with routing (which importing skada switches on), the ranker requests X_target.
    with config_context(enable_metadata_routing=True):
        rank = OTFeatureRanker(n_features_to_select=10).set_fit_request(X_target=True)
        pipe = Pipeline([("rank", rank), ("knn", KNeighborsClassifier(1))])
        pipe.fit(Xs, ys, X_target=Xt)
        np.testing.assert_array_equal(pipe.named_steps["rank"].support_, ranker.support_)

    half = OTFeatureRanker(n_features_to_select=0.25).fit(Xs, X_target=Xt)
    assert half.n_features_ == d // 4
    with pytest.raises(ValueError, match="exceeds"):
        OTFeatureRanker(n_features_to_select=d + 1).fit(Xs, X_target=Xt)
    with pytest.warns(UserWarning, match="no X_target"):
        OTFeatureRanker().fit(Xs)


@pytest.mark.parametrize("estimator, check", list(sklearn_checks(
    [OTFeatureRanker(), OTFeatureRanker(selection="1nn", n_features_to_select=1)])))
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="OTFeatureRanker.fit got no X_target")
        check(estimator)
