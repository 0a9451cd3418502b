"""Compiled min-form kernels for the Dobrushin coefficient (numba, CPU).

    1/2 ||a - b||_1 = (sum a + sum b)/2 - sum_k min(a_k, b_k)

computed over the upper triangle of row pairs like a (min,+) product, with the maximum fused:
memory per call is O(B n) beyond the input, never B x n x n x n (or even B x n x n).
Row pairs are taken in 4 x 4 tiles: each of the 8 row loads per column k feeds 4 min-add chains
(register blocking), and the k loop vectorises (fastmath reassociation) with 16 accumulators.
float32 input is accumulated in float32 by dobrushin_batch; pair_scan (exact certification) is
float64 only.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

_FLAGS = dict(cache=True, fastmath=True, nogil=True, boundscheck=False)


@njit(**_FLAGS)
def _pair_overlap(P, b, i, j, m):  # noqa: ANN001
    s = P.dtype.type(0)
    for k in range(m):
        s += min(P[b, i, k], P[b, j, k])
    return s


# ------------------------------------------------------------------------------------------------
# dobrushin_batch: 4 x 4 tiles of row pairs, k-vectorised, max fused
# ------------------------------------------------------------------------------------------------
@njit(**_FLAGS)
def _tile_sums(P, b, i0, j0):  # noqa: ANN001
    """Overlaps sum_k min(P_ik, P_jk) of the 4 x 4 tile rows i0..i0+3 x rows j0..j0+3 of matrix b
    (indices past n - 1 clamped to n - 1), as 4 tuples of 4. Each of the 8 row loads per k feeds
    4 min-add chains (register blocking); the k loop vectorises with 16 accumulators."""
    _, n, m = P.shape
    i1, i2, i3 = min(i0 + 1, n - 1), min(i0 + 2, n - 1), min(i0 + 3, n - 1)
    j1, j2, j3 = min(j0 + 1, n - 1), min(j0 + 2, n - 1), min(j0 + 3, n - 1)
    z = P.dtype.type(0)
    s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = z
    s20 = s21 = s22 = s23 = s30 = s31 = s32 = s33 = z
    for k in range(m):
        a0, a1, a2, a3 = P[b, i0, k], P[b, i1, k], P[b, i2, k], P[b, i3, k]
        c0, c1, c2, c3 = P[b, j0, k], P[b, j1, k], P[b, j2, k], P[b, j3, k]
        s00 += min(a0, c0); s01 += min(a0, c1); s02 += min(a0, c2); s03 += min(a0, c3)  # noqa: E702
        s10 += min(a1, c0); s11 += min(a1, c1); s12 += min(a1, c2); s13 += min(a1, c3)  # noqa: E702
        s20 += min(a2, c0); s21 += min(a2, c1); s22 += min(a2, c2); s23 += min(a2, c3)  # noqa: E702
        s30 += min(a3, c0); s31 += min(a3, c1); s32 += min(a3, c2); s33 += min(a3, c3)  # noqa: E702
    return ((s00, s01, s02, s03), (s10, s11, s12, s13), (s20, s21, s22, s23), (s30, s31, s32, s33))


@njit(**_FLAGS)
def _tile_max(P, rs, b, i0, j0):  # noqa: ANN001
    """max of d_ij = (r_i + r_j)/2 - overlap_ij over the pairs i < j of the 4 x 4 tile at (i0, j0)
    of matrix b (clamped indices repeat a pair already counted); 0 if the tile has no pair i < j."""
    n = P.shape[1]
    ss = _tile_sums(P, b, i0, j0)
    z = P.dtype.type(0)
    best = z
    for r in range(4):
        i = min(i0 + r, n - 1)
        for c in range(4):
            j = min(j0 + c, n - 1)
            if i < j:
                best = max(best, P.dtype.type(0.5) * (rs[b, i] + rs[b, j]) - ss[r][c])
    return best


@njit(**_FLAGS)
def _row_block_max(P, rs, b, q, nblk):  # noqa: ANN001
    """max d_ij over rows i of row block ib (4 rows) and all j > i, matrix b. Work item q is mapped
    to ib = 0, nblk-1, 1, nblk-2, ... so that consecutive items pair a long and a short stretch of
    the triangle (contiguous chunks of items then carry equal work)."""
    ib = q // 2 if q % 2 == 0 else nblk - 1 - q // 2
    best = P.dtype.type(0)
    for jb in range(ib, nblk):
        best = max(best, _tile_max(P, rs, b, 4 * ib, 4 * jb))
    return best


@njit(parallel=True, **_FLAGS)
def _row_sums(P):  # noqa: ANN001
    B, n, m = P.shape
    rs = np.empty((B, n), dtype=P.dtype)
    for b in prange(B):
        for i in range(n):
            rs[b, i] = _row_sum(P, b, i, m)
    return rs


@njit(parallel=True, **_FLAGS)
def _dobrushin_parallel(P, rs):  # noqa: ANN001
    B, n, _ = P.shape
    nblk = (n + 3) // 4
    part = np.empty(B * nblk, dtype=P.dtype)       # (B * row blocks): work items over batch x rows
    for w in prange(B * nblk):
        part[w] = _row_block_max(P, rs, w // nblk, w % nblk, nblk)
    return part.reshape((B, nblk))


@njit(**_FLAGS)
def _dobrushin_serial(P, rs):  # noqa: ANN001
    B, n, _ = P.shape
    nblk = (n + 3) // 4
    part = np.empty((B, nblk), dtype=P.dtype)
    for b in range(B):
        for q in range(nblk):
            part[b, q] = _row_block_max(P, rs, b, q, nblk)
    return part


_SERIAL_OPS = 2 ** 18  # below this many min-add operations, threads cost more than they save


def dobrushin_batch(P: np.ndarray) -> np.ndarray:
    """delta per matrix of P (B, n, m), C-contiguous float32/float64; result in P's dtype, (B,).

    Parallel over (matrix, block of 4 rows) work items, so a small batch of large matrices keeps
    every thread busy; tiny problems run serially (no thread start-up). Extra memory O(B n / 4)."""
    B, n, m = P.shape
    if n == 1:
        return np.zeros(B, dtype=P.dtype)
    ops = B * n * n * m // 2
    if ops < _SERIAL_OPS:
        rs = _row_sums_serial(P)
        return _dobrushin_serial(P, rs).max(axis=1)
    return _dobrushin_parallel(P, _row_sums(P)).max(axis=1)


@njit(**_FLAGS)
def _row_sums_serial(P):  # noqa: ANN001
    # the serial twin of _row_sums (below _SERIAL_OPS thread start-up dominates); numpy's sum over a
    # short last axis measured 1.5x slower end to end at 10000 x 16, so both stay compiled
    B, n, m = P.shape
    rs = np.empty((B, n), dtype=P.dtype)
    for b in range(B):
        for i in range(n):
            rs[b, i] = _row_sum(P, b, i, m)
    return rs


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
        ov = np.empty((4, n))                          # overlaps of 4 rows i0.. with every row j
        for i0 in range(0, n - 1, 4):
            for j0 in range(i0, n, 4):
                ss = _tile_sums(P, b, i0, j0)
                for r in range(4):
                    for c in range(min(4, n - j0)):
                        ov[r, j0 + c] = ss[r][c]
            for r in range(min(4, n - i0)):              # visit pairs in row-major order
                i = i0 + r
                for j in range(i + 1, n):
                    _visit(0.5 * (rs[i] + rs[j]) - ov[r, j], i, j, P, b, diag, st)
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


# ------------------------------------------------------------------------------------------------
# validation in one fused pass (finite, nonnegative, row sums), parallel over the batch
# ------------------------------------------------------------------------------------------------
@njit(parallel=True, cache=True, nogil=True, boundscheck=False)
def check_stochastic(P, tol):  # noqa: ANN001
    """Per matrix of P (B, n, m): (problem, row, col, value, max |row sum - 1|) where problem is
    0 ok, 1 non-finite entry, 2 negative entry, 3 row sum off by more than ``tol`` (first found in
    row-major order; ``value`` is the entry or the row sum). Row sums accumulate in float64."""
    B, n, m = P.shape
    kind = np.zeros(B, dtype=np.int64)
    row = np.zeros(B, dtype=np.int64)
    col = np.zeros(B, dtype=np.int64)
    val = np.zeros(B)
    dev = np.zeros(B)
    for b in prange(B):
        worst = 0.0
        for i in range(n):
            s = 0.0
            for k in range(m):
                v = P[b, i, k]
                if not np.isfinite(v) or v < 0:
                    if kind[b] == 0:
                        kind[b] = 1 if not np.isfinite(v) else 2
                        row[b] = i
                        col[b] = k
                        val[b] = v
                s += v
            d = abs(s - 1.0)
            if d > worst:
                worst = d
            if d > tol and kind[b] == 0:
                kind[b] = 3
                row[b] = i
                val[b] = s
        dev[b] = worst
    return kind, row, col, val, dev
