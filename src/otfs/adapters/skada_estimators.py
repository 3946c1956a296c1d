"""``skada:NAME``: any domain-adaptation estimator of skada as an adapter of the grid.

One file of the adapters' folder (:data:`otfs.adapters.ADAPTERS`): it adds
the namespace ``skada:`` to the registry, so that config names skada's
estimators as it names the built-in adapters, with their parameters::

    adapters: {skada:LinearOTMapping: {reg: 1.0e-6}, skada:KMMReweight: {classifier: logistic-regression}}

What ``NAME`` may be, from skada's top-level names:

- an adapter class (``CORALAdapter``, ``TransferComponentAnalysisAdapter``, ...);
- a factory that builds a pipeline around a ``base_estimator``
  (``LinearOTMapping``, ``KMMReweight``, ``TransferJointMatching``, ...);
- a domain-adaptation classifier (``JDOTClassifier``, ``DASVMClassifier``).

The classifier is the paper's 1-NN unless the parameter ``classifier`` names
another (:data:`otfs.classification.CLASSIFIERS`). Only the features kept by
the ranker go in: the classification stage gives the adapter the selected
columns, as to every adapter.

skada is optional (``pip install 'otfs[skada]'``); it is imported only when
a ``skada:`` name is looked up, through :func:`otfs._skada.import_skada`, so
that scikit-learn's metadata routing stays off outside skada's own calls.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from functools import cache

import numpy as np

from otfs.adapters._base import ADAPTERS, BaseAdapter
from otfs.registry import UnknownNameError

__all__ = ["SkadaAdapter", "skada_estimators"]

@cache
def skada_estimators() -> dict[str, str]:
    """skada's estimators that can be adapters, by name: ``"adapter"``, ``"factory"`` or ``"classifier"``."""
    from otfs._skada import import_skada

    skada = import_skada()
    base = import_skada("skada.base")
    kinds = {}
    for name in getattr(skada, "__all__", dir(skada)):
        obj = getattr(skada, name, None)
        if not name[:1].isupper() or name.endswith("Regressor") or obj is None:
            continue
        if inspect.isclass(obj):
            if issubclass(obj, base.BaseAdapter) and obj is not base.BaseAdapter:
                kinds[name] = "adapter"
            elif hasattr(obj, "predict") and hasattr(obj, "fit") and not issubclass(obj, base.BaseSelector):
                kinds[name] = "classifier"
        elif inspect.isfunction(obj) and "base_estimator" in inspect.signature(obj).parameters:
            kinds[name] = "factory"
    return kinds


def _skada_parameters(obj) -> dict[str, object]:
    """The keyword parameters of a skada class or factory and their defaults (``base_estimator`` aside)."""
    sig = inspect.signature(obj)
    return {n: p.default for n, p in sig.parameters.items()
            if n not in ("self", "base_estimator") and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


class SkadaAdapter(BaseAdapter):
    """A skada estimator behind the adapter interface; ``ADAPTERS["skada:NAME"]`` is a subclass per name.

    Parameters
    ----------
    classifier : str or dict, default="1nn"
        The classifier trained on the adapted source (a name of
        :data:`otfs.classification.CLASSIFIERS`, or ``{"name": ..., **params}``);
        the paper's 1-NN by default.
    **params
        The skada estimator's own parameters; an unknown one is a ``TypeError``
        naming the estimator and its parameters. An unset ``random_state`` is 0,
        so that results repeat.

    Notes
    -----
    An adapter class of skada with the 1-NN is used through
    :meth:`~otfs.adapters.BaseAdapter.adapt` (its output on the stacked domains), like every
    adapter; anything else (a reweighting or label-propagating adapter, a
    factory, a classifier, or another classifier than the 1-NN) predicts the
    target labels itself, through :meth:`fit_predict`, and
    :attr:`predicts_labels` is True. A reweighting adapter needs a classifier
    that takes ``sample_weight``: skada says so when it does not (the 1-NN does
    not).

    References
    ----------
    .. [1] T. Gnassounou, O. Kachaiev, R. Flamary, A. Collas, Y. Lalou, A. de
       Mathelin, A. Gramfort, R. Bueno, F. Michel, A. Mellot, V. Loison,
       A. Odonnat, T. Moreau. SKADA: Scikit Adaptation, 2024.
       https://scikit-adaptation.github.io/
    """

    #: skada's top-level name, and its kind (:func:`skada_estimators`); set per subclass.
    skada_name: str = ""
    skada_kind: str = ""
    _skada_defaults: Mapping[str, object] = {}
    _parameter_constraints: dict = {"classifier": [str, dict]}

    def __init__(self, classifier="1nn", **params):
        unknown = sorted(set(params) - set(self._skada_defaults))
        if unknown:
            raise TypeError(f"skada:{self.skada_name} got unexpected parameter(s) {unknown}; its parameters: "
                            f"{sorted(self._skada_defaults)} and classifier")
        self.classifier = classifier
        for key, default in self._skada_defaults.items():
            setattr(self, key, params.get(key, default))

    @classmethod
    def _get_param_names(cls):
        return sorted(["classifier", *cls._skada_defaults])

    def _validate_params(self):
        super()._validate_params()
        from otfs.classification import make_classifier

        make_classifier(self.classifier)  # an unknown name or parameter is an error here
        estimator = self._build_estimator()  # an unknown parameter of skada's is an error here
        if hasattr(estimator, "_parameter_constraints"):
            estimator._validate_params()

    # -- building ------------------------------------------------------------------
    def _skada_params(self) -> dict:
        params = {key: getattr(self, key) for key in self._skada_defaults}
        if "random_state" in params and params["random_state"] is None:
            params["random_state"] = 0
        return params

    def _build_estimator(self, classifier=None):
        from otfs._skada import import_skada, routing

        skada = import_skada()
        obj = getattr(skada, self.skada_name)
        with routing():
            if self.skada_kind == "factory":
                return obj(base_estimator=classifier, **self._skada_params())
            return obj(**self._skada_params())

    @property
    def predicts_labels(self) -> bool:
        """True where the target labels come from :meth:`fit_predict` rather than the 1-NN on :meth:`adapt`."""
        if self.skada_kind != "adapter" or self.classifier != "1nn":
            return True
        from otfs._skada import import_skada

        skada = import_skada()
        cls = getattr(skada, self.skada_name)
        reweight = getattr(import_skada("skada._reweight"), "BaseReweightAdapter", ())
        return issubclass(cls, reweight) or bool(getattr(cls, "predicts_target_labels", False))

    # -- the adapter interface -------------------------------------------------------
    def _fit_adapt(self, Xs, ys, Xt):
        """The skada adapter's output on the stacked domains, split back into ``(Xs_adapted, Xt_adapted)``."""
        from otfs._skada import routing, stack_domains

        if self.skada_kind != "adapter":
            raise TypeError(f"skada:{self.skada_name} is a {self.skada_kind}, not an adapter: it has no adapted "
                            "samples, only predictions (fit_predict)")
        X, y, sample_domain, _ = stack_domains(Xs, ys, Xt)
        with routing():
            estimator = self._build_estimator()
            out = estimator.fit_transform(X, y, sample_domain=sample_domain)
        if not isinstance(out, np.ndarray):
            raise TypeError(f"skada:{self.skada_name} returns {type(out).__name__} (sample weights), not adapted "
                            "samples: use it through fit_predict, with a classifier that takes sample_weight")
        self.estimator_ = estimator
        ns = Xs.shape[0]
        return np.asarray(out[:ns], dtype=np.float64), np.asarray(out[ns:], dtype=np.float64)

    def _skada_transform(self, X, domain: int):
        from otfs._skada import routing

        with routing():
            out = self.estimator_.transform(X, sample_domain=np.full(X.shape[0], domain), allow_source=domain > 0)
        return np.asarray(out, dtype=np.float64)

    def _transform_source(self, X):
        from otfs._skada import SOURCE_DOMAIN

        return self._skada_transform(X, SOURCE_DOMAIN)

    def _transform_target(self, X):
        from otfs._skada import TARGET_DOMAIN

        return self._skada_transform(X, TARGET_DOMAIN)

    def fit_predict(self, Xs, ys, Xt):
        """Fit on the labelled source and the unlabelled target; return the predicted target labels."""
        from otfs._skada import TARGET_DOMAIN, import_skada, routing, stack_domains
        from otfs.classification import make_classifier

        Xs, ys, Xt = self._check(Xs, ys, Xt)
        X, y, sample_domain, encoder = stack_domains(Xs, ys, Xt)
        skada = import_skada()
        with routing():
            classifier = make_classifier(self.classifier)
            if self.skada_kind == "adapter":
                estimator = skada.make_da_pipeline(self._build_estimator(), classifier)
            elif self.skada_kind == "factory":
                estimator = self._build_estimator(classifier)
            else:
                if self.classifier != "1nn":
                    raise ValueError(f"skada:{self.skada_name} is a classifier itself: its `classifier` cannot be "
                                     f"set (got {self.classifier!r})")
                estimator = self._build_estimator()
            self._check_weights_reach(estimator, classifier)
            estimator.fit(X, y, sample_domain=sample_domain)
            pred = estimator.predict(Xt, sample_domain=np.full(Xt.shape[0], TARGET_DOMAIN))
        return encoder.inverse_transform(np.asarray(pred).astype(int))

    def _check_weights_reach(self, estimator, classifier) -> None:
        """A reweighting adapter's weights must reach the classifier: ask for them, or refuse one that has
        no ``sample_weight`` (skada would drop the weights in silence: the result would be no adaptation)."""
        from otfs._skada import import_skada

        # a skada pipeline's steps are selectors around their base estimators
        steps = [getattr(step, "base_estimator", step) for _, step in getattr(estimator, "steps", [(None, estimator)])]
        reweight = import_skada("skada._reweight").BaseReweightAdapter
        if not any(isinstance(step, reweight) for step in steps):
            return
        if "sample_weight" not in inspect.signature(classifier.fit).parameters:
            raise ValueError(f"skada:{self.skada_name} reweights the source samples, but the classifier "
                             f"{self.classifier!r} takes no sample_weight: the weights would be dropped and the "
                             "result would be no adaptation. Set its parameter classifier to one that takes them, "
                             "e.g. {classifier: logistic-regression}")
        classifier.set_fit_request(sample_weight=True)


def _resolve(name: str):
    """The adapter class of ``skada:NAME`` (one subclass of :class:`SkadaAdapter` per name, cached)."""
    kinds = skada_estimators()
    if name not in kinds:
        import difflib

        close = (difflib.get_close_matches(name, sorted(kinds), n=1)
                 or [k for k in sorted(kinds, key=len) if name and k.lower().startswith(name.lower())][:1])
        hint = f" (did you mean 'skada:{close[0]}'?)" if close else ""
        raise UnknownNameError(f"unknown adapter 'skada:{name}'; skada's estimators: {sorted(kinds)}{hint}")
    return _adapter_class(name, kinds[name])


@cache
def _adapter_class(name: str, kind: str):
    from otfs._skada import import_skada

    obj = getattr(import_skada(), name)
    cls = type(f"Skada{name}", (SkadaAdapter,), {
        "skada_name": name, "skada_kind": kind, "_skada_defaults": _skada_parameters(obj),
        "name": f"skada:{name}", "__module__": __name__,
        "__doc__": f"skada's ``{name}`` ({kind}) as the adapter ``skada:{name}``; see :class:`SkadaAdapter`.",
    })
    return cls


ADAPTERS.add_namespace("skada", _resolve, "skada:<name> for any estimator of skada (otfs.adapters.skada_estimators)")
