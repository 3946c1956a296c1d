"""Label-free choice of the number of features, k*, and its registry of selection rules.

The paper shows accuracy against the number of features and lets the reader
pick the best point, which reads the target labels. A selection rule picks
k* from the grid's numbers of features without them (or, for the
references, with them):

- **scorer rules** score the adapted domains at each k with a scorer of
  skada (``skada.metrics``): importance-weighted validation (``IW``), deep
  embedded validation (``DEV``), circular validation (``circular``),
  prediction entropy (``entropy``) and soft neighbourhood density
  (``SND``), and MixVal (``MixVal``, Hu et al.'s mixed target samples,
  not in skada); k* is the k of the best mean score;
- **data rules** read the two domains only: ``shift-test`` keeps as many
  features as a per-feature two-sample test finds unshifted after a
  Benjamini–Hochberg correction, ``failing-loudly`` after Rabanser et al.'s
  Bonferroni correction;
- **oracle rules** (``oracle``: the best k in hindsight; ``all-features``)
  are references, never methods: the oracle reads the target labels.

Every rule is one file of :mod:`otfs.k_selection`, registered in
:data:`SELECTION_RULES` by being there (or from another package, by the
entry-point group ``otfs.k_selection``).

How a scorer scores. The adapters of the grid are transductive: they adapt
the source subset and the whole target at once and have no transform of new
samples. So each (adapter, k) is fitted once, on every sample, exactly as the
classification stage does; the scorers then validate the classifier in the
adapted space. The samples are split by skada's
``StratifiedDomainShuffleSplit`` (the source stratified by class, the target
labels masked; the same splits for every k, ranker and adapter), a
*probabilistic* classifier (k-NN with k = 5 by default: the paper's 1-NN
gives one-hot probabilities, which make entropy-based scores meaningless) is
fitted on the training part inside ``skada.make_da_pipeline`` and the scorer
is called on the validation part, as skada's cross-validation does (by
default the same numbers are computed directly, without skada's metadata
routing: :func:`score_adapted`, :meth:`ScorerRule.score_split`). The
adapters that read source labels (OT3, SA's none, ...) saw the validation
source labels when they were fitted; the scores are therefore a little
optimistic for them, the same for every k.

References
----------
.. [1] Y. Lalou, T. Gnassounou, A. Collas, A. de Mathelin, O. Kachaiev,
   A. Odonnat, A. Gramfort, T. Moreau, R. Flamary. SKADA-Bench: Benchmarking
   Unsupervised Domain Adaptation Methods with Realistic Validation. 2024.
.. [2] Y. Benjamini, Y. Hochberg. Controlling the false discovery rate.
   JRSS B 57(1), 1995.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator

from otfs.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DataRule",
    "OracleRule",
    "ProbabilityScorer",
    "SELECTION_RULES",
    "ScorerRule",
    "SelectionRule",
    "choose_k",
    "decode_proba",
    "distinct_models",
    "encode_proba",
    "ensemble_scores",
    "get_rule",
    "score_adapted",
    "ValidationSplit",
    "with_ensemble_scores",
]

#: Registered selection rules by name (entry-point group ``otfs.k_selection``).
SELECTION_RULES = Registry("selection rule", "selection rules", package="otfs.k_selection")


def register_rule(name: str):
    """Class decorator adding a selection rule to :data:`SELECTION_RULES` under ``name`` (and setting its ``name``)."""
    return SELECTION_RULES.register_class(name)


def get_rule(name: str, **params) -> SelectionRule:
    """Instantiate the registered selection rule ``name`` with ``params``."""
    rule = SELECTION_RULES[name](**params)
    rule._validate_params()
    return rule


class SelectionRule(BaseEstimator):
    """A rule that picks k* from the numbers of features of a grid.

    Subclasses are :class:`ScorerRule`, :class:`DataRule` or :class:`OracleRule`.
    """

    name = "base"
    #: ``"scorer"``, ``"data"`` or ``"oracle"``.
    kind = ""
    #: True for the references that read the target labels (never a method).
    reads_target_labels = False
    _parameter_constraints: dict = {}


class ScorerRule(SelectionRule):
    """A rule that scores each k with a skada scorer; k* has the best mean score (:func:`choose_k`).

    Subclasses implement :meth:`make_scorer`, which returns the skada scorer
    (built inside scikit-learn's metadata routing, which skada's scorers need).
    """

    kind = "scorer"

    def make_scorer(self, random_state: int):  # pragma: no cover - interface
        raise NotImplementedError

    def diagnostics(self, scorer, X_val, sample_domain_val) -> dict:
        """Numbers that say whether the score just computed is degenerate (none by default)."""
        return {}

    #: Whether :meth:`score_split` computes the skada scorer's number directly (:func:`score_adapted`).
    direct = False

    def score_split(self, split: ValidationSplit, random_state: int) -> tuple[float, dict]:  # pragma: no cover
        """The skada scorer's value on one validation split, and :meth:`diagnostics`, computed directly.

        A rule sets :attr:`direct` where it implements this; it must return the number skada's scorer
        returns for ``split.pipeline()`` (tested against it), without skada's metadata routing.
        """
        raise NotImplementedError


class DataRule(SelectionRule):
    """A rule that picks k* from the two domains alone (:meth:`choose_count`)."""

    kind = "data"

    def choose_count(self, Xs, Xt, counts: Sequence[int]) -> tuple[int, dict]:  # pragma: no cover - interface
        """Return k* (one of ``counts``) and what the choice rests on (recorded with it)."""
        raise NotImplementedError


class OracleRule(SelectionRule):
    """A reference that picks k* from the accuracies themselves (:meth:`choose_from`)."""

    kind = "oracle"

    def choose_from(self, counts: np.ndarray, accuracies: np.ndarray) -> int:  # pragma: no cover - interface
        raise NotImplementedError


def choose_k(counts, scores) -> int:
    """The number of features of the best score; ties (and only NaN scores) go to the most features.

    Parameters
    ----------
    counts : array-like of int
        The grid's numbers of features.
    scores : array-like of float
        One score per count, higher is better (skada's scorers are signed so).
    """
    counts = np.asarray(counts)
    scores = np.asarray(scores, dtype=float)
    if counts.shape != scores.shape or counts.size == 0:
        raise ValueError(f"one score per number of features: {counts.size} counts, {scores.size} scores")
    if np.isnan(scores).all():
        return int(counts.max())
    best = np.nanmax(scores)
    return int(counts[scores == best].max())


def score_adapted(Zs, ys, Zt, rules: Mapping[str, ScorerRule], classifier, n_splits: int, test_size: float,
                  random_state: int, engine: str = "direct", target_proba: list | None = None) -> dict[str, dict]:
    """Score one adapted pair ``(Zs, Zt)`` with every scorer rule; the scores are means over the splits.

    Parameters
    ----------
    Zs, ys : adapted source samples and their labels
    Zt : adapted target samples (their labels are never given)
    rules : mapping of name to :class:`ScorerRule`
    classifier : scikit-learn classifier with ``predict_proba``
        Cloned for every split (:func:`otfs.classification.make_classifier`).
    n_splits, test_size : skada's ``StratifiedDomainShuffleSplit`` settings
    random_state : int
        Seeds the splits and the scorers; the same for every k, so the
        choices compare the numbers of features on the same samples.
    engine : {"direct", "skada"}, default="direct"
        ``"skada"`` calls skada's scorers on a ``skada.make_da_pipeline`` of the classifier, inside
        scikit-learn's metadata routing. ``"direct"`` computes the same numbers from the classifier
        fitted on the training split's source samples, as that pipeline fits it, with each rule's
        :meth:`ScorerRule.score_split`: the same arithmetic without the routing, the input checks and
        the pipeline copies, which took most of the time of a score on the small data families. It
        applies where every rule has a direct form (:attr:`ScorerRule.direct`) and the classifier has
        no ``transform`` (DEV would embed with it); otherwise skada's path runs.
    target_proba : list, default=None
        Where given, the classifier's probabilities on the validation target samples of every split,
        concatenated in the splits' order (an array of shape (samples, classes), classes in the order of
        the sorted source labels), are appended to it: the input of the ensemble rules
        (:attr:`ScorerRule.ensemble`), which this function skips (:func:`ensemble_scores`).

    Returns
    -------
    dict
        ``{rule: {"score": mean score, **diagnostics (means)}}``; warnings of
        the scorers are collected under ``"warnings"`` (their count). The ensemble rules have no entry.
    """
    from sklearn.base import clone

    from otfs._skada import import_skada, routing, stack_domains

    if engine not in ("direct", "skada"):
        raise ValueError(f"engine must be 'direct' or 'skada', got {engine!r}")
    split = import_skada("skada.model_selection").StratifiedDomainShuffleSplit
    X, y, sample_domain, _ = stack_domains(Zs, ys, Zt)  # labels 0..C-1: DEV's loss indexes probabilities by label
    rules = {name: rule for name, rule in rules.items() if not getattr(rule, "ensemble", False)}
    out = {name: {"score": [], "warnings": 0} for name in rules}
    kept = []
    direct = (engine == "direct" and all(getattr(rule, "direct", False) for rule in rules.values())
              and not hasattr(classifier, "transform"))
    splits = split(n_splits=n_splits, test_size=test_size, random_state=random_state)
    if direct:
        for train, val in _split_indices(splits, X, y, sample_domain):
            data = ValidationSplit(classifier, X[train], y[train], sample_domain[train], X[val], y[val],
                                   sample_domain[val])
            if target_proba is not None:
                kept.append(data.predict_proba("target"))
            for name, rule in rules.items():
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    value, diagnostics = rule.score_split(data, random_state)
                _record(out[name], float(value), len(caught), diagnostics)
    else:
        skada = import_skada()
        with routing():
            scorers = {name: rule.make_scorer(random_state) for name, rule in rules.items()}
            for train, val in splits.split(X, y, sample_domain):
                clf = clone(classifier)
                if "sample_weight" in _score_parameters(clf):
                    clf.set_score_request(sample_weight=True)  # importance-weighted validation weighs the source
                pipe = skada.make_da_pipeline(clf).fit(X[train], y[train], sample_domain=sample_domain[train])
                if target_proba is not None:
                    target = val[sample_domain[val] < 0]
                    kept.append(pipe.predict_proba(X[target], sample_domain=sample_domain[target]))
                for name, scorer in scorers.items():
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        value = float(scorer(pipe, X[val], y[val], sample_domain=sample_domain[val]))
                    _record(out[name], value, len(caught),
                            rules[name].diagnostics(scorer, X[val], sample_domain[val]))
    if target_proba is not None:
        target_proba.append(np.concatenate(kept, axis=0))
    return {name: {k: (float(np.mean(v)) if isinstance(v, list) else v) for k, v in rec.items()}
            for name, rec in out.items()}


def distinct_models(k, d) -> np.ndarray:
    """Which candidates of numbers of features ``k`` (one per candidate) are distinct models, the ensemble's
    members: every candidate but the repeats of the point of all ``d`` features, which is the same for every
    ranker and counts once."""
    every = np.asarray(k) == np.asarray(d)
    return ~every | (np.cumsum(every) == 1)


def ensemble_scores(rules: Mapping[str, ScorerRule], target_proba: Sequence, members=None) -> dict[str, dict]:
    """The ensemble rules' scores (:attr:`ScorerRule.ensemble`) of every candidate, from each candidate's
    ``target_proba`` of :func:`score_adapted` (the same splits for all): ``{rule: {"score": array,
    "warnings": count}}``, one score per candidate; ``members`` marks the candidates of the ensemble (the
    distinct models; all by default)."""
    out = {}
    for name, rule in rules.items():
        if getattr(rule, "ensemble", False):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                scores = rule.score_candidates(target_proba, members)
            out[name] = {"score": np.asarray(scores, dtype=float), "warnings": len(caught)}
    return out


#: The splits :func:`_split_indices` drew last, by their settings, labels and domains (a few, oldest out first).
_SPLITS: dict = {}
_SPLITS_KEPT = 8


def _split_indices(splitter, X, y, sample_domain) -> list:
    """``list(splitter.split(X, y, sample_domain))``, kept for the next call with the same settings, labels
    and domains.

    skada's ``StratifiedDomainShuffleSplit`` draws its indices from the labels, the domains and its seed:
    every number of features and every adapter of one iteration is scored on the same splits, which the
    rules' choices compare. Drawing them again took about 3 % of a choice-of-k job. With a seed that is not
    an integer they are drawn every time. skada also checks ``X`` (finite values): a kept split is taken only
    for a finite ``X``, otherwise skada's split runs and raises its own error.
    """
    params = vars(splitter)  # its settings (scikit-learn's splitters have no get_params)
    if not isinstance(params.get("random_state"), (int, np.integer)):
        return list(splitter.split(X, y, sample_domain))
    key = (type(splitter), repr(sorted(params.items())), X.shape[0], y.dtype.str, y.tobytes(),
           sample_domain.dtype.str, sample_domain.tobytes())
    if key not in _SPLITS or not np.isfinite(X).all():
        _SPLITS.pop(key, None)
        if len(_SPLITS) >= _SPLITS_KEPT:
            del _SPLITS[next(iter(_SPLITS))]
        _SPLITS[key] = [(train.copy(), val.copy()) for train, val in splitter.split(X, y, sample_domain)]
    return [(train.copy(), val.copy()) for train, val in _SPLITS[key]]


def _balanced_accuracy_score(y_true, y_pred) -> float:
    """scikit-learn's ``balanced_accuracy_score(y_true, y_pred)`` (no weights, not adjusted) without its input
    checks: the mean over the classes of ``y_true`` of each one's recall, from the confusion matrix of the
    classes of both, with its warnings (one class in all; a class of ``y_pred`` that ``y_true`` lacks).

    The same operations on the same integer counts: equal to scikit-learn's (tested), so circular validation's
    score stays skada's to the bit, without scikit-learn's checks of its few hundred labels. (The classification
    stage's :func:`otfs.classification.balanced_accuracy`, in %, averages the per-class means in another order.)
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    labels, codes = np.unique(np.concatenate([y_true.ravel(), y_pred.ravel()]), return_inverse=True)
    n = labels.size
    counts = np.bincount(codes[:y_true.size] * n + codes[y_true.size:], minlength=n * n).reshape(n, n)
    if n == 1:  # scikit-learn's confusion_matrix says so
        warnings.warn("A single label was found in 'y_true' and 'y_pred'. For the confusion matrix to have the "
                      "correct shape, use the 'labels' parameter to pass all known labels.", UserWarning, stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.diagonal(counts) / np.sum(counts, axis=1)
    if np.any(np.isnan(per_class)):
        warnings.warn("y_pred contains classes not in y_true", stacklevel=2)
        per_class = per_class[~np.isnan(per_class)]
    return float(np.mean(per_class))


def _record(rec: dict, value: float, n_warnings: int, diagnostics: Mapping) -> None:
    rec["score"].append(value)
    rec["warnings"] += n_warnings
    for key, v in diagnostics.items():
        rec.setdefault(key, []).append(v)


class ValidationSplit:
    """One validation split of :func:`score_adapted`, for the rules' direct scores (:meth:`ScorerRule.score_split`).

    ``classifier`` is fitted (once, on first use) on the training part's source samples in their order, as
    ``skada.make_da_pipeline(classifier)`` fits it: skada's selector drops the samples of masked labels.
    The validation part is split into its source samples (``Xs``, ``ys``, labels encoded 0..C-1) and its
    target samples (``Xt``), each in the order of the split. :meth:`predict` and :meth:`predict_proba`
    are the fitted classifier's, kept per array, so that the rules that read the target's probabilities
    (entropy, SND) compute them once.
    """

    def __init__(self, classifier, X_train, y_train, domain_train, X_val, y_val, domain_val):
        from otfs._skada import MASKED_LABEL

        self._classifier, self._train = classifier, (X_train[y_train != MASKED_LABEL], y_train[y_train != MASKED_LABEL])
        source = domain_val > 0
        self.Xs, self.ys, self.Xt = X_val[source], y_val[source], X_val[~source]
        self._fitted = None
        self._cache: dict = {}

    @property
    def fitted(self):
        """The classifier fitted on the training part's source samples."""
        if self._fitted is None:
            from sklearn.base import clone

            self._fitted = clone(self._classifier).fit(*self._train)
        return self._fitted

    def new_classifier(self):
        """An unfitted copy of the classifier (circular validation refits one on the target)."""
        from sklearn.base import clone

        return clone(self._classifier)

    def _call(self, method: str, which: str):
        key = (method, which)
        if key not in self._cache:
            self._cache[key] = getattr(self.fitted, method)(self.Xs if which == "source" else self.Xt)
        return self._cache[key]

    def predict(self, which: str):
        """The fitted classifier's predictions on the validation ``"source"`` or ``"target"`` samples.

        A uniform k-NN predicts the class of its largest probability (scikit-learn's own ``predict`` takes
        that argmax of ``predict_proba``): the predictions are then taken from the probabilities kept for the
        other rules, without a second neighbour search.
        """
        key = ("predict", which)
        if key not in self._cache and _predicts_by_largest_probability(self.fitted, self.Xs):
            self._cache[key] = self.fitted.classes_[np.argmax(self.predict_proba(which), axis=1)]
        return self._call("predict", which)

    def source_proba_rows(self, rows):
        """The fitted classifier's probabilities on the validation source samples ``Xs[rows]``.

        A k-NN's probabilities of a sample depend on that sample alone: they are the rows of the kept
        ``predict_proba("source")``. Another classifier's are computed on ``Xs[rows]``.
        """
        from sklearn.neighbors import KNeighborsClassifier

        if isinstance(self.fitted, KNeighborsClassifier):
            return self.predict_proba("source")[rows]
        return self.fitted.predict_proba(self.Xs[rows])

    def score_source(self, sample_weight):
        """The fitted classifier's ``score`` on the validation source samples, weighted: scikit-learn's
        ``ClassifierMixin.score`` (the weighted accuracy of ``predict``) from the kept predictions."""
        from sklearn.base import ClassifierMixin
        from sklearn.metrics import accuracy_score
        from sklearn.neighbors import KNeighborsClassifier

        # KNeighborsClassifier.score only calls ClassifierMixin.score (it overrides it for its docstring)
        if getattr(type(self.fitted), "score", None) in (ClassifierMixin.score, KNeighborsClassifier.score):
            return accuracy_score(self.ys, self.predict("source"), sample_weight=sample_weight)
        return self.fitted.score(self.Xs, self.ys, sample_weight=sample_weight)

    def predict_proba(self, which: str):
        """The fitted classifier's probabilities on the validation ``"source"`` or ``"target"`` samples."""
        return self._call("predict_proba", which)

    def predict_log_proba(self, which: str):
        """The fitted classifier's log-probabilities (where it has them) on the ``"source"`` or ``"target"`` samples."""
        return self._call("predict_log_proba", which)


def _predicts_by_largest_probability(classifier, X) -> bool:
    """Whether ``classifier.predict`` is the class of the largest ``predict_proba``, as scikit-learn computes it:
    a fitted ``KNeighborsClassifier`` with uniform weights, one output, on its brute-force path."""
    from sklearn.neighbors import KNeighborsClassifier

    if not (isinstance(classifier, KNeighborsClassifier) and classifier.weights == "uniform"
            and not classifier.outputs_2d_ and getattr(classifier, "_fit_method", None) == "brute"):
        return False
    try:  # the condition of scikit-learn's predict for taking the argmax of predict_proba
        from sklearn.metrics._pairwise_distances_reduction import ArgKminClassMode
    except ImportError:  # another scikit-learn: its own predict
        return False
    return bool(ArgKminClassMode.is_usable_for(X, classifier._fit_X, classifier.metric))


def _score_parameters(estimator) -> set[str]:
    import inspect

    return set(inspect.signature(estimator.score).parameters)


class ProbabilityScorer:
    """A scorer of a fitted skada pipeline (``scorer(estimator, X, y, sample_domain)``) computed from its
    probabilities on the validation source and target samples, for :func:`otfs.k_selection.score_adapted`'s
    ``engine="skada"``."""

    def __init__(self, compute):
        self.compute, self.last_info = compute, {}

    def __call__(self, estimator, X, y=None, sample_domain=None):
        X, domain = np.asarray(X), np.asarray(sample_domain)
        source = domain > 0
        ps = estimator.predict_proba(X[source], sample_domain=domain[source])
        pt = estimator.predict_proba(X[~source], sample_domain=domain[~source])
        last = estimator[-1]  # skada's selector of the classifier
        classes = (last.get_estimator() if hasattr(last, "get_estimator") else last).classes_
        value, self.last_info = self.compute(ps, np.asarray(y)[source], classes, pt)
        return value


#: The levels of :func:`encode_proba`'s quantisation: 255 = 3 x 5 x 17, so the probabilities of a uniform k-NN
#: with k in (1, 3, 5, 15, 17) (multiples of 1 / k) are kept exactly.
PROBA_LEVELS = 255


def encode_proba(proba) -> str:
    """A (samples, classes) array of probabilities in [0, 1] as one TSV cell: ``"u8:<samples>x<classes>:"``
    followed by the base64 of the probabilities quantised to :data:`PROBA_LEVELS` levels (one byte each)."""
    import base64

    proba = np.asarray(proba, dtype=float)
    if proba.ndim != 2 or not np.all((proba >= 0) & (proba <= 1)):
        raise ValueError(f"target_proba: a 2-D array of probabilities in [0, 1], got shape {proba.shape}")
    q = np.rint(proba * PROBA_LEVELS).astype(np.uint8)
    return f"u8:{proba.shape[0]}x{proba.shape[1]}:" + base64.b64encode(q.tobytes()).decode("ascii")


def decode_proba(cell: str, where: str = "target_proba") -> np.ndarray:
    """The probabilities of an :func:`encode_proba` cell; an error naming ``where`` for a malformed one."""
    import base64

    try:
        kind, shape, data = str(cell).split(":", 2)
        n, c = (int(v) for v in shape.split("x"))
        q = np.frombuffer(base64.b64decode(data, validate=True), dtype=np.uint8)
        if kind != "u8" or q.size != n * c:
            raise ValueError(f"{q.size} values for {n} x {c}")
    except ValueError as err:
        raise ValueError(f"{where}: not a cell of encode_proba ('u8:<n>x<classes>:<base64>'): {err}") from None
    return q.reshape(n, c) / PROBA_LEVELS


def with_ensemble_scores(table: pd.DataFrame, rules: Mapping, where: str = "candidates") -> pd.DataFrame:
    """``table`` (one row per candidate) with the columns ``<rule>:score`` and ``<rule>:warnings`` of each
    ensemble rule of ``rules`` (name to a built rule) computed from its ``target_proba`` cells: the ensemble
    is the table's distinct models (the point of all ``d`` features counts once). A table without the
    probabilities is an error naming ``where``."""
    ens = {n: r for n, r in rules.items() if getattr(r, "ensemble", False)}
    if not ens:
        return table
    if "target_proba" not in table.columns or table["target_proba"].isna().any():
        raise ValueError(f"{where}: the ensemble rule(s) {sorted(ens)} need every candidate's target_proba, which "
                         "these choice-of-k rows lack (rows of an older version of the rules: build them again)")
    proba = [decode_proba(c, where) for c in table["target_proba"]]
    if len({p.shape for p in proba}) != 1:
        raise ValueError(f"{where}: the candidates' target probabilities are of different shapes "
                         f"{sorted({p.shape for p in proba})}: not the same validation splits")
    members = distinct_models(table["k" if "k" in table.columns else "n_features"], table["d"])
    table = table.copy()
    for name, rec in ensemble_scores(ens, proba, members).items():
        table[f"{name}:score"], table[f"{name}:warnings"] = rec["score"], rec["warnings"]
    return table
