"""The experimental protocol: pairs, feature counts, seeds, source subsets."""

import numpy as np
import pytest

from otfs_workflow.protocol import (
    derive_seed,
    draw_source_subset,
    feature_counts,
    make_pairs,
    pair_name,
    parse_pair,
    source_per_class,
)


def test_pairs():
    pairs = make_pairs(["amazon", "caltech10", "dslr", "webcam"])
    assert len(pairs) == 12 and pairs[0] == "amazon-caltech10"
    assert parse_pair(pair_name("dslr", "webcam")) == ("dslr", "webcam")
    with pytest.raises(ValueError):
        parse_pair("amazon")
    with pytest.raises(ValueError):
        pair_name("a-b", "c")


def test_feature_counts_follow_the_paper():
    assert feature_counts(800) == [25, *range(50, 801, 50)]
    assert len(feature_counts(800)) == 17
    assert feature_counts(4096)[:3] == [128, 256, 512]
    assert feature_counts(1024)[0] == 32 and feature_counts(1024)[-1] == 1024
    # indices used by the paper's tables: d/32, d/8 and d/2
    c = feature_counts(800)
    assert (c[0], c[2], c[8], c[16]) == (25, 100, 400, 800)


def test_seeds_depend_only_on_their_keys():
    a = derive_seed("surf", "amazon-dslr", 3, "source_subset")
    assert a == derive_seed("surf", "amazon-dslr", 3, "source_subset")
    assert a == 2835922011  # fixed forever: changing it changes every published number
    assert a != derive_seed("surf", "amazon-dslr", 4, "source_subset")
    assert a != derive_seed("GoogleNet1024", "amazon-dslr", 3, "source_subset")
    assert 0 <= a < 2**32


def test_source_subset():
    y = np.repeat([1, 2, 3], [30, 5, 20])
    idx = draw_source_subset(y, 8, random_state=0)
    assert np.bincount(y[idx])[1:].tolist() == [8, 5, 8]  # class 2 gives all it has
    assert len(set(idx.tolist())) == idx.size
    np.testing.assert_array_equal(idx, draw_source_subset(y, 8, random_state=0))
    assert source_per_class("dslr", 20, {"dslr": 8}) == 8
    assert source_per_class("amazon", 20, {"dslr": 8}) == 20
    with pytest.raises(ValueError, match="class 4 has no sample"):
        draw_source_subset(y, 8, random_state=0, classes=[1, 2, 3, 4])


def test_stratified_subsample_keeps_class_shares_and_is_reproducible():
    from otfs_workflow.protocol import draw_stratified_subsample

    y = np.repeat([1, 2, 3], [600, 300, 100])
    keep = draw_stratified_subsample(y, 100, seed=7)
    assert keep.size == 100 and np.all(np.diff(keep) > 0)  # sorted, no repeat
    assert np.bincount(y[keep])[1:].tolist() == [60, 30, 10]
    np.testing.assert_array_equal(keep, draw_stratified_subsample(y, 100, seed=7))
    assert not np.array_equal(keep, draw_stratified_subsample(y, 100, seed=8))
    # largest remainders: 7 of 3 classes in shares 0.6/0.3/0.1 -> 4.2, 2.1, 0.7 -> 4, 2, 1
    assert np.bincount(y[draw_stratified_subsample(y, 7, seed=0)])[1:].tolist() == [4, 2, 1]
    # a rare class keeps one sample; a domain already small enough is kept whole
    rare = np.array([1] * 999 + [2])
    assert np.bincount(rare[draw_stratified_subsample(rare, 10, seed=0)])[1:].tolist() == [9, 1]
    np.testing.assert_array_equal(draw_stratified_subsample(y, 1000, seed=0), np.arange(1000))
    with pytest.raises(ValueError, match="max_samples: 2 is fewer than the 3 classes"):
        draw_stratified_subsample(y, 2, seed=0)
    with pytest.raises(ValueError, match="max_samples: a positive integer, got 0"):
        draw_stratified_subsample(y, 0, seed=0)
