"""The min-form's building blocks and delta itself (numba, CPU): 4 x 4 tiles of row pairs whose
overlaps sum_k min(a_k, b_k) are register-blocked (each of the 8 row loads per k feeds 4 min-add
chains; the k loop vectorises with 16 accumulators), :func:`dobrushin_batch` (max fused, memory
O(B n) beyond the input), the exact-grid test, overlaps of listed pairs and the validation pass.
Re-exported by :mod:`numerics.kernels`."""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

FLAGS = dict(cache=True, fastmath=True, nogil=True, boundscheck=False)


@njit(**FLAGS)
def pair_overlap(P, b, i, j, m):  # noqa: ANN001
    s = P.dtype.type(0)
    for k in range(m):
        s += min(P[b, i, k], P[b, j, k])
    return s


# ------------------------------------------------------------------------------------------------
# dobrushin_batch: 4 x 4 tiles of row pairs, k-vectorised, max fused
# ------------------------------------------------------------------------------------------------
@njit(**FLAGS)
def tile_sums(P, b, i0, j0):  # noqa: ANN001
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


@njit(**FLAGS)
def _tile_max(P, rs, b, i0, j0):  # noqa: ANN001
    """max of d_ij = (r_i + r_j)/2 - overlap_ij over the pairs i < j of the 4 x 4 tile at (i0, j0)
    of matrix b (clamped indices repeat a pair already counted); 0 if the tile has no pair i < j."""
    n = P.shape[1]
    ss = tile_sums(P, b, i0, j0)
    z = P.dtype.type(0)
    best = z
    for r in range(4):
        i = min(i0 + r, n - 1)
        for c in range(4):
            j = min(j0 + c, n - 1)
            if i < j:
                best = max(best, P.dtype.type(0.5) * (rs[b, i] + rs[b, j]) - ss[r][c])
    return best


@njit(**FLAGS)
def _row_block_max(P, rs, b, q, nblk):  # noqa: ANN001
    """max d_ij over rows i of row block ib (4 rows) and all j > i, matrix b. Work item q is mapped
    to ib = 0, nblk-1, 1, nblk-2, ... so that consecutive items pair a long and a short stretch of
    the triangle (contiguous chunks of items then carry equal work)."""
    ib = q // 2 if q % 2 == 0 else nblk - 1 - q // 2
    best = P.dtype.type(0)
    for jb in range(ib, nblk):
        best = max(best, _tile_max(P, rs, b, 4 * ib, 4 * jb))
    return best


@njit(parallel=True, **FLAGS)
def _row_sums(P):  # noqa: ANN001
    B, n, m = P.shape
    rs = np.empty((B, n), dtype=P.dtype)
    for b in prange(B):
        for i in range(n):
            rs[b, i] = row_sum(P, b, i, m)
    return rs


@njit(parallel=True, **FLAGS)
def _dobrushin_parallel(P, rs):  # noqa: ANN001
    B, n, _ = P.shape
    nblk = (n + 3) // 4
    part = np.empty(B * nblk, dtype=P.dtype)       # (B * row blocks): work items over batch x rows
    for w in prange(B * nblk):
        part[w] = _row_block_max(P, rs, w // nblk, w % nblk, nblk)
    return part.reshape((B, nblk))


@njit(parallel=True, **FLAGS)
def _dobrushin_runs(P, threads):  # noqa: ANN001
    """delta per matrix, parallel over contiguous runs of whole matrices (8 runs per thread): each
    matrix's row sums and pairs are done while it is in cache, with no per-item bookkeeping."""
    B, n, m = P.shape
    nblk = (n + 3) // 4
    out = np.empty(B, dtype=P.dtype)
    runs = min(B, 8 * threads)
    for q in prange(runs):
        rsb = np.empty((1, n), dtype=P.dtype)
        for b in range(q * B // runs, (q + 1) * B // runs):
            for i in range(n):
                rsb[0, i] = row_sum(P, b, i, m)
            best = P.dtype.type(0)
            for ib in range(nblk):
                for jb in range(ib, nblk):
                    best = max(best, _tile_max_rs(P, rsb, b, 4 * ib, 4 * jb))
            out[b] = best
    return out


@njit(**FLAGS)
def _tile_max_rs(P, rsb, b, i0, j0):  # noqa: ANN001
    """_tile_max with the row sums of matrix b in rsb[0]."""
    n = P.shape[1]
    ss = tile_sums(P, b, i0, j0)
    best = P.dtype.type(0)
    for r in range(4):
        i = min(i0 + r, n - 1)
        for c in range(4):
            j = min(j0 + c, n - 1)
            if i < j:
                best = max(best, P.dtype.type(0.5) * (rsb[0, i] + rsb[0, j]) - ss[r][c])
    return best


@njit(**FLAGS)
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
        rs = row_sums_serial(P)
        return _dobrushin_serial(P, rs).max(axis=1)
    threads = numba.get_num_threads()
    if B >= 2 * threads:
        return _dobrushin_runs(P, threads)
    return _dobrushin_parallel(P, _row_sums(P)).max(axis=1)


@njit(**FLAGS)
def row_sums_serial(P):  # noqa: ANN001
    # the serial twin of _row_sums (below _SERIAL_OPS thread start-up dominates); numpy's sum over a
    # short last axis measured 1.5x slower end to end at 10000 x 16, so both stay compiled
    B, n, m = P.shape
    rs = np.empty((B, n), dtype=P.dtype)
    for b in range(B):
        for i in range(n):
            rs[b, i] = row_sum(P, b, i, m)
    return rs


@njit(**FLAGS)
def row_sum(P, b, i, m):  # noqa: ANN001
    s = P.dtype.type(0)
    for k in range(m):
        s += P[b, i, k]
    return s


@njit(parallel=True, **FLAGS)
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
