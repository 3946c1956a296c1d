"""otfs: feature selection for unsupervised domain adaptation, the methods.

The algorithm library of the benchmark reproducing Gautheron, Redko &
Lartizien, *Feature Selection for Unsupervised Domain Adaptation using
Optimal Transport* (ECML PKDD 2018), with the related papers' methods beside
it. One folder per kind of method, each with its base class, its registry
and its plug-ins, one file per method:

- :mod:`otfs.rankers` -- feature rankers; :class:`OTFeatureRanker` is Algorithm 2
- :mod:`otfs.sample_selection` -- Algorithm 1 (:func:`select_samples`) and its strategies
- :mod:`otfs.adapters` -- domain-adaptation methods (:data:`ADAPTERS`)
- :mod:`otfs.k_selection` -- choosing the number of features without target labels, and the ranker with
  it (:class:`LabelFreeFeatureSelector`)
- :mod:`otfs.reducers`, :mod:`otfs.domain_classifiers`, :mod:`otfs.zero_shot` -- the related methods
- :mod:`otfs.datasets`, :mod:`otfs.extractors` -- data readers and image feature extractors

The pipeline that runs them (stages, tables, figures, benchmarks) is not
part of the library: it is the package ``otfs_workflow`` beside the
Snakemake workflow. Names are imported on first use (SPEC 1,
``lazy_loader``; they are listed in ``__init__.pyi``).
"""

import lazy_loader as _lazy

_getattr, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)


def _version() -> str:
    from importlib import metadata  # on use: 80 ms at the start of every pipeline job otherwise

    try:
        return metadata.version("otfs")
    except metadata.PackageNotFoundError:  # running from a source checkout
        return "0+unknown"


def __getattr__(name):
    if name == "__version__":
        return _version()
    return _getattr(name)
