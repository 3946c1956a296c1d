"""A user's own data, odd or bad, as a new user writes it: every input gives the right result or a clear error
naming the file, column, domain, key or argument at fault, and nothing is lost.

The cases follow docs/your-dataset.md and docs/robustness.md: the tabular reader (columns by name, every
problem of every file in one error, labels unified by value, missing values, scale), the library's
estimators (X and X_target named, degenerate inputs), the protocol's checks of a pair's domains, and the
configuration (duplicate keys, alias bombs, names that become paths).
"""

from __future__ import annotations

import copy
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from otfs.datasets import get_reader

from .conftest import REPO


# --- the tabular reader ----------------------------------------------------------------------------------
def _frames(n=24, seed=0):
    rng = np.random.RandomState(seed)
    cols = ["alpha", "beta", "gamma", "delta"]

    def frame():
        df = pd.DataFrame(rng.randn(n, 4).round(6), columns=cols)
        df["kind"] = rng.choice(["x", "y", "z"], size=n)
        return df

    return frame(), frame()


def _write(df, path, **kw):
    if str(path).endswith(".parquet"):
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False, **kw)
    return str(path)


def _reader(tmp_path, a, b, suffix_a=".csv", suffix_b=".csv", **params):
    files = {"a": _write(a, tmp_path / f"a{suffix_a}"), "b": _write(b, tmp_path / f"b{suffix_b}")}
    return get_reader("tabular", {"files": files, "label": "kind", **params})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_columns_in_another_order_give_the_same_bits(tmp_path, suffix):
    a, b = _frames()
    ordered = _reader(tmp_path / "1", a, b, suffix_b=suffix) if (tmp_path / "1").mkdir() is None else None
    shuffled = _reader(tmp_path / "2", a, b[["kind", "delta", "alpha", "gamma", "beta"]], suffix_b=suffix) \
        if (tmp_path / "2").mkdir() is None else None
    x, y = ordered.read("b", {}, None), shuffled.read("b", {}, None)
    assert x.X.tobytes() == y.X.tobytes() and np.array_equal(x.y, y.y)
    assert list(y.feature_names) == ["alpha", "beta", "gamma", "delta"]


@pytest.mark.parametrize("mutate, message", [
    (lambda a, b: (a, b.drop(columns="gamma")),
     r"b.csv: no column 'gamma', which .*a.csv has \(domain 'a'\)"),
    (lambda a, b: (a, b.assign(epsilon=1.0)),
     r"b.csv: column 'epsilon' is in no other domain's file"),
    (lambda a, b: (a, b.rename(columns={"kind": "Kind"})),
     r"b.csv: no label column 'kind' \(did you mean 'Kind'\?\)"),
])
def test_columns_that_differ_between_domains_are_named(tmp_path, mutate, message):
    a, b = mutate(*_frames())
    with pytest.raises(ValueError, match=message):
        _reader(tmp_path, a, b).count_features(["a", "b"], None)


@pytest.mark.parametrize("features, message", [
    (["alpha", "kind"], r"features: lists the label column 'kind'.*leak"),
    (["alpha", "gama"], r"no column 'gama' \(did you mean 'gamma'\?\), which features lists"),
    (["alpha", "beta", "alpha"], r"features: \['alpha'\] listed twice"),
    ([], r"features: a list of column names"),
    ("", r"features: a list of column names"),
    ("alpha", r"features: a list of column names for a table, got the text 'alpha'; write \[alpha\]"),
])
def test_a_bad_features_list_is_named(tmp_path, features, message):
    a, b = _frames()
    with pytest.raises(ValueError, match=message):
        _reader(tmp_path, a, b, features=features).count_features(["a", "b"], None)


def test_a_features_list_takes_those_columns_by_name(tmp_path):
    a, b = _frames()
    reader = _reader(tmp_path, a, b.assign(extra=7.0), features=["delta", "alpha"])
    got = reader.read("b", {}, None)
    np.testing.assert_array_equal(got.X, b[["delta", "alpha"]].to_numpy())
    assert list(got.feature_names) == ["delta", "alpha"]


def test_a_duplicate_header_name_is_named(tmp_path):
    a, b = _frames()
    (tmp_path / "b.csv").write_text("alpha,beta,alpha,delta,kind\n1,2,3,4,x\n5,6,7,8,y\n")
    files = {"a": _write(a, tmp_path / "a.csv"), "b": str(tmp_path / "b.csv")}
    with pytest.raises(ValueError, match=r"b.csv: the column name\(s\) \['alpha'\] appear more than once"):
        get_reader("tabular", {"files": files, "label": "kind"}).count_features(["a", "b"], None)


def test_a_column_without_a_name_is_refused_unless_the_features_are_listed(tmp_path):
    a, b = _frames()
    a.to_csv(tmp_path / "a.csv")  # pandas' index, as a first column without a name
    files = {"a": str(tmp_path / "a.csv"), "b": _write(b, tmp_path / "b.csv")}
    with pytest.raises(ValueError, match=r"a.csv: column\(s\) \[1\] have no name \(an index written by pandas' "
                                         r"to_csv\? write the file with index=False\)"):
        get_reader("tabular", {"files": files, "label": "kind"}).inspect()
    listed = get_reader("tabular", {"files": files, "label": "kind", "features": ["alpha", "delta"]})
    np.testing.assert_array_equal(listed.read("a", {}, None).X, a[["alpha", "delta"]].to_numpy())


@pytest.mark.parametrize("content, message", [
    ("", r"b.csv: empty file \(0 bytes\), the file of domain 'b'"),
    ("alpha,beta,gamma,delta,kind\n", r"b.csv: no sample \(no data line\)"),
    ("\n\n", r"b.csv: the first line names no column"),
])
def test_an_empty_file_is_named(tmp_path, content, message):
    a, _ = _frames()
    (tmp_path / "b.csv").write_text(content)
    files = {"a": _write(a, tmp_path / "a.csv"), "b": str(tmp_path / "b.csv")}
    with pytest.raises(ValueError, match=message):
        get_reader("tabular", {"files": files, "label": "kind"}).inspect()


def test_every_problem_of_every_file_in_one_error_with_line_numbers(tmp_path):
    a, b = _frames()
    a = a.astype({"beta": object, "delta": object})
    a.loc[2, "beta"], a.loc[5, "beta"], a.loc[7, "delta"] = None, "1,5", np.inf
    b = b.astype({"gamma": object})
    b.loc[0, "gamma"], b.loc[3, "kind"] = "NaN", None
    with pytest.raises(ValueError) as err:
        _reader(tmp_path, a, b).inspect()
    lines = str(err.value).splitlines()
    assert lines[0] == "5 problem(s) in 2 file(s):"
    assert any("a.csv: column 'beta' has 1 non-numeric cell(s) (line 7: '1,5')" in x for x in lines)
    assert any("a.csv: column 'beta' has 1 empty or NaN cell(s) (line 4)" in x for x in lines)
    assert any("a.csv: column 'delta' has 1 empty, NaN or infinite cell(s) (line 9)" in x for x in lines)
    assert any("b.csv: column 'gamma' has 1 empty or NaN cell(s) (line 2)" in x for x in lines)
    assert any("b.csv: column 'kind' (the label) has 1 empty or missing cell(s) (line 5)" in x for x in lines)
    assert "missing: median" in lines[-1]  # the way out, said once


def test_missing_values_imputed_by_the_domains_own_median_or_every_domains_mean(tmp_path):
    a, b = _frames()
    b.loc[[1, 4], "beta"] = np.nan
    b.loc[6, "beta"] = np.inf  # infinite counts as missing
    own = _reader(tmp_path, a, b, missing="median").read("b", {}, None)
    expected = b["beta"].replace(np.inf, np.nan).median()
    assert np.all(own.X[[1, 4, 6], 1] == expected) and own.info["imputed"] == {"beta": 3}
    np.testing.assert_array_equal(np.delete(own.X[:, 1], [1, 4, 6]), np.delete(b["beta"].to_numpy(), [1, 4, 6]))
    pooled = _reader(tmp_path, a, b, missing="mean", impute_from="all").read("b", {}, None)
    both = pd.concat([a["beta"], b["beta"].replace(np.inf, np.nan)])
    np.testing.assert_allclose(pooled.X[[1, 4, 6], 1], both.mean(), rtol=1e-15)
    # the labels are never read to impute: relabelling the target changes nothing in its features
    relabelled = _reader(tmp_path, a, b.assign(kind="x"), missing="median").read("b", {}, None)
    assert relabelled.X.tobytes() == own.X.tobytes()


def test_a_column_without_any_value_in_a_domain(tmp_path):
    a, b = _frames()
    b["gamma"] = np.nan
    with pytest.raises(ValueError, match=r"b.csv: column 'gamma' has no value at all \(24 empty or NaN cells\)"):
        _reader(tmp_path, a, b, missing="median").inspect()
    with pytest.warns(UserWarning, match=r"b.csv: column 'gamma' has no value in this file: imputed from the other"):
        got = _reader(tmp_path, a, b, missing="median", impute_from="all").read("b", {}, None)
    assert np.all(got.X[:, 2] == a["gamma"].median())


def test_values_whose_squares_overflow_are_refused_and_tiny_ones_warned(tmp_path):
    a, b = _frames()
    a.loc[3, "alpha"] = 1e200
    with pytest.raises(ValueError, match=r"a.csv: column 'alpha' has values up to 1e\+200 \(line 5\), whose squares "
                                         r"overflow float64.*rescale the column"):
        _reader(tmp_path, a, b).inspect()
    a, b = _frames()
    b["delta"] = b["delta"] * 1e-200
    with pytest.warns(UserWarning, match=r"b.csv: column 'delta': every value is below 1e-146.*acts as a constant 0"):
        _reader(tmp_path, a, b).read("b", {}, None)


def test_labels_of_mixed_types_are_one_class_per_value(tmp_path):
    # 1, "1", 1.0 and " 1 " are the class "1"; the classes are ordered by number; quality 9 exists in b only
    a = pd.DataFrame({"f": np.arange(6.0), "kind": [1, 2, 3, 1, 2, 3]})
    (tmp_path / "b.csv").write_text("f,kind\n0,1.0\n1, 1 \n2,2\n3,9\n4,3.0\n5,10\n")
    files = {"a": _write(a, tmp_path / "a.parquet"), "b": str(tmp_path / "b.csv")}
    reader = get_reader("tabular", {"files": files, "label": "kind"})
    found = reader.inspect()
    assert found["classes"] == ["1", "2", "3", "9", "10"]
    assert found["domains"]["b"]["labels"] == {"1": 2, "2": 1, "3": 1, "9": 1, "10": 1}
    got = reader.read("b", {}, None)
    assert list(got.class_names) == ["1", "2", "3", "9", "10"] and got.y.tolist() == [1, 1, 2, 4, 3, 5]


def test_domains_that_share_no_label_are_warned_naming_both_label_sets(tmp_path):
    # source bad/good, target 0/1: read as four classes, every accuracy 0; the reader says so, once
    from otfs._checks import DegenerateResultWarning

    a = pd.DataFrame({"f": np.arange(4.0), "kind": ["bad", "good", "bad", "good"]})
    b = pd.DataFrame({"f": np.arange(4.0), "kind": [0, 1, 0, 1]})
    reader = _reader(tmp_path, a, b)
    with pytest.warns(DegenerateResultWarning) as caught:
        got = reader.read("a", {}, None)
    messages = [str(w.message) for w in caught if issubclass(w.category, DegenerateResultWarning)]
    assert len(messages) == 1
    assert "a.csv (domain 'a', labels ['bad', 'good'])" in messages[0]
    assert "b.csv (domain 'b', labels ['0', '1']) share no label" in messages[0]
    assert "4 different classes" in messages[0] and list(got.class_names) == ["0", "1", "bad", "good"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateResultWarning)
        reader.read("b", {}, None)  # once per reader
        # domains with a label in common: no warning
        b["kind"] = ["bad", "good", "good", "bad"]
        _reader(tmp_path, a, b).inspect()


def test_text_labels_are_matched_exactly_but_for_surrounding_spaces(tmp_path):
    a = pd.DataFrame({"f": [0.0, 1.0, 2.0], "kind": ["cat", "dog", "dog"]})
    b = pd.DataFrame({"f": [0.0, 1.0, 2.0], "kind": [" cat", "Dog", "dog "]})
    found = _reader(tmp_path, a, b).inspect()
    assert found["classes"] == ["Dog", "cat", "dog"] and found["domains"]["b"]["labels"] == {"Dog": 1, "cat": 1,
                                                                                           "dog": 1}


def test_files_without_a_header_another_separator_or_suffix(tmp_path):
    a, b = _frames()
    a.to_csv(tmp_path / "a.data", sep=";", header=False, index=False)
    b.to_csv(tmp_path / "b.data", sep=";", header=False, index=False)
    files = {"a": str(tmp_path / "a.data"), "b": str(tmp_path / "b.data")}
    names = list(a.columns)
    with pytest.raises(ValueError, match=r"files.a: .*a.data' has none of the suffixes .* format"):
        get_reader("tabular", {"files": files, "label": "kind"})
    with pytest.raises(ValueError, match="header: false needs names"):
        get_reader("tabular", {"files": files, "label": "kind", "format": "csv", "header": False})
    reader = get_reader("tabular", {"files": files, "label": "kind", "format": "csv", "sep": ";", "header": False,
                                    "names": names})
    got = reader.read("a", {}, None)
    np.testing.assert_array_equal(got.X, a[names[:4]].to_numpy())
    with pytest.raises(ValueError, match=r"names: 3 names for the 5 columns of .*a.data"):
        get_reader("tabular", {"files": files, "label": "kind", "format": "csv", "sep": ";", "header": False,
                               "names": names[:3]}).inspect()


def test_whitespace_separated_files_and_extra_missing_texts(tmp_path):
    (tmp_path / "a.txt").write_text("alpha beta kind\n1.0   ?  x\n2.0\t3.0 y\n3.0 4.0 x\n")
    (tmp_path / "b.txt").write_text("beta alpha kind\n1.0 2.0 y\n5.0 1.0 x\n2.0 2.0 y\n")
    files = {"a": str(tmp_path / "a.txt"), "b": str(tmp_path / "b.txt")}
    reader = get_reader("tabular", {"files": files, "label": "kind", "format": "csv", "sep": "whitespace",
                                    "na_values": ["?"], "missing": "median"})
    got = reader.read("a", {}, None)
    np.testing.assert_array_equal(got.X, [[1.0, 3.5], [2.0, 3.0], [3.0, 4.0]])
    np.testing.assert_array_equal(reader.read("b", {}, None).X, [[2.0, 1.0], [1.0, 5.0], [2.0, 2.0]])


def test_a_byte_order_mark_and_spaces_in_the_header_are_not_part_of_the_names(tmp_path):
    a, b = _frames()
    text = a.to_csv(index=False).replace("alpha,beta", "alpha, beta", 1)
    (tmp_path / "a.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    files = {"a": str(tmp_path / "a.csv"), "b": _write(b, tmp_path / "b.csv")}
    got = get_reader("tabular", {"files": files, "label": "kind"}).read("a", {}, None)
    assert list(got.feature_names) == ["alpha", "beta", "gamma", "delta"]
    np.testing.assert_array_equal(got.X, a[["alpha", "beta", "gamma", "delta"]].to_numpy())


@pytest.mark.parametrize("params, message", [
    ({"header": "yes"}, r"header: true or false, got 'yes' \(str\)"),
    ({"missing": "drop"}, r"missing: one of \['error', 'median', 'mean'\], got 'drop'"),
    ({"impute_from": "source"}, r"impute_from: one of \['domain', 'all'\]"),
    ({"sep": ";;"}, r"sep: one character, or 'whitespace'"),
    ({"names": "alpha,beta"}, r"names: a list of non-empty texts"),
    ({"na_values": [""]}, r"na_values: a list of non-empty texts"),
    ({"label": 3}, r"label: a text, got 3 \(int\)"),
    ({"format": "xlsx"}, r"format: one of \['csv', 'tsv', 'parquet', 'npz', 'hdf5'\]"),
    ({"sha256": {"a": "00"}}, r"sha256.a: a SHA-256 is 64 hex digits, got '00'"),
    ({"files": ["a.csv"]}, r"files: give one file per domain"),
    ({"files": {"a": 3}}, r"files.a: a path is text, got 3"),
])
def test_a_reader_parameter_of_the_wrong_type_is_named(params, message):
    base = {"files": {"a": "a.csv", "b": "b.csv"}, "label": "kind"}
    with pytest.raises(ValueError, match=message):
        get_reader("tabular", {**base, **params})


def test_hashes_and_unreadable_files_are_named(tmp_path):
    a, b = _frames()
    with pytest.raises(ValueError, match=r"b.csv: SHA-256 [0-9a-f]{64}, but the configuration says 1{64}"):
        _reader(tmp_path, a, b, sha256={"b": "1" * 64}).inspect()
    (tmp_path / "c.parquet").write_bytes(b"not a parquet file at all")
    files = {"a": _write(a, tmp_path / "a.csv"), "b": str(tmp_path / "c.parquet")}
    with pytest.raises(ValueError, match=r"c.parquet: not a readable parquet file"):
        get_reader("tabular", {"files": files, "label": "kind"}).inspect()
    (tmp_path / "d.csv").write_bytes("alpha,kind\n1,\xe9\n".encode("latin-1"))
    files = {"a": _write(a[["alpha", "kind"]], tmp_path / "a2.csv"), "b": str(tmp_path / "d.csv")}
    with pytest.raises(ValueError, match=r"d.csv: not a text file in UTF-8"):
        get_reader("tabular", {"files": files, "label": "kind"}).inspect()


def test_arrays_take_names_and_are_checked(tmp_path):
    rng = np.random.RandomState(0)
    np.savez(tmp_path / "a.npz", X=rng.randn(10, 3), y=np.arange(10) % 2)
    np.savez(tmp_path / "b.npz", X=rng.randn(8, 3), y=np.arange(9) % 2)
    files = {"a": str(tmp_path / "a.npz"), "b": str(tmp_path / "b.npz")}
    assert get_reader("tabular", {"files": files}).feature_names(["a"]) == ["x0", "x1", "x2"]
    named = get_reader("tabular", {"files": files, "names": ["u", "v", "w"]})
    assert named.feature_names(["a"]) == ["u", "v", "w"]
    with pytest.raises(ValueError, match=r"b.npz: features of shape \(8, 3\) and 9 labels"):
        named.inspect()


# --- the library's estimators -------------------------------------------------------------------------
@pytest.fixture
def two_domains():
    rng = np.random.RandomState(0)
    cols = [f"f{i}" for i in range(6)]
    return pd.DataFrame(rng.randn(30, 6), columns=cols), pd.DataFrame(rng.randn(40, 6) + 0.2, columns=cols)


@pytest.mark.parametrize("ranker", ["ot", "ks", "mmd"])
def test_x_target_is_named_when_it_is_at_fault(two_domains, ranker):
    from otfs.rankers import FEATURE_RANKERS

    Xs, Xt = two_domains
    est = FEATURE_RANKERS[ranker]()
    bad = Xt.copy()
    bad.iloc[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"X_target contains NaN or infinite values \(first at row 4, column 'f2'\)"):
        est.fit(Xs, X_target=bad)
    with pytest.raises(ValueError, match=r"X_target's columns do not match X's: missing \['f5'\]"):
        est.fit(Xs, X_target=Xt.drop(columns="f5"))
    with pytest.raises(ValueError, match=r"X_target has 5 features, X 6"):
        est.fit(Xs, X_target=Xt.to_numpy()[:, :5])
    with pytest.raises(ValueError, match=r"X_target has 1 sample\(s\); it needs at least"):
        est.fit(Xs, X_target=Xt.iloc[:1])
    with pytest.raises(ValueError, match=r"X_target has values up to 1e\+200 \(column 'f1'\)"):
        est.fit(Xs, X_target=Xt.assign(f1=1e200))


def test_a_target_dataframe_in_another_column_order_gives_the_same_ranking(two_domains):
    from otfs import OTFeatureRanker

    Xs, Xt = two_domains
    a = OTFeatureRanker(3).fit(Xs, X_target=Xt)
    b = OTFeatureRanker(3).fit(Xs, X_target=Xt[Xt.columns[::-1]])
    assert a.scores_.tobytes() == b.scores_.tobytes()
    assert list(b.get_feature_names_out()) == list(a.get_feature_names_out())


def test_tiny_and_constant_data_are_refused_or_warned(two_domains):
    from otfs import OTFeatureRanker
    from otfs._checks import DegenerateResultWarning

    Xs, Xt = (d.to_numpy() for d in two_domains)
    with pytest.raises(ValueError, match=r"X: every value is below 1e-146 in magnitude.*underflow"):
        OTFeatureRanker(3).fit(Xs * 1e-200, X_target=Xt * 1e-200)
    rng = np.random.RandomState(1)
    flat_s, flat_t = 1 + 1e-16 * rng.randn(30, 6), 1 + 1e-16 * rng.randn(40, 6)
    with pytest.warns(DegenerateResultWarning, match=r"every one of the 6 features is constant in both domains"):
        OTFeatureRanker(3).fit(flat_s, X_target=flat_t)


def test_sample_domain_that_names_one_domain_only_is_an_error(two_domains):
    from otfs import OTFeatureRanker

    Xs, Xt = two_domains
    X = pd.concat([Xs, Xt], ignore_index=True)
    with pytest.raises(ValueError, match=r"sample_domain must name one source domain \(> 0\) and one target"):
        OTFeatureRanker(3).fit(X, sample_domain=np.ones(len(X), dtype=int))
    sd = np.r_[np.ones(len(Xs), dtype=int), -np.ones(len(Xt), dtype=int)]
    sd[-39:] = 1  # a single target row
    with pytest.raises(ValueError, match=r"the target rows of X \(sample_domain < 0\) are 1; it needs at least 2"):
        OTFeatureRanker(3).fit(X, sample_domain=sd)


@pytest.mark.parametrize("how", ["no column", "empty column", "no array"])
def test_a_target_without_labels_is_read_as_unlabelled(tmp_path, how):
    """A target file without its label column (or array), or with it empty in every row, is an unlabelled domain:
    its labels are NO_LABEL, inspect() says so, its features are read as a labelled file's; a labelled domain with
    some empty labels, and a label absent from every file, stay errors."""
    from otfs.datasets import NO_LABEL

    a, b = _frames()
    if how == "no array":
        np.savez(tmp_path / "a.npz", X=a.drop(columns="kind").to_numpy(), y=a["kind"].to_numpy().astype(str))
        np.savez(tmp_path / "b.npz", X=b.drop(columns="kind").to_numpy())
        reader = get_reader("tabular", {"files": {"a": str(tmp_path / "a.npz"), "b": str(tmp_path / "b.npz")}})
    else:
        unlabelled = b.drop(columns="kind") if how == "no column" else b.assign(kind="")
        reader = _reader(tmp_path, a, unlabelled)
    found = reader.inspect()
    assert found["domains"]["b"]["unlabelled"] and found["domains"]["b"]["labels"] == {}
    assert not found["domains"]["a"]["unlabelled"] and found["classes"] == ["x", "y", "z"]
    dom = reader.read("b", {}, None).check("b")
    assert dom.info["unlabelled"] and set(dom.y) == {NO_LABEL}
    np.testing.assert_array_equal(dom.X, b.drop(columns="kind").to_numpy())
    labelled = reader.read("a", {}, None).check("a")
    assert "unlabelled" not in labelled.info and labelled.y.min() >= 1
    some = b.astype({"kind": object})
    some.loc[[2, 5], "kind"] = ""
    with pytest.raises(ValueError, match=r"b.csv: column 'kind' \(the label\) has 2 empty or missing cell\(s\) "
                                         r"\(lines 4, 7\); every sample of a labelled domain needs a label \(an "
                                         r"unlabelled target leaves the whole column empty"):
        _reader(tmp_path, a, some).inspect()
    with pytest.raises(ValueError, match=r"no label column 'kind'.*the source needs its labels"):
        _reader(tmp_path, a.drop(columns="kind"), b.drop(columns="kind")).inspect()
    with pytest.raises(ValueError, match=r"no domain has a label"):
        _reader(tmp_path, a.assign(kind=""), b.drop(columns="kind")).inspect()


def test_an_unlabelled_domain_is_a_target_only_and_its_labels_are_never_read():
    """check_pair: an unlabelled target (no counts, its rows) gets a note that only the recommendation runs; an
    unlabelled source is an error saying how to list the pairs; the cache refuses an unlabelled domain's labels
    unless asked without them."""
    from otfs_workflow.data.cache import CacheError, DomainData, FeatureCache
    from otfs_workflow.protocol import DegenerateDomainError, check_pair

    notes = check_pair("red-white", {"5": 10, "6": 8}, None, target_rows=40)
    assert notes == ["pair red-white: the target 'white' has no labels: only the label-free recommendation "
                     "(snakemake recommend) runs on this pair; every other target measures accuracies on the "
                     "target's labels"]
    with pytest.raises(DegenerateDomainError, match=r"the target domain 'white' has 2 sample\(s\)"):
        check_pair("red-white", {"5": 10, "6": 8}, None, target_rows=2)
    with pytest.raises(DegenerateDomainError, match=r"source domain 'white' has no labels.*\[red-white\]"):
        check_pair("white-red", None, {"5": 10, "6": 8})
    dom = DomainData("white", np.zeros((4, 2)), np.zeros(4, dtype=np.int64), read_info={"unlabelled": True})
    cache = FeatureCache("w.h5", "wine", ["5", "6"], [], {}, {"white": dom})
    with pytest.raises(CacheError, match=r"w.h5: the domain 'white' has no labels .*\(snakemake recommend\)"):
        cache.domain("white")
    assert cache.domain("white", labels=False) is dom and not dom.labelled


# --- the protocol's checks of a pair -----------------------------------------------------------------------
@pytest.mark.parametrize("source, target, message", [
    ({"5": 10}, {"5": 4, "6": 3}, r"pair red-white: the source domain 'red' has a single class \('5'\); it needs at "
                                  r"least 2"),
    ({"5": 10, "6": 8}, {"good": 5, "bad": 5}, r"have no label in common: every accuracy would be 0"),
    ({"5": 10, "6": 8, "7": 4}, {"5": 1, "6": 1}, r"the target domain 'white' has 2 sample\(s\); every domain needs "
                                                  r"at least 3"),
    ({"5": 10, "6": 8, "7": 4, "8": 2}, {"5": 2, "6": 1}, r"the target domain 'white' has 3 sample\(s\), fewer than "
                                                          r"the 4 classes of the source 'red'"),
])
def test_a_pair_whose_domains_cannot_run_the_protocol_is_refused(source, target, message):
    from otfs_workflow.protocol import DegenerateDomainError, check_pair

    with pytest.raises(DegenerateDomainError, match=message):
        check_pair("red-white", source, target)


def test_target_labels_the_source_lacks_are_warned_with_the_users_labels():
    from otfs_workflow.protocol import check_pair, draw_source_subset

    notes = check_pair("red-white", {"5": 600, "6": 500}, {"5": 1400, "6": 2000, "9": 5})
    assert notes == ["pair red-white: the target 'white' has labels that the source 'red' lacks (['9'], 5 of 3405 "
                     "target samples): no classifier trained on the source can predict them, so the accuracy is at "
                     "most 99.9 %"]
    with pytest.raises(ValueError, match=r"class '9' has no sample in the source domain"):
        draw_source_subset(np.array([1, 1, 2, 2]), 2, 0, classes=[1, 2, 3], class_names=["5", "6", "9"])


# --- the configuration -------------------------------------------------------------------------------------
def test_a_key_given_twice_is_named(tmp_path):
    from otfs_workflow.config import ConfigError, load_yaml

    (tmp_path / "mine.yaml").write_text("protocol:\n  iterations: 2\n  pairs: all\n  iterations: 3\n")
    with pytest.raises(ConfigError, match=r"mine.yaml, line 4, column 3: invalid YAML: the key 'iterations' is given "
                                          r"twice in one mapping \(first at line 2\)"):
        load_yaml(tmp_path / "mine.yaml")


def test_an_alias_bomb_is_refused_at_once(tmp_path):
    from otfs_workflow.config import ConfigError, load_yaml

    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    (tmp_path / "bomb.yaml").write_text("\n".join(lines + ["protocol: {pairs: *a9}"]) + "\n")
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"bomb.yaml: a6: the configuration expands to [\d,]+ values \(more than "
                                          r"1,000,000\): YAML aliases that repeat aliases"):
        load_yaml(tmp_path / "bomb.yaml")
    assert time.perf_counter() - start < 5


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path):
    from otfs_workflow.config import ConfigError, load_yaml

    (tmp_path / "mine.yaml").write_text("protocol:\n  pairs: [a-b, b-a\nfoo: 1\n")
    with pytest.raises(ConfigError, match=r"mine.yaml, line 3, column \d+: invalid YAML"):
        load_yaml(tmp_path / "mine.yaml")


@pytest.fixture(scope="module")
def shipped():
    import yaml

    with open(REPO / "config.yaml") as fh:
        return yaml.safe_load(fh)


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["datasets"].update({"my data": {"domains": ["a", "b"]}}),
     r"datasets: 'my data' is not a valid name: letters, digits, '_' and '-'"),
    (lambda c: c["datasets"].update({"../up": {"domains": ["a", "b"]}}), r"datasets: '\.\./up' is not a valid name"),
    (lambda c: c["datasets"]["office-caltech"]["domains"].append("web cam"),
     r"datasets.office-caltech.domains.4: 'web cam' is not a valid name: letters, digits and '_'"),
    (lambda c: c["datasets"]["office-caltech"]["domains"].append("a/b"), r"'a/b' is not a valid name"),
    (lambda c: c["datasets"]["office-caltech"]["domains"].append("_meta"), r"'_meta' is not a valid name"),
    (lambda c: c["feature_sets"].update({"wine 2": c["feature_sets"]["surf"]}), r"'wine 2' is not a valid name"),
    (lambda c: c["shift_recovery"]["data"].update(seed="7"), r"shift_recovery.data: seed: an integer, got '7' \(str\)"),
    (lambda c: c["sample_selection"].update(emd_max_iter="many"), r"sample_selection.emd_max_iter"),
])
def test_names_and_parameters_are_checked_before_they_become_paths(shipped, mutate, message):
    from otfs_workflow.config import ConfigError, validate_config

    config = copy.deepcopy(shipped)
    mutate(config)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")


def test_readers_check_their_parameters_types():
    with pytest.raises(ValueError, match=r"seed: an integer, got 7.0 \(float\)"):
        get_reader("planted-shifts", {"seed": 7.0})
    with pytest.raises(ValueError, match=r"separation: a finite number, got 'high'"):
        get_reader("planted-shifts", {"separation": "high"})
    with pytest.raises(ValueError, match=r"seed: an integer, got '3'"):
        get_reader("usps-mnist", {"seed": "3"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert get_reader("planted-shifts", {"seed": 7}).seed == 7


# --- the pipeline: a user's bad table or configuration stops it before any job ---------------------------
_MINE = """
datasets:
  mine: {domains: [a, b]}
feature_sets:
  mine:
    dataset: mine
    reader: {name: tabular, files: {a: data/local/a.csv, b: data/local/b.csv}, label: kind}
    preprocessing: [zscore]
protocol: {pairs: all}
"""


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    from .conftest import copy_workflow

    return copy_workflow(tmp_path_factory.mktemp("user_inputs"))


@pytest.mark.pipeline
@pytest.mark.parametrize("case, message", [
    ("bad_cells", r"feature set 'mine': 2 problem\(s\) in 2 file\(s\):\n.*a.csv: column 'beta' has 1 non-numeric "
                  r"cell\(s\) \(line 4: 'n\.a\.'\)\n.*b.csv: column 'gamma' has 1 empty or NaN cell\(s\) \(line 3\)"),
    ("single_class", r"pair a-b: the source domain 'a' has a single class \('x'\); it needs at least 2"),
    ("no_common_label", r"pair a-b: the source 'a' \(labels \['x', 'y'\]\) and the target 'b' \(labels \['u', 'v'\]\) "
                        r"have no label in common"),
    ("duplicate_key", r"mine.yaml, line \d+, column 1: invalid YAML: the key 'protocol' is given twice"),
    ("bad_name", r"datasets: 'my data' is not a valid name"),
])
def test_a_bad_table_or_configuration_stops_the_pipeline_before_any_job(workflow_copy, case, message):
    from .conftest import snakemake

    a, b = _frames()
    yaml_text = _MINE
    if case == "bad_cells":
        a = a.astype({"beta": object})
        a.loc[2, "beta"] = "n.a."
        b.loc[1, "gamma"] = np.nan
    elif case == "single_class":
        a["kind"] = "x"
    elif case == "no_common_label":
        a["kind"], b["kind"] = np.where(np.arange(24) % 2, "x", "y"), np.where(np.arange(24) % 2, "u", "v")
    elif case == "duplicate_key":
        yaml_text += "protocol: {pairs: [a-b]}\n"
    elif case == "bad_name":
        yaml_text = yaml_text.replace("mine: {domains", "my data: {domains").replace("dataset: mine", "dataset: my data")
    (workflow_copy / "data" / "local").mkdir(parents=True, exist_ok=True)
    a.to_csv(workflow_copy / "data/local/a.csv", index=False)
    b.to_csv(workflow_copy / "data/local/b.csv", index=False)
    (workflow_copy / "mine.yaml").write_text(yaml_text)
    proc = snakemake(workflow_copy, "--dry-run", "--cores", "1", "results/aggregate/mine/all/ot/NA/curves/summary.tsv",
                     "--configfile", "mine.yaml", check=False)
    assert proc.returncode != 0
    assert __import__("re").search(message, proc.stdout + proc.stderr), proc.stdout + proc.stderr
    assert "Job stats" not in proc.stdout  # no job was planned, let alone run


@pytest.mark.pipeline
def test_target_labels_the_source_lacks_are_a_note_and_the_run_proceeds(workflow_copy):
    # wine quality, red -> white: quality 9 exists in the white wines only. The source subsets draw from the
    # classes the source has (the internal index of '9' is never shown); the note names the label
    from .conftest import snakemake

    a, b = _frames(n=30)
    b.loc[:4, "kind"] = "w"
    a.to_csv(workflow_copy / "data/local/a.csv", index=False)
    b.to_csv(workflow_copy / "data/local/b.csv", index=False)
    (workflow_copy / "mine.yaml").write_text(_MINE.replace("pairs: all", "pairs: [a-b]"))
    target = "results/runs/mine/ranking/ks/a-b.json"
    proc = snakemake(workflow_copy, "--cores", "1", target, "--configfile", "mine.yaml")
    assert "pair a-b: the target 'b' has labels that the source 'a' lacks (['w'], 5 of 30 target samples)" in \
        proc.stderr + proc.stdout
    import json

    ranking = json.loads((workflow_copy / target).read_text())
    assert ranking["feature_names"] == ["alpha", "beta", "gamma", "delta"]
    # 20 per class of the source's x, y and z, each of which has fewer: every source sample
    assert all(sorted(it["source_subset"]) == list(range(30)) for it in ranking["iterations"])


@pytest.mark.subprocess
def test_the_logger_plugin_leaves_the_library_to_the_snakefile():
    # Snakemake imports its logger plug-ins when its command line starts, before the Snakefile: had the plug-in
    # imported otfs then, the workflow (which puts its own checkout's src/ first) would run another copy's
    import subprocess
    import sys

    code = ("import sys, snakemake_logger_plugin_otfs; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('otfs', 'otfs_workflow')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["[]"]


def test_the_logger_plugin_reads_the_command_lines_configfiles(tmp_path):
    from snakemake_logger_plugin_otfs import configfiles, name_yaml_problems

    argv = ["-n", "--configfile", "a.yaml", "b.yaml", "--cores", "1", "--configfile=c.yaml", "figure7"]
    assert configfiles(argv) == ["a.yaml", "b.yaml", "c.yaml"]
    assert configfiles(["--configfiles", "x.yaml", "--", "t"]) == ["x.yaml"] and configfiles(["all"]) == []
    (tmp_path / "good.yaml").write_text("a: 1\n")
    (tmp_path / "bad.yaml").write_text("a: [1, 2\nb: 1\n")
    paths = [str(tmp_path / n) for n in ("good.yaml", "bad.yaml", "missing.yaml")]
    assert name_yaml_problems(paths) == [f"{paths[1]}, line 2, column 2: invalid YAML: while parsing a flow sequence "
                                         "expected ',' or ']', but got ':'"]


@pytest.mark.pipeline
@pytest.mark.parametrize("text, message", [
    ("protocol:\n  iterations: 2\n  pairs: [a-b, b-a\nfoo: 1\n",
     r"mine.yaml, line 4, column 4: invalid YAML: while parsing a flow sequence"),
    ("protocol:\n  iterations: 2\nprotocol:\n  iterations: 3\n",
     r"mine.yaml, line 3, column 1: invalid YAML: the key 'protocol' is given twice in one mapping "
     r"\(first at line 1\)"),
])
def test_a_configfile_with_a_yaml_error_is_named_by_file_and_line(workflow_copy, text, message):
    # Snakemake reads --configfile before the Snakefile, and says only "Config file is not valid JSON or YAML":
    # the logger plug-in (the workflow profile's) names the line; a duplicate key, which Snakemake keeps in
    # silence, the workflow names when it reads the --configfile files again
    from .conftest import snakemake

    (workflow_copy / "mine.yaml").write_text(text)
    proc = snakemake(workflow_copy, "--dry-run", "--cores", "1", "--configfile", "mine.yaml", check=False)
    assert proc.returncode != 0 and __import__("re").search(message, proc.stdout + proc.stderr), \
        proc.stdout + proc.stderr


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["first", "middle", "last", "with -big"])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_as_float_matrix_finds_every_non_finite_cell_from_the_columns_extremes(value, where, layout):
    """The check reads each column's maximum and minimum only: a NaN anywhere in a column, +inf or -inf, next to
    other values of either sign, is found, and reported at the same (first) cell as numpy.isfinite finds."""
    from otfs._checks import as_float_matrix, check_square_scale

    rng = np.random.RandomState(3)
    X = np.asarray(rng.randn(7, 5), order=layout)
    row = {"first": 0, "middle": 3, "last": 6, "with -big": 2}[where]
    if where == "with -big":
        X[5, 1] = -1e100
    X[row, 1] = value
    X[4, 3] = value
    expected = np.argwhere(~np.isfinite(X))[0]
    with pytest.raises(ValueError, match=rf"X contains NaN or infinite values \(first at row {expected[0]}, "
                                         rf"column {expected[1]}\)"):
        as_float_matrix(X, "X")
    X[row, 1] = X[4, 3] = -3e200  # the magnitude of a negative value counts as its absolute value
    with pytest.raises(ValueError, match=r"X has values up to 3e\+200 \(column 1\)"):
        as_float_matrix(X, "X")
    with pytest.raises(ValueError, match=r"X has values up to 3e\+200 \(column 1\)"):
        check_square_scale(X, "X")
    X[row, 1] = X[4, 3] = 0.5
    assert as_float_matrix(X, "X") is not None
