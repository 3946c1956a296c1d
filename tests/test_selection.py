"""Algorithm 1: sample selection."""

import numpy as np
import pytest

from otfs.sample_selection._base import argmax_rows, select_samples

pytestmark = pytest.mark.simd  # tests/test_simd.py runs them under a second SIMD path too


def _clusters(n=6, extra=2, seed=0):
    """n far-apart points, each with ``extra`` near neighbours (the distractors)."""
    rng = np.random.RandomState(seed)
    centres = 50.0 * np.arange(n)[:, None] * np.ones((1, 3)) + rng.randn(n, 3)
    near = np.repeat(centres, extra, axis=0) + 0.1 * rng.randn(n * extra, 3)
    return centres, near


def test_exact_copies_are_selected():
    # T holds an exact copy of every source sample plus near distractors, so
    # every coupling row has 1 + extra equal maxima 1/N_T: the copy and its
    # distractors. Copies stored first: the default lowest-index rule picks
    # exactly them; "nearest" picks them wherever they are stored.
    S, near = _clusters()
    perm = np.random.RandomState(1).permutation(len(S))
    T = np.vstack([S[perm], near])
    m = select_samples(S, T, "ot")
    assert not m.flipped and len(m) == len(S)
    np.testing.assert_array_equal(m.source_index, np.arange(len(S)))
    np.testing.assert_array_equal(T[m.target_index], S)
    np.testing.assert_array_equal(m.target_index, np.argsort(perm))
    # stored last, the copies lose the lowest-index tie to their distractors ...
    T_late = np.vstack([near, S[perm]])
    low = select_samples(S, T_late, "ot", tie_break="lowest")
    assert not np.isin(low.target_index, np.arange(len(near), len(T_late))).any()
    # ... and win the "nearest" tie
    nearest = select_samples(S, T_late, "ot", tie_break="nearest")
    np.testing.assert_array_equal(T_late[nearest.target_index], S)


def test_roles_flip_when_source_is_larger():
    T, near = _clusters(n=5, extra=3, seed=2)
    S = np.vstack([T, near])  # copies of T first, then distractors
    m = select_samples(S, T, "ot")
    assert m.flipped
    np.testing.assert_array_equal(m.target_index, np.arange(len(T)))
    np.testing.assert_array_equal(m.source_index, np.arange(len(T)))
    np.testing.assert_array_equal(S[m.source_index], T)


def test_equal_sizes_do_not_flip():
    X = np.arange(12.0).reshape(6, 2)
    m = select_samples(X, X[::-1], "ot")
    assert not m.flipped
    np.testing.assert_array_equal(X[::-1][m.target_index], X)


def test_tie_break_rules():
    P = np.array([[0.2, 0.5, 0.5, 0.1], [0.5, 0.5, 0.5, 0.5], [0.1, 0.0, 0.0, 0.9]])
    np.testing.assert_array_equal(argmax_rows(P, "lowest"), [1, 0, 3])
    np.testing.assert_array_equal(argmax_rows(P, "lowest"), np.argmax(P, axis=1))
    np.testing.assert_array_equal(argmax_rows(P, "highest"), [2, 3, 3])
    picks = {tuple(argmax_rows(P, "random", random_state=s)) for s in range(40)}
    assert all(p[0] in (1, 2) and p[2] == 3 for p in picks)
    assert len({p[1] for p in picks}) == 4  # every tied column can be drawn
    assert tuple(argmax_rows(P, "random", random_state=3)) == tuple(
        argmax_rows(P, "random", random_state=3)
    )


def test_tie_rule_changes_the_selection_on_uniform_couplings():
    # 2 source samples, 6 equidistant-ish targets: each coupling row holds
    # three entries of 1/6, so the tie rule decides the pick.
    S = np.array([[0.0], [10.0]])
    T = np.array([[-1.0], [0.0], [1.0], [9.0], [10.0], [11.0]])
    low = select_samples(S, T, tie_break="lowest").target_index
    high = select_samples(S, T, tie_break="highest").target_index
    np.testing.assert_array_equal(low, [0, 3])
    np.testing.assert_array_equal(high, [2, 5])


def test_1nn_and_random_strategies():
    rng = np.random.RandomState(2)
    S, T = rng.randn(8, 3), rng.randn(20, 3)
    nn = select_samples(S, T, "1nn")
    d2 = ((S[:, None, :] - T[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(nn.target_index, d2.argmin(1))
    r1 = select_samples(S, T, "random", random_state=5)
    r2 = select_samples(S, T, "random", random_state=5)
    np.testing.assert_array_equal(r1.target_index, r2.target_index)
    assert len(set(r1.target_index.tolist())) == 8  # without replacement


def test_inputs_untouched_and_errors():
    rng = np.random.RandomState(3)
    S, T = rng.randn(5, 2), rng.randn(7, 2)
    S0, T0 = S.copy(), T.copy()
    select_samples(S, T)
    np.testing.assert_array_equal(S, S0)
    np.testing.assert_array_equal(T, T0)
    with pytest.raises(ValueError, match="strategy"):
        select_samples(S, T, "nearest")
    with pytest.raises(ValueError, match="same number of features"):
        select_samples(S, T[:, :1])
    S[0, 0] = np.nan
    with pytest.raises(ValueError, match="Xs contains NaN"):
        select_samples(S, T)


def test_emd_iteration_limit_is_an_error_naming_the_parameter():
    rng = np.random.RandomState(4)
    with pytest.raises(RuntimeError, match=r"within emd_max_iter=3 iterations .*raise emd_max_iter, or set it to "
                                           r"'auto' \(max\(100000, n\*m\) = 100000 here\)"):
        select_samples(rng.randn(60, 3), rng.randn(80, 3), emd_max_iter=3)


def test_the_automatic_emd_iteration_limit_solves_what_pots_default_cannot():
    # 2,000 x 2,000 samples need about 122,000 network-simplex pivots: POT's default of 100,000 stops short
    # (the README's example failed so on Amazon reviews), 'auto' (max(100000, n*m)) reaches the optimum;
    # where both reach it, the limit changes nothing
    rng = np.random.RandomState(0)
    Xs, Xt = rng.randn(2000, 400), rng.randn(2000, 400) + 0.3
    with pytest.raises(RuntimeError, match="emd_max_iter=100000"):
        select_samples(Xs, Xt, emd_max_iter=100_000)
    matching = select_samples(Xs, Xt)  # default: 'auto'
    assert len(matching) == 2000
    small_s, small_t = Xs[:300, :20], Xt[:400, :20]
    a, b = select_samples(small_s, small_t, emd_max_iter=100_000), select_samples(small_s, small_t)
    np.testing.assert_array_equal(a.target_index, b.target_index)
