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

import numba
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


# The fields of the pair scan's statistics ``st`` (one float64 vector per matrix, or per row block
# before _merge), described in pair_scan's docstring. numba freezes module-level integers into the
# compiled code: ``st[BEST]`` compiles exactly as ``st[0]``.
BEST, SECOND, BEST_I, BEST_J, PENALISED = 0, 1, 2, 3, 4
TOP_FIRST, TOP_OTHER, ZERO_ANY, ZERO_FIRST, ZERO_OTHER = 5, 6, 7, 8, 9
NSTAT = 10
_MAXIMA = (PENALISED, TOP_FIRST, TOP_OTHER, ZERO_ANY, ZERO_FIRST, ZERO_OTHER)  # merged by max
_NONE = -1e300   # "no pair yet" (finite: fastmath assumes no infinities)


@njit(**_FLAGS)
def _visit(d, ov, i, j, P, b, diag, eps, st):  # noqa: ANN001
    """Fold pair (i, j), i < j, with float d_ij and overlap ov into the running statistics ``st``."""
    if ov == 0:                                         # disjoint supports: d_ij = 1 exactly
        st[ZERO_ANY] = 1.0
        if diag and P[b, j, i] == 0 and P[b, i, j] == 0:    # then x >= 0 and y >= 0 exactly
            st[ZERO_FIRST if i == 0 else ZERO_OTHER] = 1.0
    if d > st[BEST]:
        st[SECOND] = st[BEST]
        st[BEST] = d
        st[BEST_I] = i
        st[BEST_J] = j
    else:
        if d > st[SECOND]:
            st[SECOND] = d
        if d == st[BEST] and (i < st[BEST_I] or (i == st[BEST_I] and j < st[BEST_J])):
            st[BEST_I] = i                              # ties: the row-major first maximiser
            st[BEST_J] = j
    if diag:
        x = np.float64(P[b, i, i]) - np.float64(P[b, j, i])
        y = np.float64(P[b, j, j]) - np.float64(P[b, i, j])
        pen = (-x if x < 0 else 0.0) + (-y if y < 0 else 0.0)
        if d - pen > st[PENALISED]:
            st[PENALISED] = d - pen
        if x >= -eps and y >= -eps:                    # not certainly refuted as self-dominant
            k = TOP_FIRST if i == 0 else TOP_OTHER
            if d > st[k]:
                st[k] = d


@njit(**_FLAGS)
def _scan_block(P, rsb, b, ib, diag, e, st, ov):  # noqa: ANN001
    """Pairs (i, j > i) with i in row block ib (4 rows) of matrix b, folded into ``st``."""
    n = P.shape[1]
    i0 = 4 * ib
    for jb in range(ib, (n + 3) // 4):
        ss = _tile_sums(P, b, i0, 4 * jb)
        for r in range(4):
            for c in range(min(4, n - 4 * jb)):
                ov[r, 4 * jb + c] = ss[r][c]
    thr = min(st[SECOND], st[PENALISED], st[TOP_FIRST], st[TOP_OTHER]) if diag else st[SECOND]  # lower d: no change
    for r in range(min(4, n - i0)):                  # then visit the pairs, row-major
        i = i0 + r
        ri = np.float64(rsb[i])
        for j in range(i + 1, n):
            o = ov[r, j]
            d = np.float64(0.5) * (ri + np.float64(rsb[j])) - o
            if d >= thr or o == 0:
                _visit(d, o, i, j, P, b, diag, e, st)
                thr = min(st[SECOND], st[PENALISED], st[TOP_FIRST], st[TOP_OTHER]) if diag else st[SECOND]


@njit(**_FLAGS)
def _init(st, n):  # noqa: ANN001
    st[BEST] = st[SECOND] = st[PENALISED] = st[TOP_FIRST] = st[TOP_OTHER] = _NONE
    st[BEST_I] = st[BEST_J] = n
    st[ZERO_ANY] = st[ZERO_FIRST] = st[ZERO_OTHER] = 0.0


@njit(parallel=True, **_FLAGS)
def _pair_blocks(P, diag, eps, threads):  # noqa: ANN001
    """Statistics per matrix (parallel over matrices when there are enough of them), or per row
    block of a single matrix (parallel over its row blocks): (B, blocks, NSTAT), merged by _merge."""
    B, n, _ = P.shape
    nblk = (n + 3) // 4
    if B >= 2 * threads:
        part = np.empty((B, 1, NSTAT))
        for b in prange(B):
            st = part[b, 0]
            _init(st, n)
            ov = np.empty((4, n))
            rsb = np.empty(n, dtype=P.dtype)             # row sums while the matrix is in cache
            for i in range(n):
                rsb[i] = _row_sum(P, b, i, P.shape[2])
            for ib in range(nblk):
                _scan_block(P, rsb, b, ib, diag, eps[b], st, ov)
        return part
    rs = _row_sums_serial(P)
    part = np.empty((B, nblk, NSTAT))
    for w in prange(B * nblk):
        b, q = w // nblk, w % nblk
        ib = q // 2 if q % 2 == 0 else nblk - 1 - q // 2      # long and short stretches alternate
        _init(part[b, ib], n)
        _scan_block(P, rs[b], b, ib, diag, eps[b], part[b, ib], np.empty((4, n)))
    return part


@njit(**_FLAGS)
def _merge(part):  # noqa: ANN001
    B, nblk, _ = part.shape
    out = np.empty((B, NSTAT))
    for b in range(B):
        o = out[b]
        o[:] = part[b, 0]
        for q in range(1, nblk):
            s = part[b, q]
            if s[BEST] > o[BEST] or (s[BEST] == o[BEST] and (s[BEST_I] < o[BEST_I] or
                                                             (s[BEST_I] == o[BEST_I] and s[BEST_J] < o[BEST_J]))):
                o[SECOND] = max(o[SECOND], s[SECOND], o[BEST] if s[BEST] > o[BEST] else s[BEST])
                o[BEST], o[BEST_I], o[BEST_J] = s[BEST], s[BEST_I], s[BEST_J]
            else:
                o[SECOND] = max(o[SECOND], s[SECOND], s[BEST])
            for k in _MAXIMA:
                o[k] = max(o[k], s[k])
    return out


def pair_scan(P: np.ndarray, diag: bool, eps: np.ndarray | None = None) -> np.ndarray:
    """One pass over all row pairs of each P (B, n, m), float32 or float64 (accumulated in P's dtype),
    parallel over (matrix, block of 4 rows). Returns (B, NSTAT) float64 statistics, columns named by
    this module's constants (``st[:, BEST]``):

        BEST            largest float d_ij
        SECOND          second largest over the other pairs
        BEST_I, BEST_J  the row-major first maximiser
        PENALISED       max_{i<j} d_ij - x^- - y^-  (x = P_ii - P_ji, y = P_jj - P_ij)
        TOP_FIRST       max d_(0,j) over the pairs with x >= -eps and y >= -eps
        TOP_OTHER       the same over the pairs avoiding row 0
        ZERO_ANY        1.0 if some pair has float overlap exactly 0 (disjoint supports: d_ij = 1 exactly)
        ZERO_FIRST      1.0 if such a pair with P_ji = P_ij = 0 (self-dominant exactly) contains row 0
        ZERO_OTHER      the same for such a pair avoiding row 0

    (PENALISED, TOP_* and ZERO_FIRST/ZERO_OTHER only when ``diag``, i.e. P square; ``eps`` per
    matrix, default 0.) For n = 1 BEST = -1e300 (no pair)."""
    B, n, m = P.shape
    eps = np.zeros(B) if eps is None else np.ascontiguousarray(eps, dtype=np.float64)
    return _merge(_pair_blocks(P, diag, eps, numba.get_num_threads()))


@njit(parallel=True, **_FLAGS)
def pair_d(P, b):  # noqa: ANN001
    """(n, n) float64: d_ij of matrix b for i < j (min-form, as :func:`pair_scan`), -1e300 elsewhere."""
    _, n, m = P.shape
    rs = np.empty(n)
    for i in range(n):
        rs[i] = _row_sum(P, b, i, m)
    D = np.full((n, n), _NONE)
    nblk = (n + 3) // 4
    for ib in prange(nblk):
        i0 = 4 * ib
        for jb in range(ib, nblk):
            ss = _tile_sums(P, b, i0, 4 * jb)
            for r in range(4):
                for c in range(4):
                    i, j = i0 + r, 4 * jb + c
                    if i < j < n:
                        D[i, j] = 0.5 * (rs[i] + rs[j]) - np.float64(ss[r][c])
    return D


@njit(parallel=True, **_FLAGS)
def pair_overlaps(N, ii, jj):  # noqa: ANN001
    """sum_k min(N_ik, N_jk) for the listed pairs of one matrix N (n, m), float64."""
    out = np.empty(len(ii))
    for p in prange(len(ii)):
        s = 0.0
        for k in range(N.shape[1]):
            s += min(N[ii[p], k], N[jj[p], k])
        out[p] = s
    return out


@njit(parallel=True, cache=True, nogil=True, boundscheck=False)
def exact_grid(P, q):  # noqa: ANN001
    """Per matrix of P (B, n, m): every entry an integer multiple of ``q`` (a power of two) and every
    row summing to exactly 1. With q >= 2**-50 every sum and difference the float64 pair pass forms
    is then exact (magnitudes <= 4, all multiples of q/2), so its verdicts need no error margin."""
    B, n, m = P.shape
    out = np.ones(B, dtype=np.bool_)
    inv = 1.0 / q
    for b in prange(B):
        for i in range(n):
            s = 0.0
            for k in range(m):
                v = np.float64(P[b, i, k]) * inv
                if v != np.floor(v):
                    out[b] = False
                s += np.float64(P[b, i, k])
            if s != 1.0:
                out[b] = False
            if not out[b]:
                break
    return out


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
