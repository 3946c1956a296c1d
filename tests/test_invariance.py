"""Relevant and invariant feature selection (Persello & Bruzzone): HSIC, Theta, the NSGA-II front."""

import numpy as np
import pytest

from otfs.rankers._relevant_invariant import (
    InvarianceCriteria,
    RelevantInvariantSelector,
    conditional_shift,
    hsic,
    knee_point,
    non_dominated,
)


def _domains(shift=0.0, seed=0, n=12, d=5, classes=3):
    rng = np.random.default_rng(seed)
    ys = np.repeat(np.arange(classes), n // classes)
    Xs = rng.normal(size=(n, d)) + ys[:, None]
    yt = np.repeat(np.arange(classes), 3)
    Xt = rng.normal(size=(len(yt), d)) + yt[:, None]
    Xt[:, :2] += shift
    return Xs, ys, Xt, yt


@pytest.mark.simd
def test_hsic_equals_the_direct_formula():
    Xs, ys, _, _ = _domains()
    n = len(ys)
    gamma = 0.3
    K = np.exp(-gamma * ((Xs[:, None, :] - Xs[None, :, :]) ** 2).sum(-1))
    L = (ys[:, None] == ys[None, :]).astype(float)
    # Gretton et al.'s expansion of tr(KHLH)/n^2, term by term
    direct = (np.sum(K * L) / n**2 - 2 * np.sum(K.sum(1) * L.sum(1)) / n**3 + K.sum() * L.sum() / n**4)
    assert hsic(Xs, ys, gamma=gamma) == pytest.approx(direct, rel=1e-10)
    assert hsic(Xs, ys, gamma=gamma) > hsic(np.random.default_rng(5).normal(size=Xs.shape), ys, gamma=gamma)


def test_theta_equals_explicit_conditional_embeddings():
    """Linear input kernel: embeddings are vectors, Theta = sum_c ||mu_s(c) - mu_t(c)||^2."""
    Xs, ys, Xt, yt = _domains(shift=1.0)
    lam = 0.1
    Ys = (ys[:, None] == np.arange(3)).astype(float)
    Yt = (yt[:, None] == np.arange(3)).astype(float)
    Ws = np.linalg.inv(Ys @ Ys.T + lam * np.eye(len(ys))) @ Ys  # column c: weights of mu_s(c)
    Wt = np.linalg.inv(Yt @ Yt.T + lam * np.eye(len(yt))) @ Yt
    direct = sum(np.sum((Xs.T @ Ws[:, c] - Xt.T @ Wt[:, c]) ** 2) for c in range(3))
    crit = InvarianceCriteria(Xs, ys, Xt, yt, reg=lam, gamma="linear")
    assert crit.invariance(np.arange(Xs.shape[1])) == pytest.approx(direct, rel=1e-10)


def test_theta_tends_to_the_sum_of_class_mmds():
    Xs, ys, Xt, yt = _domains(shift=0.5)
    g = 0.2

    def k(A, B):
        return np.exp(-g * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    mmd = sum(k(Xs[ys == c], Xs[ys == c]).mean() + k(Xt[yt == c], Xt[yt == c]).mean()
              - 2 * k(Xs[ys == c], Xt[yt == c]).mean() for c in range(3))
    assert conditional_shift(Xs, ys, Xt, yt, reg=1e-8, gamma=g) == pytest.approx(mmd, rel=1e-5)


@pytest.mark.parametrize("output", ["delta", "signed"])
def test_theta_is_zero_for_identical_domains(output):
    Xs, ys, _, _ = _domains()
    assert conditional_shift(Xs, ys, Xs, ys, output=output) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(("output", "classes"), [("delta", 3), ("delta", 2)])
def test_theta_grows_with_a_planted_shift(output, classes):
    values = [conditional_shift(*_domains(shift=s, classes=classes), output=output, gamma=0.2)
              for s in (0.0, 0.5, 1.0, 2.0)]
    assert all(b > a for a, b in zip(values, values[1:], strict=False)), values


def test_signed_output_kernel_is_indefinite_beyond_two_classes():
    """Documented limit: with 3+ classes the 1/-1 kernel is not positive semi-definite, so Theta
    is no longer a squared distance (it can be negative)."""
    from otfs.rankers._relevant_invariant import output_kernel

    y = np.repeat(np.arange(3), 2)
    assert np.linalg.eigvalsh(output_kernel(y, y, "signed")).min() < -1e-9
    assert np.linalg.eigvalsh(output_kernel(y[:4], y[:4], "signed")).min() > -1e-9


@pytest.mark.simd
def test_non_dominated_and_knee():
    F = np.array([[0, 5], [1, 3], [2, 2.5], [3, 0], [2, 4], [4, 4]], dtype=float)
    assert non_dominated(F).tolist() == [True, True, True, True, False, False]
    assert knee_point(F[:4]) == 2  # normalised: farthest from the line x + y = 1


@pytest.mark.simd
def test_selector_front_is_non_dominated_and_prefers_stable_relevant_features():
    rng = np.random.default_rng(0)
    ys = np.repeat(np.arange(4), 15)
    yt = np.repeat(np.arange(4), 5)
    Xs = rng.normal(size=(60, 30))
    Xt = rng.normal(size=(20, 30))
    Xs[:, :10] += ys[:, None]  # relevant
    Xt[:, :10] += yt[:, None]
    Xt[:, :5] += 3.0  # relevant but shifted in the target
    sel = RelevantInvariantSelector(n_features_to_select=4, pop_size=30, n_gen=30, random_state=0)
    sel.fit(Xs, ys, Xt, yt)
    F = sel.front_
    assert non_dominated(F).all()
    # no pair of front points dominates another (brute force)
    for i in range(len(F)):
        for j in range(len(F)):
            assert not (i != j and np.all(F[i] <= F[j]) and np.any(F[i] < F[j]))
    assert (sel.front_masks_.sum(axis=1) == 4).all()
    chosen = np.flatnonzero(sel.get_support())
    assert sorted(sel.order_[:4].tolist()) == chosen.tolist()
    np.testing.assert_array_equal(sel.support_, sel.front_masks_[sel.chosen_])
    np.testing.assert_array_equal(sel.ranking_[sel.order_], np.arange(1, sel.ranking_.size + 1))
    # the chosen subset is drawn from the stable relevant features 5..9
    assert np.isin(chosen, np.arange(5, 10)).sum() >= 3, chosen
    again = RelevantInvariantSelector(n_features_to_select=4, pop_size=30, n_gen=30, random_state=0)
    np.testing.assert_array_equal(again.fit(Xs, ys, Xt, yt).front_, F)


def test_selector_refuses_a_missing_target_class():
    Xs, ys, Xt, yt = _domains()
    with pytest.raises(ValueError, match="no sample of the classes"):
        RelevantInvariantSelector(n_features_to_select=2).fit(Xs, ys, Xt[yt != 2], yt[yt != 2])


@pytest.mark.subprocess
def test_related_targets_build_in_the_pipeline(built_run_copy):
    """`related` (WDA Table 1, Figure 2, the Office adapter table; the invariant selector's table and
    front; the boosting and SemFS tables and figures) builds from the test configuration, reusing the
    selection and ranking of `available`."""
    import json

    import pandas as pd

    from tests.conftest import snakemake

    snakemake(built_run_copy, "--configfile", "config/test.yaml", "--cores", "2", "related")
    res = built_run_copy / "results"
    t1 = pd.read_csv(res / "wda" / "table1.csv")
    assert set(t1["dataset"]) == {"iris", "ionosphere", "digits"} and set(t1["method"]) == {"PCA", "FDA", "LFDA", "LMNN", "WDA"}
    assert (t1["splits"] == 2).all() and t1["error"].between(0, 100).all()
    table1 = (res / "wda" / "table1.md").read_text()
    assert all(column in table1 for column in ("paper WDA", "| LMNN |", "LMNN − paper", "paper LMNN"))
    fig2 = pd.read_csv(res / "wda" / "figure2.csv")
    assert set(fig2["p"]) == {10, 20} and fig2.loc[fig2["method"] == "FDA", "p_used"].eq(9).all()
    assert "| WDA |" in (res / "wda" / "office.md").read_text()
    office = pd.read_csv(res / "wda" / "office.csv", keep_default_na=False)  # "NA" is an adapter
    assert {"NA", "WDA"} <= set(office["adapter"])
    inv = pd.read_csv(res / "invariance" / "table.csv")
    assert set(inv["selector"]) == {"invariant", "relevance", "knee", "OT ranking"}
    assert inv["pair"].nunique() == 3
    run = json.loads((res / "invariance" / "runs" / "surf" / "dslr-webcam.json").read_text())
    F = np.asarray(run["fronts"][0]["objectives"])
    assert non_dominated(F).all()
    assert "3 labelled target samples per class" in (res / "invariance" / "table.md").read_text()
    for f in ("figure2.png", "figure2.pdf"):
        assert (res / "wda" / f).stat().st_size > 1000
    assert (res / "invariance" / "figure3.png").stat().st_size > 1000
    boost = pd.read_csv(res / "boosting" / "table.csv")
    assert {"DA boosting", "Pooling", "TD only", "SD only", "Full TD", "OT ranking + OT3"} <= set(boost["method"])
    assert set(boost.loc[boost["n_labelled"] >= 0, "n_labelled"]) == {10, 20, 40}
    assert (boost["repetitions"] == 2).all() and boost["median"].between(0, 100).all()
    assert "**A→D, task five_vs_five**" in (res / "boosting" / "table.md").read_text()
    assert (res / "boosting" / "figure.png").stat().st_size > 1000
    sem = pd.read_csv(res / "semfs" / "table.csv")
    assert set(sem["method"]) == {"SemFS", "SemFS/c", "LASSO", "Spectral", "OT ranking", "Random"}
    assert set(sem["n_features"]) == {5, 10, 20} and set(sem["domain"]) == {"dslr"} and (sem["splits"] == 2).all()
    assert sem[["acc", "nmi"]].stack().between(0, 100).all()
    assert "hand-authored" in (res / "semfs" / "table.md").read_text()
    assert (res / "semfs" / "figure.png").stat().st_size > 1000
