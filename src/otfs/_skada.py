"""skada, imported and used without changing the rest of the process.

``import skada`` calls ``sklearn.set_config(enable_metadata_routing=True)``
for the whole process. With routing on, scikit-learn behaves differently
elsewhere: for example ``Pipeline.fit(X, y, ranker__X_target=Xt)``, the
documented way to give :class:`otfs.rankers.OTFeatureRanker` its target in
a plain scikit-learn pipeline, raises instead of fitting. So otfs imports
skada only through :func:`import_skada`, which puts the setting back, and
runs skada's estimators and scorers inside :func:`routing`, which turns it
on for that block only. Nothing else in otfs imports skada.

skada is an optional dependency (``pip install 'otfs[skada]'``).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

__all__ = ["MASKED_LABEL", "SKADA_EXTRA", "SOURCE_DOMAIN", "TARGET_DOMAIN", "import_skada", "routing", "stack_domains"]

#: The source and target rows' domain labels and the masked class label, as skada writes them.
SOURCE_DOMAIN = 1
TARGET_DOMAIN = -2
MASKED_LABEL = -1

#: How to install skada, for error messages.
SKADA_EXTRA = "pip install 'otfs[skada]' (or make setup)"


def import_skada(module: str = "skada"):
    """Import ``skada`` (or one of its modules) and restore scikit-learn's metadata-routing setting.

    Raises
    ------
    ImportError
        skada is not installed; the message says how to install it.
    """
    import sklearn

    before = sklearn.get_config()["enable_metadata_routing"]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{module} is needed here but cannot be imported ({exc}); {SKADA_EXTRA}") from exc
    finally:
        sklearn.set_config(enable_metadata_routing=before)


@contextlib.contextmanager
def routing() -> Iterator[None]:
    """scikit-learn's metadata routing on inside the block (skada needs it), as it was after."""
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        yield


def stack_domains(Xs, ys, Xt):
    """The two domains in skada's convention: stacked samples, the source labels encoded as 0..C-1 with the
    target's masked, and ``sample_domain`` (1: source, -2: target); and the label encoder, to decode."""
    import numpy as np
    from sklearn.preprocessing import LabelEncoder

    encoder = LabelEncoder().fit(ys)
    X = np.vstack([Xs, Xt])
    y = np.concatenate([encoder.transform(ys), np.full(len(Xt), MASKED_LABEL)])
    sample_domain = np.concatenate([np.full(len(Xs), SOURCE_DOMAIN), np.full(len(Xt), TARGET_DOMAIN)])
    return X, y, sample_domain, encoder
