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

What each implementation decides by is kept (:func:`values`): the two sides of the == tests, and
for the condition its slack (D1's closed form, docs/theory.md §1, evaluated in ``dtype``: 1/2 the
least over pairs of (delta - d_ij) + x^- + y^-, 0 exactly where the condition holds), delta, the
relative margin of the pair that attains the slack, the distance of the nearest rival pair and the
second largest distance. From them the verdict at any tolerance (:func:`at_tolerance`: absolute,
|lhs - rhs| <= t, or relative, <= t max(|lhs|, |rhs|); the condition's slack against t or t (1 +
delta)/2) and whether a verdict lies within rounding of a tie (:func:`near_tie`), with no
recomputation.

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
UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float64": 2.0 ** -53}
SIDES = ("lhs", "rhs")                                  # the == tests' floats (values)
CONDITION_VALUES = ("slack", "delta", "margin", "rival", "second")   # the condition's floats (_condition_kernel)
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


def _sides(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two sides of D1 in t's precision: delta((I + t)/2) and (1 + delta(t))/2, both deltas by
    :func:`delta_l1`, (I + t)/2 formed entrywise in t's precision."""
    one, two = t.dtype.type(1), t.dtype.type(2)
    half = (np.eye(t.shape[-1], dtype=t.dtype) + t) / two
    return delta_l1(half), (one + delta_l1(t)) / two


def _equality_test(t: np.ndarray) -> np.ndarray:
    """'tight' / 'holds' / 'violated': delta((I + t)/2) against (1 + delta(t))/2, all in t's
    precision (:func:`_sides`)."""
    return at_tolerance("renormalised", dict(zip(SIDES, _sides(t))), 0.0)


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
def _condition_kernel(P, theta):  # noqa: ANN001
    """Per matrix of P (B, n, n), n >= 2, the quantities of D1's equality condition in P's precision,
    as float64 columns :data:`CONDITION_VALUES` (nan where there is none): with d_ij = 1/2
    :func:`_l1` and the margins x = P_ii - P_ji, y = P_jj - P_ij of each pair i < j, and D the
    largest d_ij, ``slack`` = 1/2 min_(i<j) [(D - d_ij) + x^- + y^-] in P's precision (the closed
    form of docs/theory.md §1: 0 iff a maximising pair has both margins >= 0), ``delta`` = D,
    ``margin`` = min(x / (P_ii + P_ji), y / (P_jj + P_ij)) of the pair attaining the slack (of
    several, the largest; a ratio 0/0 is +inf), ``rival`` the largest d_ij of a pair whose margin is
    below ``theta``, ``second`` the second largest d_ij (D where two pairs tie). Parallel over
    (matrix, row i), then over matrices."""
    B, n, _ = P.shape
    half, zero = P.dtype.type(0.5), P.dtype.type(0)
    D = np.full((B, n, n), P.dtype.type(-1))
    for w in prange(B * n):
        b, i = w // n, w % n
        for j in range(i + 1, n):
            D[b, i, j] = _l1(P, b, i, j) * half
    out = np.full((B, 5), np.nan)
    for b in prange(B):
        best = D[b].max()
        e_min = P.dtype.type(np.inf)
        m_best, rival, top, second = -np.inf, -np.inf, -np.inf, -np.inf
        for i in range(n):
            for j in range(i + 1, n):
                d = D[b, i, j]
                x = P[b, i, i] - P[b, j, i]
                y = P[b, j, j] - P[b, i, j]
                e = (best - d) + (-x if x < zero else zero) + (-y if y < zero else zero)
                sx = float(P[b, i, i]) + float(P[b, j, i])
                sy = float(P[b, j, j]) + float(P[b, i, j])
                m = min(float(x) / sx if sx > 0 else np.inf, float(y) / sy if sy > 0 else np.inf)
                if e < e_min or (e == e_min and m > m_best):
                    e_min, m_best = e, m
                if m < theta and d > rival:
                    rival = float(d)
                if d > top:
                    second, top = top, float(d)
                elif d > second:
                    second = float(d)
        out[b, 0] = float(e_min * half)
        out[b, 1] = float(best)
        out[b, 2] = m_best
        if rival > -np.inf:
            out[b, 3] = rival
        if second > -np.inf:
            out[b, 4] = second
    return out


def rounding(n: int, dtype: str) -> float:
    """n u_p: the rounding scale of a sum of ``n`` terms in ``dtype`` (u_p its unit roundoff,
    :data:`UNIT_ROUNDOFF`), the width :func:`near_tie` calls within rounding.

    >>> rounding(32, "float32") == 2.0 ** -19
    True
    """
    return n * UNIT_ROUNDOFF[dtype]


def _condition_values(t: np.ndarray) -> np.ndarray:
    """:func:`_condition_kernel` on every matrix of ``t`` (..., n, n) in its precision: (..., 5)."""
    n = t.shape[-1]
    flat = np.ascontiguousarray(t.reshape((-1, n, n)))
    out = np.full((flat.shape[0], len(CONDITION_VALUES)), np.nan)
    if n >= 2:
        theta = rounding(n, t.dtype.name)
        step = max(1, CHUNK_ENTRIES // (n * n))     # the kernel's d_ij table: step x n x n floats
        for s in range(0, flat.shape[0], step):
            out[s:s + step] = _condition_kernel(flat[s:s + step], theta)
    return out.reshape(t.shape[:-2] + (len(CONDITION_VALUES),))


def condition(A: Any, dtype: str) -> np.ndarray:
    """Theorem D1's equality condition evaluated in ``dtype`` on the rows renormalised in ``dtype``:
    "tight" or "holds", never "violated" (see the module docstring). Shape (...).

    >>> A = np.array([[0.6, 0.3, 0.1], [0.5, 0.4, 0.1], [0.1, 0.1, 0.8]])
    >>> str(condition(A, "float64"))      # maximiser (0, 2) or (1, 2): A_00 = 0.6 >= A_20, A_22 >= A_02
    'tight'
    """
    return at_tolerance("condition", values(A, dtype, "condition"), 0.0)


def values(A: Any, dtype: str, implementation: str) -> dict[str, np.ndarray]:
    """The floats one implementation decides by, in ``dtype``, each of shape (...): for the == tests
    :data:`SIDES` (delta((I + A)/2) and (1 + delta(A))/2, on the floats as stored or renormalised
    in ``dtype``), for ``condition`` :data:`CONDITION_VALUES` (:func:`_condition_kernel`, on the rows
    renormalised in ``dtype``). Its verdict at any tolerance is :func:`at_tolerance` of these.

    >>> v = values(np.array([[0.75, 0.25], [0.25, 0.75]]), "float32", "condition")
    >>> [float(v[k]) for k in ("slack", "delta", "margin")]      # self-dominant, margins 1/2 of 1
    [0.0, 0.5, 0.5]
    """
    if implementation not in IMPLEMENTATIONS:
        raise InvalidInput(f"float test {implementation!r}: use one of {', '.join(IMPLEMENTATIONS)}")
    t = _floats(A, dtype, renormalise=implementation != "as-stored")
    if implementation == "condition":
        v = _condition_values(t)
        return {k: v[..., c] for c, k in enumerate(CONDITION_VALUES)}
    return dict(zip(SIDES, _sides(t)))


def _array(v: Any) -> np.ndarray:
    """Values as float64: an array, a number or a list of them as stored (None, a quantity that
    does not exist: nan)."""
    if isinstance(v, (list, tuple)):
        return np.array([np.nan if x is None else x for x in v], dtype=np.float64)
    return np.asarray(np.nan if v is None else v, dtype=np.float64)


def at_tolerance(implementation: str, vals: dict, tol: float, relative: bool = False) -> np.ndarray:
    """The verdict of a float test at tolerance ``tol`` >= 0 from its floats ``vals`` (:func:`values`,
    as arrays or as stored: float64 holds float32 values exactly): the == tests "tight" where
    |lhs - rhs| <= tol (``relative``: tol max(|lhs|, |rhs|)), else "holds" where lhs < rhs, else
    "violated"; the condition "tight" where its slack <= tol (``relative``: tol (1 + delta)/2), else
    "holds". At tol = 0 these are the tolerance-0 tests. Shape that of the values.

    >>> at_tolerance("renormalised", {"lhs": 0.75, "rhs": 0.75 + 2.0 ** -24}, 1e-9).tolist()
    'holds'
    >>> at_tolerance("renormalised", {"lhs": 0.75, "rhs": 0.75 + 2.0 ** -24}, 1e-7).tolist()
    'tight'
    """
    if implementation == "condition":
        s, scale = _array(vals["slack"]), (1 + _array(vals["delta"])) / 2
        return np.where(s <= (tol * scale if relative else tol), "tight", "holds")
    lhs, rhs = _array(vals["lhs"]), _array(vals["rhs"])
    limit = tol * np.maximum(np.abs(lhs), np.abs(rhs)) if relative else tol
    return np.where(np.abs(lhs - rhs) <= limit, "tight", np.where(lhs < rhs, "holds", "violated"))


def near_tie(vals: dict, dtype: str, n: Any) -> np.ndarray:
    """Whether a verdict lies within rounding of a tie in ``dtype``, from the condition's floats
    ``vals`` (:data:`CONDITION_VALUES` in ``dtype``; ``n``: the tokens) and theta = n u_p
    (:func:`rounding`): where the float condition says strict, its slack is below theta (1 + delta)/2;
    where it says tight, the margin of its pair is below theta (relative to the pair's entries) or
    a rival (a pair whose margin is below theta) has its distance within theta (D + d) of the largest
    D. Elsewhere every quantity the condition decides by is farther from its threshold than the
    rounding of a sum of n terms. Bool, the shape of the values.

    >>> bool(near_tie({"slack": 0.0, "delta": 0.5, "margin": 1e-9, "rival": None}, "float32", 8))
    True
    >>> bool(near_tie({"slack": 0.0, "delta": 0.5, "margin": 1e-9, "rival": None}, "float64", 8))
    False
    """
    theta = np.asarray(n, dtype=np.float64) * UNIT_ROUNDOFF[dtype]
    s, d, m, r = (_array(vals[k]) for k in ("slack", "delta", "margin", "rival"))
    m = np.where(np.isnan(m), np.inf, m)               # no margin to cross (both entries 0)
    with np.errstate(invalid="ignore"):
        strict = (s > 0) & (s < theta * (1 + d) / 2)
        tight = (s == 0) & ((m < theta) | (d - r < theta * (d + r)))      # no rival: nan, False
    return strict | tight


_BY_NAME = {"as-stored": as_stored, "renormalised": renormalised, "condition": condition}


def verdicts(A: Any, dtype: str, implementation: str) -> np.ndarray:
    """The float verdicts of one named implementation (:data:`IMPLEMENTATIONS`) in ``dtype``."""
    if implementation not in _BY_NAME:
        raise InvalidInput(f"float test {implementation!r}: use one of {', '.join(IMPLEMENTATIONS)}")
    return _BY_NAME[implementation](A, dtype)


def all_verdicts(A: Any) -> dict[str, dict[str, np.ndarray]]:
    """``{dtype: {implementation: verdicts}}`` for every precision and implementation."""
    return {dt: {name: verdicts(A, dt, name) for name in IMPLEMENTATIONS} for dt in DTYPES}
