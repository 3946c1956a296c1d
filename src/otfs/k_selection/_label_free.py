"""Which feature ranker, and how many features, without a target label: :class:`LabelFreeFeatureSelector`.

Shared code of the selection rules' folder (not a rule): the rules of :mod:`otfs.k_selection` choose k for one
ranker; this selector chooses the ranker and k together, from their scores.

A user of unsupervised domain adaptation has a labelled source and an
unlabelled target, and the benchmark's finding that no ranker is best
everywhere (optimal transport leads on images, source-only relevance on text
and tables). The selector answers on the user's own data: every candidate
(ranker, k) of a grid is fitted, adapted and scored by the label-free
selection rules of :mod:`otfs.k_selection`, and a **policy** picks one.

The candidates. Each ranker is fitted once on the two domains
(``fit(Xs, ys, X_target=Xt)``); for each k of the grid its first k features
are adapted once by the adapter, as the benchmark's classification stage
adapts them, and every scorer rule scores the adapted domains on the same
validation splits (:func:`otfs.k_selection.score_adapted`, one seed for every
candidate). The point of all ``d`` features is the same for every ranker
(its order only permutes the columns): it is computed once, on the data's
order, as the benchmark computes it. The data rules (``shift-test``,
``failing-loudly``) read the two domains once.

The policies (:func:`choose_candidate`), each a mapping with a ``kind``:

``{"kind": "scorer", "rule": R}``
    the candidate of the best score of rule ``R`` over every (ranker, k);
``{"kind": "rank-average", "rules": [R, ...]}``
    the candidate of the best mean rank over the rules' scores;
    either of them with ``"rankers": [N, ...]`` chooses among those rankers' candidates only (for example
    between OT and source ANOVA, the benchmark's two winners);
``{"kind": "fixed", "ranker": N, "k_rule": R}``
    always ranker ``N``, its k chosen by rule ``R`` (a scorer's best k, or a
    data rule's k*), as :mod:`otfs_workflow` measures a rule;
``{"kind": "all-features"}``
    every feature;
``{"kind": "gate", "feature": F, "threshold": t, "below": P, "above": Q}``
    policy ``P`` where the label-free measure ``F`` of the two domains is
    below ``t``, else ``Q``. The measure is ``"unshifted_fraction"``, the
    share of features the Benjamini–Hochberg KS test finds unshifted
    (``shift-test``'s count over ``d``);
``{"kind": "switch", "default": P, "challenger": Q, "rule": R, "margin": m}``
    a conservative switch: policy ``P``'s candidate unless policy ``Q``'s
    scores more than ``m`` above it under the scorer rule ``R`` (``m >= 0``,
    in ``R``'s units), then ``Q``'s. With ``P`` a fixed policy (all features,
    or a ranker at its label-free k) it keeps the simple rule unless a
    challenger is clearly better by the label-free score.

:func:`fixed_policy` and :data:`ALL_FEATURES` build the fixed policies; a fitted selector's
:meth:`LabelFreeFeatureSelector.choose` applies any policy to its candidates without refitting.

Ties go to the most features, then to the earlier ranker of ``rankers``.

The default, ``policy="learned"``, is the policy that the pipeline's
meta-evaluation (target ``recommend_evaluation``, by
:func:`~otfs.k_selection.evaluate_policies`) chose on the benchmark's
rows, for the adapter given, shipped with its provenance in
``otfs/k_selection/label_free_policy.json`` (:func:`learned_policy`); how well it
does on every task of the benchmark, family by family left out, is in the
file it names (``results/recommend/evaluation.md``), and
:meth:`LabelFreeFeatureSelector.how_sure` quotes it for the family nearest to
the data.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018.
.. [2] Y. Lalou et al. SKADA-Bench: Benchmarking Unsupervised Domain
   Adaptation Methods with Realistic Validation. 2024.
.. [3] Y. Benjamini, Y. Hochberg. Controlling the false discovery rate.
   JRSS B 57(1), 1995.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

__all__ = ["ALL_FEATURES", "DEFAULT_GRID", "DEFAULT_RANKERS", "LabelFreeFeatureSelector", "MEASURES",
           "POLICY_KINDS", "SCORER_RULES", "DATA_RULES", "check_policy", "choose_candidate", "describe_policy",
           "fixed_policy", "canonical_row_order", "data_profile", "learned_policy", "most_similar_family",
           "policy_rankers", "policy_rules", "read_policy_file", "resolve_grid", "shipped_policy_file"]

#: The benchmark's rankers (config ``model_selection.rankers``): the candidates by default.
DEFAULT_RANKERS = ("ot", "wasserstein1d", "ks", "mmd", "domain-auc", "source-anova", "random")
#: The benchmark's numbers of features (grid ``leaderboard``).
DEFAULT_GRID = ("d/32", "d/16", "d/8", "d/4", "d/2", "d")
#: The label-free scorer rules of :mod:`otfs.k_selection` computed by default.
SCORER_RULES = ("IW", "DEV", "circular", "entropy", "SND", "MixVal", "MaNo", "ATC", "COT", "EnsV")
#: The data rules, read once from the two domains.
DATA_RULES = {"shift-test": {"q": 0.05}, "failing-loudly": {"alpha": 0.05}}
#: The kinds of policy :func:`choose_candidate` knows.
POLICY_KINDS = ("scorer", "rank-average", "fixed", "all-features", "gate", "switch")
#: The policy of every feature.
ALL_FEATURES = {"kind": "all-features"}
#: The label-free measures of the two domains a ``gate`` policy reads.
MEASURES = ("unshifted_fraction",)

_POLICY_FILE = "label_free_policy.json"


def resolve_grid(grid, d: int, name: str = "n_features_grid") -> list[int]:
    """The sorted distinct numbers of features of ``grid`` for ``d`` features.

    Entries are integers in ``[1, d]``, ``"d"``, fractions ``"d/m"`` (``d // m``; one that gives 0 is left
    out, as the pipeline's grids do) or floats in (0, 1] (``max(1, int(f * d))``). An integer above ``d`` or
    below 1 is an error naming ``name``.

    >>> resolve_grid(("d/32", "d/8", "d", 10), 400)
    [10, 12, 50, 400]
    """
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence) or len(grid) == 0:
        raise ValueError(f"{name}: a non-empty list of numbers of features, got {grid!r}")
    out = []
    for spec in grid:
        if isinstance(spec, (Integral, np.integer)) and not isinstance(spec, bool):
            n = int(spec)
            if not 1 <= n <= d:
                raise ValueError(f"{name}: {n} features asked, the data have d = {d} (each number must be in "
                                 f"[1, {d}])")
        elif isinstance(spec, Real) and not isinstance(spec, bool):
            if not 0 < spec <= 1:
                raise ValueError(f"{name}: the fraction {spec!r} is outside (0, 1]")
            n = max(1, int(spec * d))
        elif spec == "d":
            n = d
        elif isinstance(spec, str) and spec.startswith("d/") and spec[2:].isdigit() and int(spec[2:]) > 0:
            n = d // int(spec[2:])
            if n == 0:
                continue
        else:
            raise ValueError(f"{name}: {spec!r} is neither an integer, a fraction in (0, 1], 'd' nor 'd/m'")
        out.append(n)
    if not out:
        raise ValueError(f"{name}: every number of {list(grid)} gives 0 of the {d} features")
    return sorted(set(out))


def fixed_policy(ranker: str, k_rule: str = "circular") -> dict:
    """The fixed policy "always ``ranker``, its k chosen by the rule ``k_rule``" (a scorer's best k, or a
    data rule's k*).

    >>> fixed_policy("ot")
    {'kind': 'fixed', 'ranker': 'ot', 'k_rule': 'circular'}
    """
    return {"kind": "fixed", "ranker": str(ranker), "k_rule": str(k_rule)}


def read_policy_file(path) -> dict:
    """A policy file (``label_free_policy.json``'s format) read and checked: a mapping with ``policies``
    (adapter name to policy) and ``default_adapter`` among them; an error names the file and what it lacks."""
    path = Path(path)
    try:
        shipped = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: the policy file cannot be read ({err})") from err
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})") from err
    if not isinstance(shipped, Mapping):
        raise ValueError(f"{path}: a JSON object with 'policies' and 'default_adapter', got {type(shipped).__name__}")
    missing = [k for k in ("policies", "default_adapter") if k not in shipped]
    if missing:
        raise ValueError(f"{path}: the policy file lacks {missing}")
    policies = shipped["policies"]
    if not isinstance(policies, Mapping) or not policies:
        raise ValueError(f"{path}: 'policies' must map adapter names to policies, got {policies!r}")
    if shipped["default_adapter"] not in policies:
        raise ValueError(f"{path}: 'default_adapter' {shipped['default_adapter']!r} is none of its policies' "
                         f"adapters {sorted(policies)}")
    for adapter, policy in policies.items():
        check_policy(policy, f"{path}: policies.{adapter}")
    return dict(shipped)


def shipped_policy_file() -> Path:
    """The path of the shipped policy file, ``otfs/k_selection/label_free_policy.json``."""
    return Path(__file__).parent / _POLICY_FILE


def learned_policy(adapter: str | None = None) -> tuple[dict, dict]:
    """The shipped policy for ``adapter`` (its own, or the file's default with a warning), and the file's
    provenance."""
    shipped = read_policy_file(shipped_policy_file())
    policies = shipped["policies"]
    if adapter in policies:
        return dict(policies[adapter]), dict(shipped.get("provenance", {}))
    default = shipped["default_adapter"]
    if adapter is not None:
        warnings.warn(f"LabelFreeFeatureSelector: no learned policy for the adapter {adapter!r} (learned for "
                      f"{sorted(policies)}); using {default!r}'s", UserWarning, stacklevel=3)
    return dict(policies[default]), dict(shipped.get("provenance", {}))


def policy_rules(policy: Mapping) -> set[str]:
    """The selection rules a policy reads (scorer and data rules alike)."""
    kind = policy.get("kind")
    if kind == "scorer":
        return {policy["rule"]}
    if kind == "rank-average":
        return set(policy["rules"])
    if kind == "fixed":
        return {policy["k_rule"]}
    if kind == "gate":
        return {"shift-test"} | policy_rules(policy["below"]) | policy_rules(policy["above"])
    if kind == "switch":
        return {policy["rule"]} | policy_rules(policy["default"]) | policy_rules(policy["challenger"])
    return set()


def check_policy(policy, where: str = "policy") -> dict:
    """``policy`` validated (its kind, its keys, its rules' names); an error names what is wrong."""
    from otfs.k_selection import SELECTION_RULES

    if not isinstance(policy, Mapping) or policy.get("kind") not in POLICY_KINDS:
        raise ValueError(f"{where}: a mapping whose 'kind' is one of {list(POLICY_KINDS)}, got {policy!r}")
    kind = policy["kind"]
    need = {"scorer": ("rule",), "rank-average": ("rules",), "fixed": ("ranker", "k_rule"), "all-features": (),
            "gate": ("feature", "threshold", "below", "above"),
            "switch": ("default", "challenger", "rule", "margin")}[kind]
    missing = [k for k in need if k not in policy]
    if missing:
        raise ValueError(f"{where}: a {kind!r} policy needs {list(need)}; missing {missing}")
    if kind == "gate":
        if policy["feature"] not in MEASURES:
            raise ValueError(f"{where}.feature: one of {list(MEASURES)}, got {policy['feature']!r}")
        check_policy(policy["below"], f"{where}.below")
        check_policy(policy["above"], f"{where}.above")
    if kind == "switch":
        check_policy(policy["default"], f"{where}.default")
        check_policy(policy["challenger"], f"{where}.challenger")
        m = policy["margin"]
        if isinstance(m, bool) or not isinstance(m, Real) or not np.isfinite(m) or m < 0:
            raise ValueError(f"{where}.margin: a finite number >= 0 (in the rule's units), got {m!r}")
    for rule in policy_rules(policy) - {"shift-test"} if kind == "gate" else policy_rules(policy):
        if rule not in SELECTION_RULES:
            raise ValueError(f"{where}: unknown selection rule {rule!r}; registered: {sorted(SELECTION_RULES)}")
        if SELECTION_RULES[rule].reads_target_labels or SELECTION_RULES[rule].kind == "oracle":
            raise ValueError(f"{where}: the rule {rule!r} reads target labels (or the accuracies, which do): "
                             "it is a reference, not a label-free rule")
    if kind == "switch" and SELECTION_RULES[policy["rule"]].kind != "scorer":
        raise ValueError(f"{where}.rule: a switch compares scores, so a scorer rule; {policy['rule']!r} is a "
                         f"{SELECTION_RULES[policy['rule']].kind} rule")
    if kind == "rank-average" and not policy["rules"]:
        raise ValueError(f"{where}.rules: at least one rule")
    return dict(policy)


def describe_policy(policy: Mapping) -> str:
    """A policy in words.

    >>> describe_policy(fixed_policy("ot"))
    "always 'ot', k by 'circular'"
    """
    kind = policy["kind"]
    among = f" among {' and '.join(policy['rankers'])}" if policy.get("rankers") else ""
    if kind == "scorer":
        return f"the candidate of the best {policy['rule']} score{among}"
    if kind == "rank-average":
        return f"the candidate of the best mean rank over {', '.join(policy['rules'])}{among}"
    if kind == "fixed":
        return f"always {policy['ranker']!r}, k by {policy['k_rule']!r}"
    if kind == "all-features":
        return "every feature"
    if kind == "switch":
        return (f"{describe_policy(policy['default'])}, unless {describe_policy(policy['challenger'])} scores more "
                f"than {policy['margin']:g} above it under {policy['rule']}")
    return (f"where under {policy['threshold']:g} of the features test unshifted, {describe_policy(policy['below'])}; "
            f"else {describe_policy(policy['above'])}")


def _tie_break(table: pd.DataFrame, best: np.ndarray) -> int:
    """Among the rows ``best`` (a mask), the one of the most features, then of the earliest row."""
    idx = np.flatnonzero(best)
    k = table["k"].to_numpy()[idx]
    return int(idx[k == k.max()][0])


def _best_of(table: pd.DataFrame, values: np.ndarray) -> int:
    """The row of the largest value (NaN never wins; all NaN: every feature), ties by :func:`_tie_break`."""
    values = np.asarray(values, dtype=float)
    if np.isnan(values).all():
        return _tie_break(table, table["k"].to_numpy() == table["k"].max())
    return _tie_break(table, values == np.nanmax(values))


def choose_candidate(table: pd.DataFrame, policy: Mapping, measures: Mapping[str, float] | None = None) -> int:
    """The position (0-based row) in ``table`` of the candidate ``policy`` picks.

    Parameters
    ----------
    table : DataFrame
        One row per candidate (ranker, k), in the rankers' order: columns ``ranker``, ``k``, each scorer
        rule's ``<rule>:score`` (higher is better, skada's sign) and each data rule's ``<rule>:k`` (its k*,
        the same on every row).
    policy : mapping
        See the module's docstring.
    measures : mapping, optional
        The label-free measures of the two domains a ``gate`` reads (``unshifted_fraction``).
    """
    from otfs.k_selection import choose_k

    kind = policy["kind"]
    table = table.reset_index(drop=True)
    if kind == "gate":
        value = (measures or {}).get(policy["feature"])
        if value is None or not np.isfinite(value):
            raise ValueError(f"the gate reads the measure {policy['feature']!r}, which is missing ({measures!r})")
        branch = policy["below"] if value < policy["threshold"] else policy["above"]
        return choose_candidate(table, branch, measures)
    if kind == "switch":
        keep = choose_candidate(table, policy["default"], measures)
        other = choose_candidate(table, policy["challenger"], measures)
        s = table[_score_column(table, policy["rule"])].to_numpy(dtype=float)
        gain = s[other] - s[keep]
        return other if np.isfinite(gain) and gain > policy["margin"] else keep
    if kind in ("scorer", "rank-average") and policy.get("rankers"):
        rows = np.flatnonzero(table["ranker"].isin(policy["rankers"]).to_numpy())
        if rows.size == 0:
            raise ValueError(f"the policy's rankers {list(policy['rankers'])} are not candidates "
                             f"({sorted(set(table['ranker']))})")
        inner = {k: v for k, v in policy.items() if k != "rankers"}
        return int(rows[choose_candidate(table.iloc[rows], inner, measures)])
    if kind == "all-features":
        return _tie_break(table, table["k"].to_numpy() == table["k"].max())
    if kind == "scorer":
        return _best_of(table, table[_score_column(table, policy["rule"])].to_numpy())
    if kind == "rank-average":
        from scipy.stats import rankdata

        ranks = []
        for rule in policy["rules"]:
            s = table[_score_column(table, rule)].to_numpy(dtype=float)
            s = np.where(np.isnan(s), -np.inf, s)  # a NaN score ranks last
            ranks.append(rankdata(-s, method="average"))
        return _best_of(table, -np.mean(ranks, axis=0))
    # fixed
    rows = np.flatnonzero(table["ranker"].to_numpy() == policy["ranker"])
    if rows.size == 0:
        raise ValueError(f"the policy's ranker {policy['ranker']!r} is not a candidate "
                         f"({sorted(set(table['ranker']))})")
    part = table.iloc[rows]
    rule = policy["k_rule"]
    if f"{rule}:k" in table.columns:
        k = int(part[f"{rule}:k"].iloc[0])
    else:
        k = choose_k(part["k"].to_numpy(), part[_score_column(table, rule)].to_numpy())
    match = rows[part["k"].to_numpy() == k]
    if match.size == 0:
        raise ValueError(f"the rule {rule!r} chose k = {k}, not a candidate of {policy['ranker']!r}")
    return int(match[0])


def _score_column(table: pd.DataFrame, rule: str) -> str:
    col = f"{rule}:score"
    if col not in table.columns:
        raise ValueError(f"the candidates have no scores of the rule {rule!r} (column {col!r})")
    return col


def data_profile(arrays: Sequence[np.ndarray]) -> dict:
    """What two domains' data (or any arrays of the same features) are like, for finding the benchmark's family
    most like them: ``d``, ``n`` (the samples of all the arrays) and ``sparsity``, the share of values equal to
    their feature's most common value in their array (the zeros of word counts; unchanged by a per-feature
    z-score, which moves the zeros but keeps them equal).

    >>> data_profile([np.array([[0, 1], [0, 2]]), np.array([[0, 3], [5, 3]])])
    {'d': 2, 'n': 4, 'sparsity': 0.75}
    """
    arrays = [np.asarray(X) for X in arrays]
    n = sum(X.shape[0] for X in arrays)
    at_mode = 0
    for X in arrays:
        for j in range(X.shape[1]):
            at_mode += int(np.unique(X[:, j], return_counts=True)[1].max()) if X.shape[0] else 0
    return {"d": int(arrays[0].shape[1]), "n": int(n), "sparsity": at_mode / max(n * arrays[0].shape[1], 1)}


def most_similar_family(profile: Mapping, by_family: Mapping) -> tuple[str, dict] | None:
    """The family of ``by_family`` (the policy file's) nearest to a :func:`data_profile`: the least
    ``|log10 d - log10 d'| + |log10 n - log10 n'| + |sparsity - sparsity'|``; None where no family has a profile."""
    best, where = None, None
    for family, rec in by_family.items():
        if not all(k in rec for k in ("d", "n", "sparsity")):
            continue
        dist = (abs(np.log10(profile["d"]) - np.log10(rec["d"])) + abs(np.log10(profile["n"]) - np.log10(rec["n"]))
                + abs(profile["sparsity"] - rec["sparsity"]))
        if best is None or dist < best:
            best, where = dist, family
    return None if where is None else (where, dict(by_family[where]))



class LabelFreeFeatureSelector(SelectorMixin, BaseEstimator):
    """Choose a feature ranker and a number of features on a labelled source and an unlabelled target.

    Every candidate (ranker, k) is ranked, adapted and scored without a target
    label, and a policy picks one (module this module). The kept
    features are the chosen ranker's first ``k_``.

    Parameters
    ----------
    rankers : list of str or estimator, or None, default=None
        The candidate rankers: names of :data:`otfs.rankers.FEATURE_RANKERS`
        or ranker estimators (named by their class). None: the benchmark's
        seven (:data:`DEFAULT_RANKERS`), which the learned policy was chosen
        among.
    adapter : str or adapter, default="NA"
        The adapter the candidates are scored after (a name of
        :data:`otfs.adapters.ADAPTERS` or an instance with ``adapt``). The
        learned policies are chosen per adapter; ``"NA"`` (no adaptation)
        applies to every kind of data.
    n_features_grid : list, default=("d/32", "d/16", "d/8", "d/4", "d/2", "d")
        The numbers of features: integers in ``[1, d]``, ``"d"``, ``"d/m"``
        or fractions in (0, 1] (:func:`resolve_grid`). ``d`` is always added:
        keeping every feature is a candidate.
    policy : "learned", a rule name, "rank-average" or mapping, default="learned"
        How a candidate is chosen. ``"learned"``: the shipped policy of the
        adapter (:func:`learned_policy`); a scorer rule's name (``"IW"``): its
        best score over every candidate; ``"rank-average"``: the best mean
        rank over ``scorers``; a mapping: see :func:`choose_candidate`.
    scorers : list of str or None, default=None
        The scorer rules computed for every candidate (:data:`SCORER_RULES`
        by default, so that ``candidates_`` holds every score); the rules the
        policy reads are always added.
    classifier : str or mapping, default={"name": "knn", "n_neighbors": 5}
        The probabilistic classifier the scorers validate
        (:func:`otfs.classification.make_classifier`), the benchmark's.
    n_splits : int, default=2
        Validation splits (skada's ``StratifiedDomainShuffleSplit``), the same for every candidate.
    test_size : float, default=0.5
        The validation share of each split.
    random_state : int, RandomState instance or None, default=None
        Seeds the splits, the scorers and every ranker that has a ``random_state`` (each from its name):
        the same integer gives the same choice.

    Attributes
    ----------
    ranker_ : str
        The chosen ranker's name.
    ranker_estimator_ : estimator
        The chosen ranker, fitted.
    k_ : int
        The number of features kept.
    policy_ : dict
        The policy applied.
    candidates_ : DataFrame
        One row per (ranker, k): ``ranker``, ``k``, ``fraction``, each scorer's ``<rule>:score`` and warning
        count, each data rule's ``<rule>:k``, and ``chosen``.
    measures_ : dict
        The label-free measures of the two domains (``unshifted``, ``unshifted_fraction``, ``d``).
    candidate_orders_ : dict of str to ndarray
        Every candidate ranker's feature order (its ``order_``), by name: the kept features of any
        candidate (ranker, k) are ``candidate_orders_[ranker][:k]``.
    profile_ : dict
        The fitted domains' :func:`data_profile` (``d``, ``n``, ``sparsity``): what :meth:`how_sure` compares
        with the benchmark's families.
    runner_up_ : dict
        The best candidate of another ranker under the same policy's ordering, where one exists
        (``ranker``, ``k``), with what separates it from the choice.
    scores_, ranking_, order_, support_ : ndarray
        The chosen ranker's, with ``support_`` its first ``k_`` features.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from otfs import LabelFreeFeatureSelector
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(60, 8)), rng.normal(size=(60, 8))
    >>> ys = (Xs[:, 0] > 0).astype(int)
    >>> Xt[:, 7] += 3                                        # feature 7 shifted in the target
    >>> sel = LabelFreeFeatureSelector(rankers=["ks", "source-anova"], policy="IW",
    ...                                n_features_grid=["d/4", "d/2"], random_state=0)
    >>> sel.fit(Xs, ys, X_target=Xt).k_ in (2, 4, 8)
    True

    References
    ----------
    .. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for Unsupervised Domain Adaptation
       using Optimal Transport. ECML PKDD 2018.
    .. [2] Y. Lalou et al. SKADA-Bench: Benchmarking Unsupervised Domain Adaptation Methods with
       Realistic Validation. 2024.
    """

    _parameter_constraints: dict = {
        "rankers": [list, tuple, None],
        "adapter": "no_validation",
        "n_features_grid": [list, tuple],
        "policy": [str, dict],
        "scorers": [list, tuple, None],
        "classifier": [str, dict, None],
        "n_splits": [Interval(Integral, 1, None, closed="left")],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    }

    # skada's pipelines route sample_domain to fit; a scikit-learn Pipeline routes X_target.
    __metadata_request__fit = {"sample_domain": True, "X_target": True}

    def __init__(self, rankers=None, adapter="NA", n_features_grid=DEFAULT_GRID, policy="learned", scorers=None,
                 classifier=None, n_splits=2, test_size=0.5, random_state=None):
        self.rankers = rankers
        self.adapter = adapter
        self.n_features_grid = n_features_grid
        self.policy = policy
        self.scorers = scorers
        self.classifier = classifier
        self.n_splits = n_splits
        self.test_size = test_size
        self.random_state = random_state

    # -- fitting ---------------------------------------------------------------------------------------------
    def fit(self, X, y, X_target=None, sample_domain=None):
        """Choose the ranker and k on the source ``(X, y)`` and the target (``X_target``, or the rows of
        ``X`` whose ``sample_domain`` is negative; their labels are never read). Returns ``self``."""
        from otfs.base import check_two_domains
        from otfs.k_selection._base import distinct_models, ensemble_scores, get_rule, score_adapted

        self._validate_params()
        if y is None:
            raise ValueError("LabelFreeFeatureSelector: y (the source labels) is required")
        Xs, Xt, ys = check_two_domains(self, X, X_target, sample_domain, y, min_samples=2)
        self._check_labels(ys, y, sample_domain)
        # each domain in a canonical order of its rows: the splits, subsamples and seeded rankers then see the
        # same arrays whatever order the rows came in, so a permutation of the rows gives the same choice
        source_order = canonical_row_order(Xs, ys)
        Xs, ys = Xs[source_order], np.asarray(ys)[source_order]
        Xt = Xt[canonical_row_order(Xt)]
        d = Xs.shape[1]
        if len(self.n_features_grid) == 0:
            raise ValueError("n_features_grid: an empty grid; give at least one number of features (all the "
                             "features is always a candidate beside them)")
        counts = resolve_grid(list(self.n_features_grid), d)
        counts = sorted(set(counts) | {d})
        policy, self.policy_provenance_ = self._resolve_policy()
        seed = self._seed()
        rankers = self._build_rankers(seed)
        missing = sorted(policy_rankers(policy) - set(rankers))
        if missing:
            shipped = " (the shipped policy)" if self.policy == "learned" else ""
            raise ValueError(f"policy{shipped}: {describe_policy(policy)} reads the ranker(s) {missing}, which are not among "
                             f"the candidate rankers {list(rankers)}; add them to rankers, or give another policy "
                             "(policy='circular', a scorer's name, or a mapping)")
        scorer_names = list(dict.fromkeys([*(self.scorers if self.scorers is not None else SCORER_RULES),
                                           *(r for r in policy_rules(policy) if r not in DATA_RULES)]))
        scorers = {name: get_rule(name) for name in scorer_names}
        bad = [n for n, r in scorers.items() if r.kind != "scorer"]
        if bad:
            raise ValueError(f"scorers: {bad} are not scorer rules (their kinds: "
                             f"{[scorers[n].kind for n in bad]}); the data rules {list(DATA_RULES)} always run")
        data = {}
        for name, params in DATA_RULES.items():
            k, info = get_rule(name, **params).choose_count(Xs, Xt, counts)
            data[f"{name}:k"] = int(k)
            data.update({f"{name}:{key}": v for key, v in info.items()})
        self.measures_ = {"d": d, "unshifted": int(data["shift-test:unshifted"]),
                          "unshifted_fraction": data["shift-test:unshifted"] / d}
        clf = self._classifier()
        rows, fitted, every, probas = [], {}, None, []
        # the points' columns, gathered from column-major copies: the same arrays as Xs[:, cols], faster
        Xs_columns, Xt_columns = np.asfortranarray(Xs), np.asfortranarray(Xt)
        for name, ranker in rankers.items():
            fitted[name] = ranker.fit(Xs, ys, X_target=Xt)
            for k in counts:
                if k == d and every is not None:  # all the features: the same point for every ranker
                    rows.append({"ranker": name, **every[0]})
                    probas.append(every[1])
                    continue
                cols = np.arange(d) if k == d else fitted[name].order_[:k]
                Zs, Zt = self._adapter().adapt(Xs_columns[:, cols], ys, Xt_columns[:, cols])
                point, proba = {"k": int(k), "fraction": k / d}, []
                for rule, rec in score_adapted(Zs, ys, Zt, scorers, clf, self.n_splits, self.test_size,
                                               seed, target_proba=proba).items():
                    point.update({f"{rule}:{key}": v for key, v in rec.items()})
                point.update(data)
                if k == d:
                    every = (point, proba[0])
                rows.append({"ranker": name, **point})
                probas.append(proba[0])
        table = pd.DataFrame(rows)
        # the ensemble's members are the distinct models: the point of all the features counts once
        for rule, rec in ensemble_scores(scorers, probas, distinct_models(table["k"], d)).items():
            table[f"{rule}:score"], table[f"{rule}:warnings"] = rec["score"], rec["warnings"]
        pick = choose_candidate(table, policy, self.measures_)
        table["chosen"] = np.arange(len(table)) == pick
        self.candidates_, self.policy_ = table, policy
        self.ranker_, self.k_ = str(table["ranker"].iloc[pick]), int(table["k"].iloc[pick])
        self.runner_up_ = self._runner_up(table, policy)
        self.candidate_orders_ = {name: np.asarray(est.order_).copy() for name, est in fitted.items()}
        self.profile_ = data_profile([Xs, Xt])
        self.ranker_estimator_ = fitted[self.ranker_]
        est = self.ranker_estimator_
        self.scores_, self.order_, self.ranking_ = est.scores_, est.order_, est.ranking_
        support = np.zeros(d, dtype=bool)
        support[(np.arange(d) if self.k_ == d else est.order_[:self.k_])] = True
        self.support_, self.n_features_ = support, self.k_
        self._warn_degenerate(table, scorer_names)
        return self

    def choose(self, policy) -> tuple[str, int]:
        """The (ranker, k) that ``policy`` (a mapping, a rule's name, ``"rank-average"`` or ``"learned"``)
        picks among the fitted candidates, without refitting: compare the candidates under a fixed policy
        (:func:`fixed_policy`, :data:`ALL_FEATURES`) or another scorer. The policy's rules must be among the
        computed scores (``scorers``)."""
        check_is_fitted(self, "candidates_")
        if isinstance(policy, Mapping):
            policy = check_policy(policy)
        else:
            policy = clone(self).set_params(policy=policy)._resolve_policy()[0]
        pick = choose_candidate(self.candidates_, policy, self.measures_)
        return str(self.candidates_["ranker"].iloc[pick]), int(self.candidates_["k"].iloc[pick])

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    # -- helpers ---------------------------------------------------------------------------------------------
    def _check_labels(self, ys, y, sample_domain) -> None:
        classes, sizes = np.unique(ys, return_counts=True)
        if classes.size < 2:
            raise ValueError(f"LabelFreeFeatureSelector: the source has one class ({classes.tolist()}); the "
                             "rankers and scorers need at least two")
        if sizes.min() < 2:
            lone = classes[sizes < 2].tolist()
            raise ValueError(f"LabelFreeFeatureSelector: y (the source labels) has one sample of the class "
                             f"{lone[0]!r}" + (f" (and of {lone[1:]})" if len(lone) > 1 else "") + "; the "
                             "validation splits are stratified by class, so each class needs at least two")
        if sample_domain is None:
            return
        from otfs._checks import source_mask

        yt = np.asarray(y)[~source_mask(sample_domain, len(y))]
        labelled = yt[~_masked(yt)]
        if labelled.size and not np.isin(labelled, classes).any():
            raise ValueError(f"LabelFreeFeatureSelector: the source and target labels share no class (source "
                             f"{classes.tolist()}, target {np.unique(labelled).tolist()}); target labels are "
                             "never read, but labels that no class matches say the domains were encoded apart")

    def _resolve_policy(self) -> tuple[dict, dict]:
        if isinstance(self.policy, Mapping):
            return check_policy(self.policy), {}
        if self.policy == "learned":
            name = self.adapter if isinstance(self.adapter, str) else None
            if name is None:
                warnings.warn("LabelFreeFeatureSelector: an adapter given as an estimator has no learned policy; "
                              "using the default adapter's", UserWarning, stacklevel=3)
            policy, provenance = learned_policy(name)
            return check_policy(policy, "the shipped policy"), provenance
        if self.policy == "rank-average":
            rules = list(self.scorers) if self.scorers is not None else list(SCORER_RULES)
            return check_policy({"kind": "rank-average", "rules": rules}), {}
        return check_policy({"kind": "scorer", "rule": self.policy}), {}

    def _seed(self) -> int:
        from otfs._checks import check_random_state

        if isinstance(self.random_state, (Integral, np.integer)):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(0, 2**31 - 1))

    def _build_rankers(self, seed: int) -> dict:
        from otfs._checks import derive_seed
        from otfs.rankers import FEATURE_RANKERS

        out = {}
        for spec in self.rankers if self.rankers is not None else DEFAULT_RANKERS:
            if isinstance(spec, str):
                name, est = spec, FEATURE_RANKERS[spec]()
            else:
                name, est = type(spec).__name__, clone(spec)
            if name in out:
                raise ValueError(f"rankers: {name!r} is given twice")
            if "random_state" in est.get_params():
                est.set_params(random_state=derive_seed(seed, name, "ranker"))
            out[name] = est
        if not out:
            raise ValueError("rankers: at least one ranker")
        return out

    def _adapter(self):
        from otfs.adapters import get_adapter

        return get_adapter(self.adapter) if isinstance(self.adapter, str) else clone(self.adapter)

    def _classifier(self):
        from otfs.classification import make_classifier

        return make_classifier(self.classifier if self.classifier is not None else {"name": "knn", "n_neighbors": 5})

    def _runner_up(self, table: pd.DataFrame, policy: Mapping) -> dict:
        """The candidate the policy picks among the other rankers' rows (the point of all features, shared,
        stays in), and its scores beside the choice's."""
        others = table[table["ranker"] != self.ranker_]
        if others.empty:
            return {}
        others = others[~((others["k"] == table["k"].max()) & (self.k_ == table["k"].max()))]
        if others.empty:
            return {}
        pos = choose_candidate(others, _for_other_rankers(policy, others), self.measures_)
        row = others.iloc[pos]
        chosen = table[table["chosen"]].iloc[0]
        score_cols = [c for c in table.columns if c.endswith(":score")]
        return {"ranker": str(row["ranker"]), "k": int(row["k"]),
                "scores": {c[:-6]: float(row[c]) for c in score_cols},
                "margin": {c[:-6]: float(chosen[c] - row[c]) for c in score_cols}}

    def _warn_degenerate(self, table: pd.DataFrame, scorer_names) -> None:
        from otfs._checks import DegenerateResultWarning

        for rule in scorer_names:
            s = table[f"{rule}:score"].to_numpy(dtype=float)
            if np.isnan(s).all():
                warnings.warn(f"LabelFreeFeatureSelector: every score of {rule!r} is NaN", DegenerateResultWarning,
                              stacklevel=3)
            elif np.nanmax(s) == np.nanmin(s) and len(set(table["k"])) > 1:
                warnings.warn(f"LabelFreeFeatureSelector: every candidate scores {np.nanmax(s):.6g} under {rule!r}: "
                              "it separates none", DegenerateResultWarning, stacklevel=3)

    def how_sure(self, profile: Mapping | None = None) -> dict:
        """How far to trust the choice, as a JSON-ready mapping: where the policy is the shipped one, its nested
        regret (points lost on benchmark families it never saw), pooled and, as ``similar_family``, on the
        benchmark family nearest to the data's :func:`data_profile` (``profile``; default the fitted domains',
        :attr:`profile_`); ATC's estimate of the chosen candidate's target accuracy beside its source validation
        accuracy; whether every feature is kept; and whether a random order's best candidate scores as well
        as the choice under the policy's scorers (``random_ties_or_beats``)."""
        check_is_fitted(self, "support_")
        profile = self.profile_ if profile is None else profile
        out: dict = {}
        if isinstance(self.policy, str) and self.policy == "learned":
            shipped = read_policy_file(shipped_policy_file())
            adapter = self.adapter if isinstance(self.adapter, str) else None
            learned = shipped.get("learned", {}).get(
                adapter if adapter in shipped["policies"] else shipped["default_adapter"], {})
            out["nested_regret"] = learned.get("nested_regret")
            out["policy_learned_on"] = (self.policy_provenance_ or {}).get("learned_on")
            out["profile"] = dict(profile)
            similar = most_similar_family(profile, learned.get("by_family", {}))
            if similar is not None:
                out["similar_family"] = {"family": similar[0], **similar[1]}
        table = self.candidates_
        chosen = table[table["chosen"]].iloc[0]
        if "ATC:score" in chosen:
            out["atc_target_accuracy"] = float(chosen["ATC:score"])
            out["source_validation_accuracy"] = float(chosen.get("ATC:source_accuracy", float("nan")))
        out["all_features"] = bool(self.k_ == self.measures_["d"])
        if out["all_features"]:
            pass  # every feature is kept: no ranking plays a part, a random order's included
        elif "random" in set(table["ranker"]) and self.ranker_ != "random":
            rules = sorted(r for r in policy_rules(self.policy_) if r not in DATA_RULES and f"{r}:score" in table)
            rand = table[table["ranker"] == "random"]
            if rules:
                best_random = {r: float(rand[f"{r}:score"].max()) for r in rules}
                out["random_ties_or_beats"] = bool(all(best_random[r] >= float(chosen[f"{r}:score"]) for r in rules))
        elif self.ranker_ == "random":
            out["random_ties_or_beats"] = True
        return out

    def recommendation(self) -> dict:
        """What was chosen, as a JSON-ready mapping: the ranker, k, the kept features (by name where ``X`` had
        names, else by index), the runner-up, the measures, the policy, how sure (:meth:`how_sure`) and every
        candidate's scores."""
        check_is_fitted(self, "support_")
        names = getattr(self, "feature_names_in_", None)
        kept = self.order_[:self.k_] if self.k_ < self.n_features_in_ else np.arange(self.n_features_in_)
        return {"ranker": self.ranker_, "k": self.k_, "d": int(self.n_features_in_),
                "features": [str(names[i]) for i in kept] if names is not None else [int(i) for i in kept],
                "runner_up": self.runner_up_, "measures": self.measures_, "policy": self.policy_,
                "policy_provenance": self.policy_provenance_, "how_sure": self.how_sure(),
                "candidates": json.loads(self.candidates_.to_json(orient="records"))}


def _for_other_rankers(policy: Mapping, table: pd.DataFrame) -> dict:
    """``policy`` as it applies to the rows ``table`` of the other rankers: a fixed policy of a ranker absent
    there becomes its k rule's best candidate among them (every feature where the rule has no score)."""
    kind = policy["kind"]
    if kind == "fixed" and policy["ranker"] not in set(table["ranker"]):
        rule = policy["k_rule"]
        return {"kind": "scorer", "rule": rule} if f"{rule}:score" in table.columns else dict(ALL_FEATURES)
    if kind == "gate":
        return {**policy, "below": _for_other_rankers(policy["below"], table),
                "above": _for_other_rankers(policy["above"], table)}
    if kind == "switch":
        return {**policy, "default": _for_other_rankers(policy["default"], table),
                "challenger": _for_other_rankers(policy["challenger"], table)}
    return dict(policy)


def policy_rankers(policy: Mapping) -> set[str]:
    """The rankers a policy names (fixed policies and ``rankers`` restrictions), at any depth."""
    out = set(policy.get("rankers") or ())
    if policy.get("kind") == "fixed":
        out.add(policy["ranker"])
    for key in ("below", "above", "default", "challenger"):
        if isinstance(policy.get(key), Mapping):
            out |= policy_rankers(policy[key])
    return out


def canonical_row_order(X: np.ndarray, y=None) -> np.ndarray:
    """An order of the rows of ``X`` (with their labels ``y``) that depends on their values alone: the rows sorted
    by a 64-bit BLAKE2 digest of each row's bytes (and label), ties (identical rows) in their given order, which
    changes nothing. Permuted rows give the same sorted array.

    The digest reads the values rounded to single precision: a z-score of permuted rows sums in another order
    and may move a value by an ulp of double precision, which must not move the row."""
    import hashlib

    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64).astype(np.float32))
    X = X + np.float32(0.0)  # -0.0 and 0.0 hash alike
    labels = None if y is None else [repr(v).encode() for v in np.asarray(y).tolist()]
    keys = np.empty(X.shape[0], dtype=np.uint64)
    for i, row in enumerate(X):
        h = hashlib.blake2b(row.tobytes(), digest_size=8)
        if labels is not None:
            h.update(labels[i])
        keys[i] = int.from_bytes(h.digest(), "little")
    return np.argsort(keys, kind="stable")


def _masked(y: np.ndarray) -> np.ndarray:
    """Which labels are masked (skada's -1, NaN or None)."""
    y = np.asarray(y)
    if y.dtype.kind in "iu":
        return y == -1
    if y.dtype.kind == "f":
        return np.isnan(y) | (y == -1)
    return np.array([v is None or (isinstance(v, float) and np.isnan(v)) or v == -1 for v in y], dtype=bool)
