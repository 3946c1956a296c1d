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

from importlib import metadata as _metadata

from .adaptation import ADAPTERS, get_adapter, register_adapter
from .classification import accuracy_curve, one_nn_accuracy
from .ranking import OTFeatureRanker, feature_orders, rank_features
from .selection import select_samples

try:
    __version__ = _metadata.version("otfs")
except _metadata.PackageNotFoundError:  # running from a source checkout
    __version__ = "0+unknown"

__all__ = [
    "ADAPTERS",
    "OTFeatureRanker",
    "accuracy_curve",
    "feature_orders",
    "get_adapter",
    "one_nn_accuracy",
    "rank_features",
    "register_adapter",
    "select_samples",
]
