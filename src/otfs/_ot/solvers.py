"""POT calls shared by the sample selection, the ranking and the OT adapters.

Entropic OT multiplies by the Gibbs kernel ``exp(-C / reg)``. With a small
``reg`` or a large cost it underflows to 0, and the Sinkhorn scalings become
0 or infinite: POT's ``"sinkhorn"`` then stops (with a warning) and returns
whatever it had, often a coupling of zeros. This module detects that
(:func:`sinkhorn_scalings` reports the failure, :func:`check_coupling`
rejects a coupling that lost mass) so that the callers fall back to POT's
log-domain solver or raise an error naming ``reg``; a degenerate coupling is
never returned in silence.
"""

from __future__ import annotations

import numpy as np

from otfs._ot.emd import emd

__all__ = [
    "NumericalFallbackWarning",
    "EMD_DEFAULT_MAX_ITER",
    "check_coupling",
    "emd_max_iter",
    "exact_coupling",
    "gibbs_kernel",
    "normalise_cost",
    "sinkhorn_scalings",
]


class NumericalFallbackWarning(RuntimeWarning):
    """A solver hit the limits of floating point and a stabler one was used instead."""


def _check_normaliser(C: np.ndarray, norm: str) -> None:
    value = float(np.median(C)) if norm == "median" else float(np.max(C)) if norm == "max" else 1.0
    if not value > 0:
        raise ValueError(
            f"every pairwise cost is 0 (or the {norm} cost is): the samples are constant or identical, "
            f"so the cost cannot be normalised by its {norm} (norm={norm!r}); check the data"
        )


def normalise_cost(C: np.ndarray, norm: str | None) -> np.ndarray:
    """POT's cost normalisation; ``None`` or ``"none"`` leaves ``C`` unchanged.

    Dividing by a zero median or maximum (constant or identical samples) is
    an error, not a matrix of NaN.
    """
    if norm in (None, "none"):
        return C
    if norm in ("median", "max"):
        _check_normaliser(C, norm)
    # ot.utils.cost_normalization on NumPy arrays, its operations in its order (the median and the maximum divide
    # C in place, as there): equal to it bit for bit (tests/test_job_imports.py), without importing POT, which
    # costs about 1.4 s a process (otfs._ot.emd)
    if norm == "median":
        C /= np.median(C)
    elif norm == "max":
        C /= float(np.max(C))
    elif norm == "log":
        C = np.log(1 + C)
    elif norm == "loglog":
        C = np.log(1 + np.log(1 + C))
    else:
        raise ValueError(f"Norm {norm} is not a valid option.\nValid options are:\nmedian, max, log, loglog")
    return C


def check_coupling(G: np.ndarray, what: str, reg: float | None = None) -> np.ndarray:
    """Return ``G`` unless it has non-finite entries or a row with no mass; else raise.

    A row with no mass is a source sample the coupling forgot: its
    barycentric image would be 0. It happens when the Gibbs kernel underflows.
    """
    hint = (f" at reg={reg}: exp(-cost/reg) underflows; increase reg, or normalise the cost "
            "(norm='median')") if reg is not None else ""
    if not np.isfinite(G).all():
        raise FloatingPointError(f"{what}: the coupling has NaN or infinite entries{hint}")
    empty = int(np.count_nonzero(G.sum(axis=1) <= 0))
    if empty:
        raise FloatingPointError(f"{what}: the coupling gives no mass to {empty} of {G.shape[0]} source "
                                 f"samples{hint}")
    return G


#: The iteration limit ``"auto"`` stands for: POT's default, or the number of variables of the problem when
#: larger. The network simplex's pivots grow about as ``(n + m) log(n + m)``; measured, 2,843 for 200 x 200
#: and 122,265 for 2,000 x 2,000 (more than POT's 100,000), 112,109 for 1,599 x 4,898 (wine red vs white):
#: always below ``n * m / 10``. A larger limit changes nothing where a smaller one sufficed: the solver
#: stops at the optimum.
EMD_DEFAULT_MAX_ITER = 100_000


def emd_max_iter(max_iter, n: int, m: int, param: str = "emd_max_iter") -> int:
    """The iteration limit of an ``n x m`` exact OT problem: ``max_iter``, or ``max(100000, n * m)`` for
    ``"auto"``; anything else is an error naming ``param``."""
    if isinstance(max_iter, str) and max_iter == "auto":
        return max(EMD_DEFAULT_MAX_ITER, int(n) * int(m))
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"{param} must be 'auto' or an integer >= 1 (the exact OT iteration limit), "
                         f"got {max_iter!r}")
    return int(max_iter)


def exact_coupling(a: np.ndarray, b: np.ndarray, M: np.ndarray, max_iter, param: str = "max_iter",
                   what: str = "exact OT") -> np.ndarray:
    """Exact OT coupling (POT's network simplex, :func:`otfs._ot.emd.emd`); reaching the limit is an error.

    ``max_iter`` is an integer or ``"auto"`` (:func:`emd_max_iter`); ``param`` is its name, which the
    error gives, with ``what`` the problem being solved.
    """
    limit = emd_max_iter(max_iter, M.shape[0], M.shape[1], param)
    G, result_code, message = emd(a, b, M, limit)
    if result_code != 1:
        auto = f"{param}='auto' allowed {limit}" if max_iter == "auto" else f"{param}={limit}"
        raise RuntimeError(
            f"{what} ({M.shape[0]} x {M.shape[1]}) did not reach optimality within {auto} iterations "
            f"(POT: {message}); raise {param}"
            + ("" if max_iter == "auto" or limit >= M.shape[0] * M.shape[1] else
               f", or set it to 'auto' (max(100000, n*m) = {max(EMD_DEFAULT_MAX_ITER, M.size)} here)")
        )
    return G


def gibbs_kernel(A: np.ndarray, B: np.ndarray, reg: float, norm: str | None) -> np.ndarray:
    """``exp(-normalise(C) / reg)`` for the squared Euclidean cost ``C``, in one buffer.

    The cost is computed as ``ot.dist`` computes it (``-2 <a, b> + |a|^2 +
    |b|^2``, clipped at 0) and ``"log"`` as ``ot.utils.cost_normalization``
    (``log(1 + C)``), so the kernel is POT's, without POT's separate cost,
    normalised cost and kernel arrays.
    """
    K = A @ B.T
    K *= -2.0
    K += np.einsum("ij,ij->i", A, A)[:, None]
    K += np.einsum("ij,ij->i", B, B)[None, :]
    np.maximum(K, 0.0, out=K)
    if norm == "log":
        K += 1.0
        np.log(K, out=K)
    elif norm not in (None, "none"):
        K = normalise_cost(K, norm)
    K /= -reg
    np.exp(K, out=K)
    return K


def sinkhorn_scalings(K: np.ndarray, a: np.ndarray, b: np.ndarray, max_iter: int, tol: float):
    """The scalings ``(u, v, n_iter, failed)`` of POT's ``sinkhorn_knopp`` for the kernel ``K``.

    The same iterations, stopping rule and reported iteration count as
    ``ot.sinkhorn(a, b, M, reg, method="sinkhorn")``: ``v = b / K^T u``,
    ``u = a / K v`` and, every tenth iteration, stop when
    ``||v * K^T u - b|| < tol``; on a numerical failure the previous
    scalings are kept. The marginal check reuses the product of the next
    iteration instead of a separate pass, and ``K / a`` is not stored. The
    coupling is ``u[:, None] * K * v[None, :]``.

    ``failed`` is True when the iteration stopped on such a failure (where
    POT warns "numerical errors at iteration"): the kernel underflowed, and
    the scalings do not describe a coupling of the marginals ``a``, ``b``.
    """
    u = np.full(K.shape[0], 1.0 / K.shape[0])
    v = np.full(K.shape[1], 1.0 / K.shape[1])
    KtU = K.T @ u
    ii = 0
    failed = False
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for ii in range(max_iter):  # noqa: B007 - ii is the reported iteration count, as in POT
            v_new = b / KtU
            u_new = a / (K @ v_new)
            if (KtU == 0).any() or not (np.isfinite(u_new).all() and np.isfinite(v_new).all()):
                failed = True
                break  # machine precision reached: keep the previous scalings, as POT does
            u, v = u_new, v_new
            KtU = K.T @ u
            if ii % 10 == 0 and np.linalg.norm(v * KtU - b) < tol:
                break
    return u, v, ii, failed


def _pot_sinkhorn_knopp(a, b, Mreg, reg, max_iter, tol):
    """POT's ``ot.sinkhorn(a, b, Mreg, reg, method="sinkhorn")`` (``sinkhorn_knopp``) on NumPy arrays, its
    coupling bit for bit.

    The operations are POT's, in its order: ``K = exp(Mreg / -reg)``, ``Kp = (1 / a) K``, ``v = b / K^T u``,
    ``u = 1 / (Kp v)``, on a NaN, infinite or zero update the previous scalings kept, the right marginal's
    error (``einsum("i,ij,j->j")``, ``numpy.linalg.norm``) every tenth iteration, and the coupling
    ``(u K) v``. Each ``n_s x n_t`` array is created by the expression that creates it in POT, so NumPy
    gives it POT's memory layout, on which the matrix-vector products' round-off depends; the exponential
    and the last product are taken in place. POT's backend dispatch and two of its arrays are gone.
    """
    K = Mreg / (-reg)
    np.exp(K, out=K)
    Kp = (1 / a).reshape(-1, 1) * K
    u = np.ones(a.shape[0], dtype=K.dtype) / a.shape[0]
    v = np.ones(b.shape[0], dtype=K.dtype) / b.shape[0]
    KT = K.T
    for ii in range(max_iter):
        uprev, vprev = u, v
        KtransposeU = np.dot(KT, u)
        v = b / KtransposeU
        u = 1.0 / np.dot(Kp, v)
        if (KtransposeU == 0).any() or not (np.isfinite(u).all() and np.isfinite(v).all()):
            u, v = uprev, vprev  # machine precision reached: POT keeps the previous scalings
            break
        if ii % 10 == 0 and np.linalg.norm(np.einsum("i,ij,j->j", u, K, v) - b) < tol:
            break
    G = u.reshape((-1, 1)) * K
    G *= v.reshape((1, -1))
    return G


def sinkhorn_lpl1_mm(a, labels_a, b, M, reg, eta, max_iter: int, max_inner_iter: int, tol: float) -> np.ndarray:
    """``ot.da.sinkhorn_lpl1_mm`` (the paper's OT3 solver), its coupling bit for bit, in a fraction of the work.

    POT's majoration-minimisation solves ``max_iter`` entropic problems with
    the cost ``M + eta W`` by POT's ``ot.sinkhorn`` (``"sinkhorn"``). Between
    them it updates ``W[s, t] = p (m_c(s)(t) + 1e-3)^(p - 1)``, ``p = 1/2``,
    where ``m_c(t)`` is the mass class ``c`` sends to the target sample ``t``.
    POT builds it through two ``n_t x n_s x C`` arrays, a sum over their
    middle axis, a product with the one-hot labels and an ``n_s x n_t`` power.
    Here:

    - ``m_c`` is the same sequential sum over the class's rows, in the same
      order (adding the other classes' exact zeros changes nothing), and the
      power is taken on the ``C x n_t`` class masses;
    - ``W`` is the class's row spread into a buffer reused across
      iterations, in the memory layout of POT's ``W``, so that
      ``M + eta * W`` has POT's values and layout (which decides the next
      solve's round-off);
    - the inner Sinkhorn is POT's (:func:`_pot_sinkhorn_knopp`) without its
      backend dispatch, with two ``n_s x n_t`` arrays fewer;
    - the class update after the last solve, which POT computes and
      discards, is skipped.

    The operations on every value are POT's, so is the coupling
    (``tests/test_adaptation.py`` compares them with ``np.array_equal``).
    POT warns when an inner solve stops at its limit or on a numerical
    error; this function does not (the OT3 adapter silences both, and
    checks the coupling).

    References
    ----------
    .. [1] N. Courty, R. Flamary, D. Tuia. Domain Adaptation with Regularized
       Optimal Transport. ECML PKDD 2014.
    """
    p, epsilon = 0.5, 1e-3
    M = np.asarray(M, dtype=np.float64)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    classes, labels = np.unique(np.asarray(labels_a), return_inverse=True)
    members = [np.flatnonzero(labels == c) for c in range(classes.shape[0])]
    Mreg = M + eta * np.zeros(M.shape, dtype=M.dtype)  # POT's first cost: W = 0
    W = np.empty(M.shape, dtype=M.dtype, order="F")
    transp = None
    for it in range(max_iter):
        transp = _pot_sinkhorn_knopp(a, b, Mreg, reg, max_inner_iter, tol)
        if it == max_iter - 1:
            break
        # the mass of each class on each target sample: a sequential sum over the class's rows, as
        # POT's sum over the middle axis of its n_t x n_s x C array (whose other rows add exact zeros)
        mass = np.empty((len(members), M.shape[1]), dtype=M.dtype)
        for c, rows in enumerate(members):
            acc = np.zeros(M.shape[1], dtype=M.dtype)
            for s in rows:
                acc += transp[s]
            mass[c] = acc
        # W[s, t] = P[class(s), t] spread into a buffer in the memory layout of POT's W (Fortran order: its W
        # is a transpose), then POT's expression for the next cost: NumPy takes the layout of M + eta W from
        # its operands (adding into the temporary eta W where it can), and the next solve's round-off
        # depends on that layout
        np.take(np.ascontiguousarray((p * ((mass + epsilon) ** (p - 1))).T), labels, axis=1, out=W.T, mode="clip")
        Mreg = M + eta * W
    return transp
