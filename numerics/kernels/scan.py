"""The pair scan (numba, CPU): one pass over all row pairs that keeps, besides delta, everything
Theorem D1's certification needs (:func:`pair_scan`'s statistics: the maximiser, the runner-up,
the penalised maximum, the self-dominant maxima, disjoint supports, and with ``direct`` delta((I+A)/2)),
so that :func:`numerics.dobrushin.factor_check` costs a small constant over the float pass
(docs/theory.md, Theorem D1 and its equality condition). Re-exported by :mod:`numerics.kernels`."""
from __future__ import annotations

import threading

import numba
import numpy as np
from numba import njit, prange

from numerics.kernels.tiles import FLAGS, pair_overlap, row_sum, row_sums_serial, tile_sums
from theory.errors import InvalidInput


# The fields of the pair scan's statistics ``st`` (one float64 vector per matrix, or per row block
# before _merge), described in pair_scan's docstring. numba freezes module-level integers into the
# compiled code: ``st[BEST]`` compiles exactly as ``st[0]``.
BEST, SECOND, BEST_I, BEST_J, PENALISED = 0, 1, 2, 3, 4
TOP_FIRST, TOP_OTHER, ZERO_ANY, ZERO_FIRST, ZERO_OTHER = 5, 6, 7, 8, 9
NSTAT = 10
TWO_PHASE_MAX_N = 128  # per-matrix scans keep (n, n) buffers of d-values and overlaps up to here (<= 256 KiB,
                       # in L2); beyond it the single pass
HALF = 10        # pair_scan(..., direct=True) only: one more column (NSTAT + 1 in all)
_MAXIMA = (PENALISED, TOP_FIRST, TOP_OTHER, ZERO_ANY, ZERO_FIRST, ZERO_OTHER, HALF)  # merged by max
_NONE = -1e300   # "no pair yet" (finite: fastmath assumes no infinities)


@njit(**FLAGS)
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


@njit(**FLAGS)
def _threshold(st, diag, eps):  # noqa: ANN001
    """Pairs with a float d below this (and a nonzero overlap) change none of ``st``'s fields as
    pair_scan defines them: not BEST/SECOND (d < SECOND), not PENALISED (d - pen <= d < PENALISED),
    and not a TOP field that can reach BEST - 4 eps (d < the running BEST - 4 eps, itself at most the
    final BEST - 4 eps); below that level a TOP field only has to stay below it, and it does (a
    maximum over fewer pairs). Without that last clause TOP_FIRST, a maximum over the n - 1 pairs
    through row 0, would hold the threshold down and send ~40% of the pairs at n = 16 through _visit."""
    if diag:
        top = max(min(st[TOP_FIRST], st[TOP_OTHER]), st[BEST] - 4.0 * eps)
        return min(st[SECOND], st[PENALISED], top)
    return st[SECOND]


@njit(**FLAGS)
def _scan_block(P, rsb, b, ib, diag, e, st, direct):  # noqa: ANN001
    """Pairs (i, j > i) with i in row block ib (4 rows) of matrix b, folded into ``st`` straight from
    each 4 x 4 tile's overlaps (no buffer, no second pass): a pair costs one comparison unless its d
    reaches the running threshold. Every field of ``st`` is a maximum, a top-2 of a multiset, a flag
    or a row-major-first maximiser, so the order pairs are visited in does not change the result."""
    n = P.shape[1]
    i0 = 4 * ib
    thr = _threshold(st, diag, e)
    hm = 4.0 * e + 16.0 * (P.shape[2] + 8) * 2.0 ** -53
    for jb in range(ib, (n + 3) // 4):
        j0 = 4 * jb
        ss = tile_sums(P, b, i0, j0)
        for r in range(4):                       # constant bounds: unrolled, ss indexed statically
            i = i0 + r
            ri = np.float64(rsb[min(i, n - 1)])
            for c in range(4):
                j = j0 + c
                if i < j < n:
                    o = ss[r][c]
                    d = np.float64(0.5) * (ri + np.float64(rsb[j])) - o
                    if direct and 0.5 * (1.0 + d) + hm >= st[HALF]:      # hm: see _scan_matrix
                        h = _half_d(P, b, i, j, ri, np.float64(rsb[j]), np.float64(o))
                        if h > st[HALF]:
                            st[HALF] = h
                    if d >= thr or o == 0:
                        _visit(d, o, i, j, P, b, diag, e, st)
                        thr = _threshold(st, diag, e)


@njit(**FLAGS)
def _scan_matrix(P, rsb, D, O, b, diag, e, st, direct):  # noqa: ANN001
    """All pairs of matrix b into ``st`` (initialised), in two phases: the tiles' overlaps O and
    float d-values D (upper triangles of the (n, n) buffers, the same expression as _scan_block's)
    with the largest and second largest d; then the pairs, the maximiser first, each visited only
    if its d reaches min(final SECOND, running PENALISED, max(running TOP, final BEST - 4 eps)).
    Knowing BEST and SECOND before any visit keeps the visits to the few pairs near the top (about
    4% at n = 16 on Dirichlet(1) matrices in a simulation of this order, where a single pass with the
    full TOP threshold visits about 40% of them).
    The fields do not depend on the order of the visits (see _scan_block); D's stored values are
    the ones visited, so both phases see the same bits."""
    n = P.shape[1]
    nblk = (n + 3) // 4
    b1 = b2 = _NONE
    bi = bj = 0
    for ib in range(nblk):
        i0 = 4 * ib
        for jb in range(ib, nblk):
            j0 = 4 * jb
            ss = tile_sums(P, b, i0, j0)
            for r in range(4):                   # constant bounds, no early exit: fully unrolled,
                i = i0 + r                       # ss indexed statically
                ri = np.float64(rsb[min(i, n - 1)])
                for c in range(4):
                    j = j0 + c
                    if i < j < n:
                        o = ss[r][c]
                        d = np.float64(0.5) * (ri + np.float64(rsb[j])) - o
                        O[i, j] = o
                        D[i, j] = d
                        if d > b1:
                            b2 = b1
                            b1 = d
                            bi, bj = i, j
                        elif d > b2:
                            b2 = d
    if n < 2:
        return
    _visit(D[bi, bj], O[bi, bj], bi, bj, P, b, diag, e, st)
    lvl = b1 - 4.0 * e
    # d_ij((I+P)/2) <= (1 + d_ij)/2 (triangle inequality, exact); hm bounds the float error of both
    # sides (entries and row sums of a validated stochastic P, m terms), so a pair with
    # (1 + d)/2 + hm below the running HALF cannot raise it and its entries are not read
    hm = 4.0 * e + 16.0 * (P.shape[2] + 8) * 2.0 ** -53
    half = _NONE
    if direct:
        half = _half_d(P, b, bi, bj, np.float64(rsb[bi]), np.float64(rsb[bj]), np.float64(O[bi, bj]))
    thr = min(b2, st[PENALISED], max(min(st[TOP_FIRST], st[TOP_OTHER]), lvl)) if diag else b2
    for i in range(n - 1):
        ri = np.float64(rsb[i])
        for j in range(i + 1, n):
            d = D[i, j]
            o = O[i, j]
            if direct and 0.5 * (1.0 + d) + hm >= half:
                half = max(half, _half_d(P, b, i, j, ri, np.float64(rsb[j]), np.float64(o)))
            if (d >= thr or o == 0) and not (i == bi and j == bj):
                _visit(d, o, i, j, P, b, diag, e, st)
                thr = min(b2, st[PENALISED], max(min(st[TOP_FIRST], st[TOP_OTHER]), lvl)) if diag else b2
    if direct:
        st[HALF] = half


@njit(**FLAGS)
def _init(st, n):  # noqa: ANN001
    st[BEST] = st[SECOND] = st[PENALISED] = st[TOP_FIRST] = st[TOP_OTHER] = _NONE
    st[BEST_I] = st[BEST_J] = n
    st[ZERO_ANY] = st[ZERO_FIRST] = st[ZERO_OTHER] = 0.0
    if len(st) > HALF:
        st[HALF] = _NONE


@njit(**FLAGS)
def _half_d(P, b, i, j, ri, rj, o):  # noqa: ANN001
    """d_ij of H = (I + P)/2 from its own entries, in the min-form: H's rows sum to r/2 + 1/2 and
    sum_k min(H_ik, H_jk) = (o - min(P_ii, P_ji) - min(P_ij, P_jj))/2 (columns k != i, j, halved)
    + min(P_ii/2 + 1/2, P_ji/2) + min(P_ij/2, P_jj/2 + 1/2) (the two columns the identity touches);
    o = sum_k min(P_ik, P_jk). No use of Theorem D1's closed form: the sweep compares the two."""
    pii, pji = np.float64(P[b, i, i]), np.float64(P[b, j, i])
    pij, pjj = np.float64(P[b, i, j]), np.float64(P[b, j, j])
    ov = 0.5 * (o - min(pii, pji) - min(pij, pjj)) + min(0.5 * pii + 0.5, 0.5 * pji) \
        + min(0.5 * pij, 0.5 * pjj + 0.5)
    return 0.5 * ((0.5 * ri + 0.5) + (0.5 * rj + 0.5)) - ov


@njit(parallel=True, **FLAGS)
def _pair_blocks(P, diag, eps, threads, direct, WD, WO):  # noqa: ANN001
    """Statistics per matrix (parallel over contiguous runs of matrices when there are enough of
    them: one row-sum buffer per run, none per matrix; the two-phase buffers of run q are WD[q],
    WO[q], reused across calls), or per row block of a single matrix (parallel over its row
    blocks): (B, blocks, NSTAT), merged by _merge."""
    B, n, m = P.shape
    nblk = (n + 3) // 4
    if B >= 2 * threads:
        part = np.empty((B, 1, NSTAT + 1 if direct else NSTAT))
        runs = min(B, 8 * threads)
        two_phase = n <= TWO_PHASE_MAX_N
        for q in prange(runs):
            rsb = np.empty(n, dtype=P.dtype)             # row sums while the matrix is in cache
            D = WD[q]                                    # one matrix's d-values and overlaps
            O = WO[q]
            for b in range(q * B // runs, (q + 1) * B // runs):
                st = part[b, 0]
                _init(st, n)
                for i in range(n):
                    rsb[i] = row_sum(P, b, i, m)
                if two_phase:
                    _scan_matrix(P, rsb, D, O, b, diag, eps[b], st, direct)
                else:
                    for ib in range(nblk):
                        _scan_block(P, rsb, b, ib, diag, eps[b], st, direct)
        return part
    rs = row_sums_serial(P)
    part = np.empty((B, nblk, NSTAT + 1 if direct else NSTAT))
    for w in prange(B * nblk):
        b, q = w // nblk, w % nblk
        ib = q // 2 if q % 2 == 0 else nblk - 1 - q // 2      # long and short stretches alternate
        _init(part[b, ib], n)
        _scan_block(P, rs[b], b, ib, diag, eps[b], part[b, ib], direct)
    return part


@njit(**FLAGS)
def _merge(part):  # noqa: ANN001
    B, nblk, _ = part.shape
    out = np.empty((B, part.shape[2]))
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
                if k < len(o):
                    o[k] = max(o[k], s[k])
    return out


def pair_scan(P: np.ndarray, diag: bool, eps: np.ndarray | None = None, direct: bool = False) -> np.ndarray:
    """One pass over all row pairs of each P (B, n, m), float32 or float64 (accumulated in P's dtype),
    parallel over (matrix, block of 4 rows). Returns (B, NSTAT) float64 statistics, columns named by
    this module's constants (``st[:, BEST]``):

        BEST            largest float d_ij
        SECOND          second largest over the other pairs
        BEST_I, BEST_J  the row-major first maximiser
        PENALISED       max_{i<j} d_ij - x^- - y^-  (x = P_ii - P_ji, y = P_jj - P_ij)
        TOP_FIRST       max d_(0,j) over the pairs with x >= -eps and y >= -eps, exact whenever it is
                        >= BEST - 4 eps; otherwise only known to lie below BEST - 4 eps (pairs further
                        than 4 eps below the running maximum are not visited: a maximiser within 2 eps
                        of BEST is all that numerics.dobrushin.core._decide and certify.d1_exact use)
        TOP_OTHER       the same over the pairs avoiding row 0
        ZERO_ANY        1.0 if some pair has float overlap exactly 0 (disjoint supports: d_ij = 1 exactly)
        ZERO_FIRST      1.0 if such a pair with P_ji = P_ij = 0 (self-dominant exactly) contains row 0
        ZERO_OTHER      the same for such a pair avoiding row 0

    (PENALISED, TOP_* and ZERO_FIRST/ZERO_OTHER only when ``diag``, i.e. P square; ``eps`` per
    matrix, default 0.) For n = 1 BEST = -1e300 (no pair). ``direct=True`` (P square) adds a column

        HALF            max_{i<j} d_ij((I + P)/2), each computed from (I + P)/2's own entries
                        (:func:`_half_d`), over every pair: delta((I + P)/2) in the same pass

    so that Theorem D1's two sides come out of one pass over the pairs (the stress sweep)."""
    B, n, m = P.shape
    eps = np.zeros(B) if eps is None else np.ascontiguousarray(eps, dtype=np.float64)
    if direct and not diag:
        raise InvalidInput("pair_scan: direct=True needs square matrices (diag=True)")
    threads = numba.get_num_threads()
    runs = min(B, 8 * threads) if B >= 2 * threads else 0
    WD, WO = _workspace(runs, n if n <= TWO_PHASE_MAX_N else 1, P.dtype)
    return _merge(_pair_blocks(P, diag, eps, threads, direct, WD, WO))


_WORK = threading.local()


def _workspace(runs: int, n: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The two-phase buffers, at least (runs, n, n), float64 and P's dtype, kept per Python thread
    (one pair per dtype, grown to the most runs and the largest n asked for: at most 16 x 128 x 128
    x 16 bytes = 4 MiB with 2 threads; a matrix of size n uses the top-left n x n of its run's) and
    reused: fresh ones per call cost page faults on every call, and a thread of its own keeps
    concurrent callers apart. ``n = 1`` for the single pass (an unused 1 x 1 per run); ``runs = 0``
    when the scan is parallel over row blocks."""
    held = _WORK.__dict__.setdefault("buffers", {})
    key = np.dtype(dtype).str
    D, O = held.get(key, (np.empty((0, 0, 0)), np.empty((0, 0, 0), dtype=dtype)))
    if D.shape[0] < runs or D.shape[1] < n:
        r, m = max(runs, D.shape[0]), max(n, D.shape[1])
        D, O = np.empty((r, m, m)), np.empty((r, m, m), dtype=dtype)
        held[key] = (D, O)
    return D, O


@njit(parallel=True, **FLAGS)
def pair_d(P, b):  # noqa: ANN001
    """(n, n) float64: d_ij of matrix b for i < j (min-form, as :func:`pair_scan`), -1e300 elsewhere."""
    _, n, m = P.shape
    rs = np.empty(n)
    for i in range(n):
        rs[i] = row_sum(P, b, i, m)
    D = np.full((n, n), _NONE)
    nblk = (n + 3) // 4
    for ib in prange(nblk):
        i0 = 4 * ib
        for jb in range(ib, nblk):
            ss = tile_sums(P, b, i0, 4 * jb)
            for r in range(4):
                for c in range(4):
                    i, j = i0 + r, 4 * jb + c
                    if i < j < n:
                        D[i, j] = 0.5 * (rs[i] + rs[j]) - np.float64(ss[r][c])
    return D


@njit(**FLAGS)
def near_max_pairs(P, b, threshold):  # noqa: ANN001
    """All pairs (i < j) of matrix b with float d_ij >= threshold, as an (k, 2) int array."""
    _, n, m = P.shape
    rs = np.empty(n)
    for i in range(n):
        rs[i] = row_sum(P, b, i, m)
    out = np.empty((n * (n - 1) // 2, 2), dtype=np.int64)
    c = 0
    for i in range(n - 1):
        for j in range(i + 1, n):
            if 0.5 * (rs[i] + rs[j]) - pair_overlap(P, b, i, j, m) >= threshold:
                out[c, 0] = i
                out[c, 1] = j
                c += 1
    return out[:c]


