"""otfs: optimal-transport feature selection for unsupervised domain adaptation.

A library and benchmark reproducing Gautheron, Redko & Lartizien, *Feature
Selection for Unsupervised Domain Adaptation using Optimal Transport*
(ECML PKDD 2018).

Main entry points
-----------------
- :func:`otfs.selection.select_samples` -- Algorithm 1 (sample selection)
- :func:`otfs.ranking.rank_features` -- Algorithm 2 (feature ranking)
- :class:`otfs.ranking.OTFeatureRanker` -- Algorithm 2 as a scikit-learn selector
- :func:`otfs.classification.one_nn_accuracy` -- the paper's evaluation
- :data:`otfs.adaptation.ADAPTERS` -- registered domain-adaptation methods
"""

from importlib import import_module as _import_module

# The entry points are imported on first use (PEP 562), so that a pipeline job
# that needs neither POT nor scikit-learn (acquisition, caching, tables,
# plots) does not pay for importing them: about a second per job.
_LAZY = {
    "ADAPTERS": "adaptation",
    "get_adapter": "adaptation",
    "register_adapter": "adaptation",
    "accuracy_curve": "classification",
    "one_nn_accuracy": "classification",
    "OTFeatureRanker": "ranking",
    "feature_orders": "ranking",
    "rank_features": "ranking",
    "select_samples": "selection",
}

__all__ = sorted(_LAZY)


def _version() -> str:
    from importlib import metadata  # on use: 80 ms, at the start of every pipeline job otherwise

    try:
        return metadata.version("otfs")
    except metadata.PackageNotFoundError:  # running from a source checkout
        return "0+unknown"


def __getattr__(name):
    if name == "__version__":
        return _version()
    if name in _LAZY:
        return getattr(_import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'otfs' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY, "__version__"])
