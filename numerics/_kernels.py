"""Compiled min-form kernels for the Dobrushin coefficient (numba, CPU).

    1/2 ||a - b||_1 = (sum a + sum b)/2 - sum_k min(a_k, b_k)

computed over the upper triangle of row pairs like a (min,+) product, with the maximum fused:
memory per call is O(B) beyond the input, never B x n x n x n (or even B x n x n).
Rows are processed four at a time against one row so that each load of row i feeds four
min-add chains (register blocking); the inner loop vectorises (fastmath reassociation).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

_FLAGS = dict(cache=True, fastmath=True, nogil=True, boundscheck=False)


@njit(**_FLAGS)
def _pair_overlaps4(P, b, i, j, m):  # noqa: ANN001 - numba
    s0 = P.dtype.type(0)
    s1 = s0
    s2 = s0
    s3 = s0
    for k in range(m):
        a = P[b, i, k]
        s0 += min(a, P[b, j, k])
        s1 += min(a, P[b, j + 1, k])
        s2 += min(a, P[b, j + 2, k])
        s3 += min(a, P[b, j + 3, k])
    return s0, s1, s2, s3


@njit(**_FLAGS)
def _pair_overlap(P, b, i, j, m):  # noqa: ANN001
    s = P.dtype.type(0)
    for k in range(m):
        s += min(P[b, i, k], P[b, j, k])
    return s


@njit(parallel=True, **_FLAGS)
def dobrushin_batch(P):  # noqa: ANN001
    """delta per matrix of P (B, n, m); result in P's dtype, (B,)."""
    B, n, m = P.shape
    out = np.zeros(B, dtype=P.dtype)
    for b in prange(B):
        rs = np.empty(n, dtype=P.dtype)
        for i in range(n):
            rs[i] = _row_sum(P, b, i, m)
        best = P.dtype.type(0)
        for i in range(n - 1):
            j = i + 1
            while j + 3 < n:
                s0, s1, s2, s3 = _pair_overlaps4(P, b, i, j, m)
                best = max(best, 0.5 * (rs[i] + rs[j]) - s0)
                best = max(best, 0.5 * (rs[i] + rs[j + 1]) - s1)
                best = max(best, 0.5 * (rs[i] + rs[j + 2]) - s2)
                best = max(best, 0.5 * (rs[i] + rs[j + 3]) - s3)
                j += 4
            while j < n:
                best = max(best, 0.5 * (rs[i] + rs[j]) - _pair_overlap(P, b, i, j, m))
                j += 1
        out[b] = best
    return out


@njit(**_FLAGS)
def _row_sum(P, b, i, m):  # noqa: ANN001
    s = P.dtype.type(0)
    for k in range(m):
        s += P[b, i, k]
    return s


@njit(**_FLAGS)
def _visit(d, i, j, P, b, diag, st):  # noqa: ANN001
    # st = [best, second, bi, bj, g]; g = max over pairs of d - x^- - y^- (Theorem D1 closed form)
    if d > st[0]:
        st[1] = st[0]
        st[0] = d
        st[2] = i
        st[3] = j
    elif d > st[1]:
        st[1] = d
    if diag:
        x = P[b, i, i] - P[b, j, i]
        y = P[b, j, j] - P[b, i, j]
        pen = (-x if x < 0 else 0.0) + (-y if y < 0 else 0.0)
        if d - pen > st[4]:
            st[4] = d - pen


@njit(parallel=True, **_FLAGS)
def pair_scan(P, diag):  # noqa: ANN001
    """One pass over all row pairs of each P (B, n, m), float64.

    Returns (best, second, bi, bj, g): the largest d_ij, the second largest over the other pairs,
    a maximising pair (bi < bj), and g = max_{i<j} [d_ij - x^- - y^-] with x = P_ii - P_ji,
    y = P_jj - P_ij (only when ``diag``, i.e. P square). For n = 1 every value is -1.
    """
    B, n, m = P.shape
    best = np.full(B, -1.0)
    second = np.full(B, -1.0)
    bi = np.zeros(B, dtype=np.int64)
    bj = np.zeros(B, dtype=np.int64)
    g = np.full(B, -1.0)
    for b in prange(B):
        rs = np.empty(n)
        for i in range(n):
            rs[i] = _row_sum(P, b, i, m)
        st = np.array([-1.0, -1.0, 0.0, 0.0, -1.0])
        for i in range(n - 1):
            j = i + 1
            while j + 3 < n:
                s0, s1, s2, s3 = _pair_overlaps4(P, b, i, j, m)
                _visit(0.5 * (rs[i] + rs[j]) - s0, i, j, P, b, diag, st)
                _visit(0.5 * (rs[i] + rs[j + 1]) - s1, i, j + 1, P, b, diag, st)
                _visit(0.5 * (rs[i] + rs[j + 2]) - s2, i, j + 2, P, b, diag, st)
                _visit(0.5 * (rs[i] + rs[j + 3]) - s3, i, j + 3, P, b, diag, st)
                j += 4
            while j < n:
                _visit(0.5 * (rs[i] + rs[j]) - _pair_overlap(P, b, i, j, m), i, j, P, b, diag, st)
                j += 1
        best[b] = st[0]
        second[b] = st[1]
        bi[b] = int(st[2])
        bj[b] = int(st[3])
        g[b] = st[4]
    return best, second, bi, bj, g


@njit(**_FLAGS)
def near_max_pairs(P, b, threshold):  # noqa: ANN001
    """All pairs (i < j) of matrix b with float d_ij >= threshold, as an (k, 2) int array."""
    _, n, m = P.shape
    rs = np.empty(n)
    for i in range(n):
        rs[i] = _row_sum(P, b, i, m)
    out = np.empty((n * (n - 1) // 2, 2), dtype=np.int64)
    c = 0
    for i in range(n - 1):
        for j in range(i + 1, n):
            if 0.5 * (rs[i] + rs[j]) - _pair_overlap(P, b, i, j, m) >= threshold:
                out[c, 0] = i
                out[c, 1] = j
                c += 1
    return out[:c]
