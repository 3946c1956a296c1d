"""Domain-adaptation methods behind one interface, and their registry.

An adapter takes labelled source samples and unlabelled target samples and
returns both sets in the space where the 1-NN classifier is trained and
evaluated: ``Xs_a, Xt_a = adapter.fit_transform(Xs, ys, Xt)``. The pipeline
crosses any registered adapter with any feature ranking by its name.

To add a method, subclass :class:`BaseAdapter`, implement
:meth:`~BaseAdapter.fit_transform`, and decorate the class with
``@register_adapter("NAME")``.

References
----------
.. [1] L. Gautheron, I. Redko, C. Lartizien. Feature Selection for
   Unsupervised Domain Adaptation using Optimal Transport. ECML PKDD 2018,
   Section 5.1 and Table 3.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator

from ._checks import as_float_matrix, as_label_vector, check_same_features

__all__ = ["ADAPTERS", "BaseAdapter", "NoAdaptation", "get_adapter", "register_adapter"]

#: Registered adapters by name.
ADAPTERS: dict[str, type[BaseAdapter]] = {}


def register_adapter(name: str):
    """Class decorator adding an adapter to :data:`ADAPTERS` under ``name``."""

    def decorator(cls):
        if name in ADAPTERS and ADAPTERS[name] is not cls:
            raise ValueError(f"an adapter named {name!r} is already registered")
        ADAPTERS[name] = cls
        cls.name = name
        return cls

    return decorator


def get_adapter(name: str, **params) -> BaseAdapter:
    """Instantiate the registered adapter ``name`` with ``params``."""
    try:
        cls = ADAPTERS[name]
    except KeyError:
        raise ValueError(f"unknown adapter {name!r}; registered: {sorted(ADAPTERS)}") from None
    return cls(**params)


class BaseAdapter(BaseEstimator):
    """Interface of a domain-adaptation method.

    Subclasses store their hyper-parameters in ``__init__`` and implement
    :meth:`fit_transform`; they must not modify their inputs.
    """

    name = "base"

    def fit_transform(self, Xs, ys, Xt):  # pragma: no cover - interface
        """Return ``(Xs_adapted, Xt_adapted)``."""
        raise NotImplementedError

    @staticmethod
    def _check(Xs, ys, Xt):
        Xs = as_float_matrix(Xs, "Xs")
        Xt = as_float_matrix(Xt, "Xt")
        check_same_features(Xs, Xt)
        ys = as_label_vector(ys, Xs.shape[0], "ys")
        return Xs, ys, Xt


@register_adapter("NA")
class NoAdaptation(BaseAdapter):
    """No adaptation: both domains are returned unchanged (as copies)."""

    def fit_transform(self, Xs, ys, Xt):
        Xs, _, Xt = self._check(Xs, ys, Xt)
        return Xs.copy(), Xt.copy()
