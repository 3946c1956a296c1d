"""POT's exact OT solver without ``import ot``: the network simplex for jobs that need only it.

``import ot`` imports scikit-learn (``ot.lowrank`` imports ``sklearn.cluster``),
SciPy's linear algebra and statistics and every POT module: measured 2 to 3
s on the 2-core CI machine, most of a selection job's wall time, whose
computation is the exact OT of Algorithm 1 and takes tenths of a second.
The solver is one compiled extension, ``ot/lp/emd_wrap``; this module loads
that file directly, so the selection jobs import NumPy and POT's C++ solver
only.

:func:`emd` is ``ot.emd(a, b, M, numItermax=max_iter, log=True)`` for
weights without zeros: the same checks, the same call of the same compiled
function and the same result code, so the coupling is POT's, bit for bit
(``tests/test_emd.py`` compares the two on random and tied problems). Where
the extension cannot be loaded this way (another POT layout, a POT imported
already), POT is imported and its own module is used: the result is the
same, only slower to import.

References
----------
.. [1] R. Flamary et al. POT: Python Optimal Transport. JMLR 22(78), 2021.
.. [2] N. Bonneel et al. Displacement interpolation using Lagrangian mass
   transport. ACM Transactions on Graphics 30(6), 2011 (the network simplex).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
import warnings
from pathlib import Path

import numpy as np

__all__ = ["emd", "emd_module", "sqeuclidean", "uniform"]

_POT_MODULE = "ot.lp.emd_wrap"
#: The private package the extension is loaded under: its relative import ``from ..utils import dist``
#: resolves to a stub of ours instead of importing the whole of POT.
_PRIVATE = "_otfs_pot_emd"
_module = None


def _load_standalone():
    """The compiled ``ot/lp/emd_wrap`` loaded without executing ``ot/__init__.py``; None where impossible."""
    spec = importlib.util.find_spec("ot")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "lp"
    candidates = [folder / f"emd_wrap{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        return None

    def dist(*args, **kwargs):  # what the extension's `from ..utils import dist` binds: POT's, on use
        from ot.utils import dist as pot_dist

        return pot_dist(*args, **kwargs)

    package = types.ModuleType(_PRIVATE)
    package.__path__ = []
    lp = types.ModuleType(_PRIVATE + ".lp")
    lp.__path__ = []
    utils = types.ModuleType(_PRIVATE + ".utils")
    utils.dist = dist
    stubs = {_PRIVATE: package, _PRIVATE + ".lp": lp, _PRIVATE + ".utils": utils}
    name = _PRIVATE + ".lp.emd_wrap"
    sys.modules.update(stubs)
    try:
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    finally:
        for key in (*stubs, name):
            sys.modules.pop(key, None)
        # Cython registers the module under its compiled name too; a later `import ot` must load
        # POT's own package (which then finds this same extension module), so the name is released.
        if sys.modules.get(_POT_MODULE) is not None and sys.modules[_POT_MODULE].__name__ == name:
            del sys.modules[_POT_MODULE]
    if not (callable(getattr(module, "emd_c", None)) and callable(getattr(module, "check_result", None))):
        return None
    return module


def emd_module():
    """POT's compiled network-simplex module (``emd_c``, ``check_result``), loaded once.

    POT's own module where POT is imported already; else the extension file
    loaded alone (:func:`_load_standalone`); else ``import ot``.
    """
    global _module
    if _module is None:
        module = sys.modules.get(_POT_MODULE)
        if module is None:
            try:
                module = _load_standalone()
            except Exception:  # noqa: BLE001 - any failure falls back to POT's own import below
                module = None
        if module is None:
            import ot.lp.emd_wrap as module
        _module = module
    return _module


def uniform(n: int) -> np.ndarray:
    """``ot.unif(n)``: ``n`` weights of ``1 / n``."""
    return np.ones((n,)) / n


def sqeuclidean(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``ot.dist(A, B, metric="sqeuclidean")`` on NumPy arrays, the same operations in the same order.

    ``|a|^2 + |b|^2 - 2 <a, b>``, clipped at 0. The exact OT has tied optimal
    couplings on real data, and round-off picks among them, so this is POT's
    arithmetic step for step, not an equivalent formula.
    """
    a2 = np.einsum("ij,ij->i", A, A)
    b2 = np.einsum("ij,ij->i", B, B)
    c = -2 * np.dot(A, B.T)
    c += a2[:, None]
    c += b2[None, :]
    return np.maximum(c, 0)


def emd(a, b, M, max_iter: int):
    """Exact OT coupling: ``ot.emd(a, b, M, numItermax=max_iter, log=True)`` for positive weights.

    Returns
    -------
    G : ndarray of shape (len(a), len(b))
    result_code : int
        POT's: 1 is optimal.
    message : str or None
        POT's message for any other code (``check_result``).
    """
    M = np.asarray(M, dtype=np.float64, order="C")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or M.shape != (a.shape[0], b.shape[0]):
        raise ValueError(f"emd: weights of shapes {a.shape} and {b.shape} do not match the cost of shape {M.shape}")
    if not ((a > 0).all() and (b > 0).all()):
        raise ValueError("emd: every weight must be positive (zero weights are ot.emd's to handle)")
    if not abs(float(a.sum()) - float(b.sum())) < 1.5e-6:  # ot.emd's check (assert_almost_equal, decimal=6)
        raise ValueError(f"emd: the weights must have the same sum, got {a.sum()} and {b.sum()}")
    b = b * a.sum() / b.sum()  # as ot.emd: the same mass, to the last bit
    module = emd_module()
    G, _cost, _u, _v, result_code = module.emd_c(a, b, M, int(max_iter), 1)
    with warnings.catch_warnings():  # POT warns the message too: here it is returned, for the caller to raise
        warnings.simplefilter("ignore")
        message = module.check_result(result_code)
    return G, int(result_code), message
