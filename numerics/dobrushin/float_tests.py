"""Theorem D1 tested in floats at tolerance 0, three ways: what a float implementation of the test
says, beside the exact verdict (:func:`numerics.dobrushin.factor_check`). A float test of an
equality has no single answer: it depends on how it is written. Three reasonable ways, each in
float32 or float64 (``dtype``), each giving one verdict string per matrix of ``A`` (..., n, n):

    as-stored      both sides, delta((I + A)/2) and (1 + delta(A))/2, computed in ``dtype`` from the
                   floats as they are (no renormalisation): "tight" if equal, "holds" if the left is
                   smaller, "violated" if larger (:func:`as_stored`)
    renormalised   the same after each row is divided by its sum in ``dtype`` (:func:`renormalised`)
    condition      Theorem D1's equality *condition* in floats (docs/theory.md §1: equality iff some
                   pair (i, j) attaining delta(A) is mutually self-dominant, A_ii >= A_ji and
                   A_jj >= A_ij), on the rows renormalised in ``dtype``: d_ij = 1/2 sum_k |A_ik - A_jk|
                   summed in ``dtype`` (:func:`_l1`), the pairs whose float d_ij equals the float maximum (usually
                   one, the float argmax; exact float ties all count, as every maximising pair counts
                   in the exact condition), "tight" if one of them has both margins A_ii - A_ji and
                   A_jj - A_ij >= 0 in ``dtype``, else "holds"; it never says "violated"
                   (:func:`condition`)

Every implementation computes d_ij = 1/2 sum_k |A_ik - A_jk| the same way, in ``dtype``, by one
sum in a fixed order (:func:`_l1`: eight interleaved partial sums combined pairwise, compiled
without fast-math and for a generic CPU, :mod:`numerics.pins`, so its floats do not depend on the
machine); the == tests take delta as the largest of them (:func:`delta_l1`), for A and for
(I + A)/2 = (eye + A) / 2 formed in ``dtype``. The exact verdict is
for the stored floats with each row divided by its *exact* sum; none of these is.

>>> A = np.array([[0.5, 0.25, 0.25], [0.125, 0.75, 0.125], [0.25, 0.25, 0.5]])   # dyadic: no rounding
>>> [str(verdicts(A, "float32", name)) for name in IMPLEMENTATIONS]
['tight', 'tight', 'tight']
>>> str(condition(np.array([[0.25, 0.75], [0.5, 0.5]]), "float64"))   # A_00 = 0.25 < A_10: not self-dominant
'holds'
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from numerics.stochastic import as_stochastic
from theory.errors import InvalidInput

IMPLEMENTATIONS = ("as-stored", "renormalised", "condition")
DTYPES = ("float32", "float64")
ROW_TOL = 1e-4      # validation only: stored attention rows (float32) sum to 1 within ~1e-7
CHUNK_ENTRIES = 2 ** 22     # matrices per call of the condition kernel: its d_ij table stays under 32 MB


def _floats(A: Any, dtype: str, renormalise: bool) -> np.ndarray:
    """A as a C-contiguous (..., n, n) array in ``dtype``, its rows divided by their sum in ``dtype``
    when ``renormalise``; validated as (nearly) row-stochastic, one line naming what is wrong."""
    if dtype not in DTYPES:
        raise InvalidInput(f"float test precision {dtype!r}: use one of {', '.join(DTYPES)}")
    t = np.ascontiguousarray(A, dtype=np.dtype(dtype))
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise InvalidInput(f"A: must be square (..., n, n), got shape {t.shape}")
    if renormalise:
        with np.errstate(invalid="ignore", divide="ignore"):
            t = t / t.sum(axis=-1, keepdims=True)
    as_stochastic(t, "A", square=True, row_tol=ROW_TOL)        # finite, nonnegative, rows near 1
    return t


def delta_l1(t: np.ndarray) -> np.ndarray:
    """delta of each matrix of ``t`` (..., n, n) in its precision as the float test computes it: the
    maximum over i < j of 1/2 sum_k |t_ik - t_jk|, each sum by :func:`_l1` (fixed order, no
    fast-math). Shape (...); 0 for n = 1.

    >>> float(delta_l1(np.array([[0.9, 0.1], [0.2, 0.8]])))   # 2x2: |det| = 0.7
    0.7
    """
    n = t.shape[-1]
    flat = np.ascontiguousarray(t.reshape((-1, n, n)))
    return _delta_kernel(flat).reshape(t.shape[:-2])


def _equality_test(t: np.ndarray) -> np.ndarray:
    """'tight' / 'holds' / 'violated': delta((I + t)/2) against (1 + delta(t))/2, all in t's
    precision, both deltas by :func:`delta_l1`."""
    one, two = t.dtype.type(1), t.dtype.type(2)
    half = (np.eye(t.shape[-1], dtype=t.dtype) + t) / two
    lhs, rhs = delta_l1(half), (one + delta_l1(t)) / two
    return np.where(lhs == rhs, "tight", np.where(lhs < rhs, "holds", "violated"))


def as_stored(A: Any, dtype: str) -> np.ndarray:
    """The == test on the floats as stored, in ``dtype`` (see the module docstring). Shape (...).

    >>> A = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> str(as_stored(A, "float64"))      # self-dominant, so D1 is an equality; dyadic: no rounding
    'tight'
    """
    return _equality_test(_floats(A, dtype, renormalise=False))


def renormalised(A: Any, dtype: str) -> np.ndarray:
    """The == test after each row is divided by its sum in ``dtype``. Shape (...).

    >>> str(renormalised(np.array([[1.0, 1.0], [0.0, 2.0]]), "float64"))   # rows (1/2, 1/2), (0, 1)
    'tight'
    """
    return _equality_test(_floats(A, dtype, renormalise=True))


@njit(cache=True, nogil=True)
def _l1(P, b, i, j):  # noqa: ANN001
    """sum_k |P_bik - P_bjk| in P's precision: 8 interleaved partial sums (lane r takes k = r mod 8),
    combined pairwise in a fixed order, then the tail; no fast-math, so the same floats everywhere."""
    n = P.shape[2]
    z = P.dtype.type(0)
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = z
    m = n - n % 8
    for k in range(0, m, 8):
        s0 += abs(P[b, i, k] - P[b, j, k])
        s1 += abs(P[b, i, k + 1] - P[b, j, k + 1])
        s2 += abs(P[b, i, k + 2] - P[b, j, k + 2])
        s3 += abs(P[b, i, k + 3] - P[b, j, k + 3])
        s4 += abs(P[b, i, k + 4] - P[b, j, k + 4])
        s5 += abs(P[b, i, k + 5] - P[b, j, k + 5])
        s6 += abs(P[b, i, k + 6] - P[b, j, k + 6])
        s7 += abs(P[b, i, k + 7] - P[b, j, k + 7])
    s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    for k in range(m, n):
        s += abs(P[b, i, k] - P[b, j, k])
    return s


@njit(parallel=True, cache=True, nogil=True)
def _delta_kernel(P):  # noqa: ANN001
    """max_{i<j} 1/2 _l1(P, b, i, j) per matrix b of P (B, n, n), in P's precision; parallel over
    matrices only (each matrix's maximum is taken in one order)."""
    B, n, _ = P.shape
    half = P.dtype.type(0.5)
    out = np.zeros(B, dtype=P.dtype)
    for b in prange(B):
        best = P.dtype.type(0)
        for i in range(n):
            for j in range(i + 1, n):
                d = _l1(P, b, i, j) * half
                if d > best:
                    best = d
        out[b] = best
    return out


@njit(parallel=True, cache=True, nogil=True)
def _condition_kernel(P):  # noqa: ANN001
    """Per matrix of P (B, n, n): whether a pair with the maximal float d_ij = 1/2 sum_k |P_ik - P_jk|
    (:func:`_l1`, P's precision) has both self-dominance margins >= 0. Parallel over (matrix, row i)."""
    B, n, _ = P.shape
    half = P.dtype.type(0.5)
    D = np.full((B, n, n), P.dtype.type(-1))
    for w in prange(B * n):
        b, i = w // n, w % n
        for j in range(i + 1, n):
            D[b, i, j] = _l1(P, b, i, j) * half
    out = np.zeros(B, dtype=np.bool_)
    zero = P.dtype.type(0)
    for b in prange(B):
        best = D[b].max()
        hit = False
        for i in range(n):
            for j in range(i + 1, n):
                if D[b, i, j] == best and P[b, i, i] - P[b, j, i] >= zero and P[b, j, j] - P[b, i, j] >= zero:
                    hit = True
        out[b] = hit
    return out


def condition(A: Any, dtype: str) -> np.ndarray:
    """Theorem D1's equality condition evaluated in ``dtype`` on the rows renormalised in ``dtype``:
    "tight" or "holds", never "violated" (see the module docstring). Shape (...).

    >>> A = np.array([[0.6, 0.3, 0.1], [0.5, 0.4, 0.1], [0.1, 0.1, 0.8]])
    >>> str(condition(A, "float64"))      # maximiser (0, 2) or (1, 2): A_00 = 0.6 >= A_20, A_22 >= A_02
    'tight'
    """
    t = _floats(A, dtype, renormalise=True)
    n = t.shape[-1]
    flat = np.ascontiguousarray(t.reshape((-1, n, n)))
    hit = np.zeros(flat.shape[0], dtype=bool)
    if n >= 2:
        step = max(1, CHUNK_ENTRIES // (n * n))     # the kernel's d_ij table: step x n x n floats
        for s in range(0, flat.shape[0], step):
            hit[s:s + step] = _condition_kernel(flat[s:s + step])
    return np.where(hit, "tight", "holds").reshape(t.shape[:-2])


_BY_NAME = {"as-stored": as_stored, "renormalised": renormalised, "condition": condition}


def verdicts(A: Any, dtype: str, implementation: str) -> np.ndarray:
    """The float verdicts of one named implementation (:data:`IMPLEMENTATIONS`) in ``dtype``."""
    if implementation not in _BY_NAME:
        raise InvalidInput(f"float test {implementation!r}: use one of {', '.join(IMPLEMENTATIONS)}")
    return _BY_NAME[implementation](A, dtype)


def all_verdicts(A: Any) -> dict[str, dict[str, np.ndarray]]:
    """``{dtype: {implementation: verdicts}}`` for every precision and implementation."""
    return {dt: {name: verdicts(A, dt, name) for name in IMPLEMENTATIONS} for dt in DTYPES}
