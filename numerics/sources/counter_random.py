"""Counter-based random row-stochastic families: a compiled, parallel twin of
:mod:`numerics.sources.random` for the stress sweep (the random baselines of docs/theory.md §2).

The families and their names are :mod:`numerics.sources.random`'s (``dirichlet``, ``softmax-T<T>``,
``causal``, ``hard``, ``sparse``; validated by its :func:`~numerics.sources.random.check_family`),
but the draws come from a counter-based generator, **Philox4x32-10** (Salmon, Moraes, Dror, Shaw,
"Parallel random numbers: as easy as 1, 2, 3", SC 2011; the Random123 library, whose published
known-answer vectors the tests check), instead of numpy's sequential streams:

* key (2 x 32 bits) = ``SeedSequence([seed, family_id(family), n]).generate_state(2, uint32)``;
* counter (4 x 32 bits) = ``(block, index mod 2^32, index div 2^32, chunk)`` for instance ``index``
  of chunk ``chunk``: its *main* stream; the same with bit 31 of the third word set is its
  *auxiliary* stream (so index < 2^63, chunk < 2^32).

A stream reads blocks 0, 1, 2, ... in segments of 16 blocks, lane-major inside a segment: word w is
lane (w mod 64) div 16 of block 16 (w div 64) + (w mod 16) (so the 10 rounds run vectorised over 16
blocks). Row r of an instance reads a fixed stretch of the main stream (its fast path: 2 words per
uniform or Gaussian, 1 per bounded integer); the rare rejections (ziggurat wedge and tail, Lemire
retries) read the auxiliary stream in order. So the stream of one instance depends only on
(seed, family, n, chunk, index): any instance can be regenerated alone (:func:`regenerate_one`),
the output is bitwise the same for any numba thread count and buffer size (no fastmath: nothing is
reassociated), and distinct (chunk, index) pairs of one key read disjoint counters (no overlap by
construction, not just with high probability).

How each family is drawn (``u53`` = ``(a >> 5) * 2^26 + (b >> 6)`` from two 32-bit words, numpy's
53-bit formula, a uniform integer in [0, 2^53)):

* ``dirichlet`` -- Dirichlet(1) rows by *uniform spacings*: sort n - 1 values u53 (Batcher's
  odd-even merge network, :func:`sorting_network`, applied to all rows of a matrix at once so the
  compare-exchanges vectorise), take the gaps (and 2^53 minus the last) times 2^-53. Integer gaps scaled by a power of two are exact, every
  partial sum is a multiple of 2^-53 in [0, 1], so each row sums to exactly 1 and no libm call is
  involved (normalised exponentials would need log and round the row sum). The entries live on the
  2^-53 grid (no entry in (0, 2^-53)); an exact 0 needs a tie, probability ~ n^2 2^-54 per matrix.
* ``softmax-T<T>`` -- standard Gaussian logits by numpy's own 256-layer ziggurat
  (``random_standard_normal`` in numpy's distributions.c: one 64-bit word per draw on the fast
  path, the wedge and tail tests otherwise; tables rebuilt here from r = 3.6541528853610088 and the
  layer area), divided by T, the row maximum subtracted, exp, divided by the (sequential) row sum
  (numpy's path in :func:`numerics.sources.random.sample`). exp is :func:`_exp_nonpos`, plain
  arithmetic within 1 ulp of numpy's (tested): it vectorises (3x libm's speed here) and is the same
  bits on any IEEE machine. :func:`softmax_logits` gives the logits of the same arguments.
* ``causal`` -- the same with T = 1 on entries 0..i of row i; entries past the diagonal are exact 0
  (and no draws are spent on them).
* ``hard`` -- one-hot rows, the column uniform on 0..n-1 by Lemire's unbiased bounded integer
  (multiply-shift with rejection, 32-bit words).
* ``sparse`` -- a uniform support of ceil(n/4) columns (partial Fisher-Yates with Lemire draws),
  Dirichlet(1) by uniform spacings on it, exact zeros elsewhere.

Rows are nonnegative and finite; ``dirichlet``, ``sparse`` and ``hard`` rows sum to exactly 1, the
softmax families to 1 within float rounding (as numpy's). Only the ziggurat's rare wedge and tail
tests call libm (exp, log1p), so across machines a rare Gaussian may differ in its last bits.

>>> A = sample_counter("hard", 3, 2, seed=0, chunk=0)
>>> A.shape, bool((A.sum(-1) == 1).all())
((2, 3, 3), True)
>>> bool((regenerate_one("dirichlet", 4, seed=1, chunk=2, index=5)
...       == sample_counter("dirichlet", 4, 8, seed=1, chunk=2)[5]).all())
True
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np
from numba import njit, prange

from numerics.sources.random import check_family, family_id

COUNTER_GENERATOR = ("Philox4x32-10 (Random123); key = SeedSequence([seed, family_id, n]).generate_state(2, uint32), "
                     "counter = (block, index mod 2^32, index div 2^32 (+ 2^31: auxiliary stream), chunk), "
                     "words in lane-major segments of 16 blocks")

_FLAGS = dict(cache=True, nogil=True, boundscheck=False)   # no fastmath: results are bitwise stable

_U = np.uint64
_M0, _M1 = _U(0xD2511F53), _U(0xCD9E8D57)     # Philox4x32 multipliers
_W0, _W1 = _U(0x9E3779B9), _U(0xBB67AE85)     # Weyl key increments
_LO = _U(0xFFFFFFFF)
_S32, _S5, _S6, _S26, _S8 = _U(32), _U(5), _U(6), _U(26), _U(8)
_ONE, _BYTE, _M52 = _U(1), _U(0xFF), _U(0x000FFFFFFFFFFFFF)
_TWO32 = _U(1 << 32)
_EPS53 = 2.0 ** -53
_TWO53 = 1 << 53

DIRICHLET, SOFTMAX, CAUSAL, HARD, SPARSE, LOGITS = 0, 1, 2, 3, 4, 5   # LOGITS: softmax-T's z / T
MAX_N = 1 << 14            # per-instance counter blocks must stay below 2^32
MAX_CHUNK = 1 << 32        # the chunk is one 32-bit counter word
MAX_INDEX = 1 << 63        # the index is two counter words, the top bit flags the auxiliary stream
_AUX = _U(1 << 31)         # auxiliary-stream flag in counter word 2
_PER = 8                   # instances per parallel work item (one set of buffers each)
MAX_BUFFER = 1 << 16       # main-buffer words (512 KiB) per work item


# ------------------------------------------------------------------------------------------------
# Philox4x32-10
# ------------------------------------------------------------------------------------------------
@njit(**_FLAGS)
def _philox(c0, c1, c2, c3, k0, k1):  # noqa: ANN001
    """One Philox4x32-10 block: 10 rounds of the Random123 round function (uint64 lanes holding
    32-bit words)."""
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = (p1 >> _S32) ^ c1 ^ k0, p1 & _LO, (p0 >> _S32) ^ c3 ^ k1, p0 & _LO
        k0 = (k0 + _W0) & _LO
        k1 = (k1 + _W1) & _LO
    return c0, c1, c2, c3


@njit(**_FLAGS)
def philox4x32_10(ctr, key):  # noqa: ANN001
    """Philox4x32-10 of counter ``ctr`` (4 words) under ``key`` (2 words), as a uint64 array of 4
    32-bit words: the reference function the known-answer tests check."""
    m = _LO
    x = _philox(_U(ctr[0]) & m, _U(ctr[1]) & m, _U(ctr[2]) & m, _U(ctr[3]) & m, _U(key[0]) & m, _U(key[1]) & m)
    out = np.empty(4, np.uint64)
    out[0], out[1], out[2], out[3] = x
    return out


# ------------------------------------------------------------------------------------------------
# streams. A stream is the Philox output of the counters (block, c1, c2, c3), block = 0, 1, 2, ...,
# read in segments of 16 blocks (64 words), lane-major inside a segment: word w of a stream is lane
# (w mod 64) div 16 of block 16 (w div 64) + (w mod 16). (Lane-major segments let the 10 rounds run
# vectorised over 16 blocks; the order is fixed, whatever the buffer size.)
# ------------------------------------------------------------------------------------------------
_SEG = 64


@njit(inline="always")
def _round(c0, c1, c2, c3, k0, k1):  # noqa: ANN001
    p0 = _M0 * c0
    p1 = _M1 * c2
    return (p1 >> _S32) ^ c1 ^ k0, p1 & _LO, (p0 >> _S32) ^ c3 ^ k1, p0 & _LO


def round_keys(k0: int, k1: int) -> np.ndarray:
    """The 10 Philox round keys (k0 + r W0, k1 + r W1 mod 2^32), interleaved, uint64."""
    return np.array([(k + r * w) & 0xFFFFFFFF for r in range(10) for k, w in ((k0, 0x9E3779B9), (k1, 0xBB67AE85))],
                    np.uint64)


@njit(**_FLAGS)
def _fill(buf, off, seg0, nseg, ka, c1, c2, c3):  # noqa: ANN001
    """Segments seg0 .. seg0 + nseg - 1 of the stream (c1, c2, c3) into buf[off:off + 64 nseg]."""
    for s in range(nseg):
        base = off + _SEG * s
        blk = _U(16 * (seg0 + s))
        for j in range(16):
            x0, x1, x2, x3 = blk + _U(j), c1, c2, c3
            for r in range(10):
                x0, x1, x2, x3 = _round(x0, x1, x2, x3, ka[2 * r], ka[2 * r + 1])
            buf[base + j] = x0
            buf[base + 16 + j] = x1
            buf[base + 32 + j] = x2
            buf[base + 48 + j] = x3


@njit(**_FLAGS)
def _ensure(buf, st, w0, w1, total, ka, c1, c2, c3):  # noqa: ANN001
    """Make the main stream's words [w0, w1) readable at buf[w - st[0]]: st = (first word held,
    end of words held); refills from the segment of w0 as far as the buffer or the instance's
    ``total`` words go."""
    if w0 >= st[0] and w1 <= st[1]:
        return
    seg0 = w0 // _SEG
    nseg = min(buf.size // _SEG, (total + _SEG - 1) // _SEG - seg0)
    _fill(buf, 0, seg0, nseg, ka, c1, c2, c3)
    st[0] = seg0 * _SEG
    st[1] = (seg0 + nseg) * _SEG


@njit(**_FLAGS)
def _aux_word(aux, ast, ka, c1, c2, c3):  # noqa: ANN001
    """The next 32-bit word (as uint64) of the auxiliary stream (rejection retries): ast = (next
    position in aux, next segment)."""
    p = ast[0]
    if p == _SEG:
        _fill(aux, 0, ast[1], 1, ka, c1, c2, c3)
        ast[1] += 1
        p = 0
    ast[0] = p + 1
    return aux[p]


@njit(inline="always")
def _u53(a, b):  # noqa: ANN001
    """A uniform integer in [0, 2^53) from two words (numpy's (a >> 5, b >> 6) construction)."""
    return np.int64(((a >> _S5) << _S26) | (b >> _S6))


@njit(**_FLAGS)
def _aux_double(aux, ast, ka, c1, c2, c3):  # noqa: ANN001
    a = _aux_word(aux, ast, ka, c1, c2, c3)
    b = _aux_word(aux, ast, ka, c1, c2, c3)
    return _u53(a, b) * _EPS53


@njit(**_FLAGS)
def _bounded(s, w, aux, ast, ka, c1, c2, c3):  # noqa: ANN001
    """Uniform integer in [0, s), 1 <= s <= 2^32, by Lemire's multiply-shift with rejection
    (unbiased): first try with the main-stream word w, retries from the auxiliary stream."""
    su = _U(s)
    m = w * su
    if (m & _LO) < su:
        t = (_TWO32 - su) % su
        while (m & _LO) < t:
            m = _aux_word(aux, ast, ka, c1, c2, c3) * su
    return np.int64(m >> _S32)


# ------------------------------------------------------------------------------------------------
# the ziggurat of numpy's random_standard_normal (256 layers, 52-bit magnitudes)
# ------------------------------------------------------------------------------------------------
_ZIG_R = 3.6541528853610088
_ZIG_INV_R = 1.0 / _ZIG_R


def _ziggurat_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ki, wi, fi) as in numpy's ziggurat_constants.h: layer i (1..255) spans x in [0, x_i] with
    inner rectangle [0, x_{i-1}] (x_0 = 0, x_255 = r), layer 0 is the base strip of width v/f(r)
    (its part beyond r is the tail); every layer has the area v."""
    f = lambda x: math.exp(-0.5 * x * x)  # noqa: E731
    r = _ZIG_R
    v = r * f(r) + math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))
    x = [0.0] * 256
    x[255] = r
    for i in range(255, 1, -1):
        x[i - 1] = math.sqrt(-2.0 * math.log(v / x[i] + f(x[i])))
    x0 = v / f(r)
    scale = float(1 << 52)
    ki = np.zeros(256, np.uint64)
    wi = np.zeros(256)
    fi = np.zeros(256)
    ki[0] = int(scale * r / x0)
    wi[0] = x0 / scale
    fi[0] = 1.0
    for i in range(1, 256):
        ki[i] = int(scale * x[i - 1] / x[i])
        wi[i] = x[i] / scale
        fi[i] = f(x[i])
    return ki, wi, fi


_KI, _WI, _FI = _ziggurat_tables()


@njit(**_FLAGS)
def _normal_slow(r, aux, ast, ka, c1, c2, c3, ki, wi, fi):  # noqa: ANN001
    """The rest of numpy's ziggurat (distributions.c random_standard_normal) once the first 64-bit
    word ``r`` missed the fast path: wedge and tail tests and retries on the auxiliary stream."""
    while True:
        idx = r & _BYTE
        r >>= _S8
        neg = (r & _ONE) == _ONE
        rabs = (r >> _ONE) & _M52
        x = np.float64(rabs) * wi[idx]
        if neg:
            x = -x
        if rabs < ki[idx]:
            return x
        if idx == 0:
            while True:
                xx = -_ZIG_INV_R * np.log1p(-_aux_double(aux, ast, ka, c1, c2, c3))
                yy = -np.log1p(-_aux_double(aux, ast, ka, c1, c2, c3))
                if yy + yy > xx * xx:
                    return -(_ZIG_R + xx) if ((rabs >> _S8) & _ONE) == _ONE else _ZIG_R + xx
        elif (fi[idx - _ONE] - fi[idx]) * _aux_double(aux, ast, ka, c1, c2, c3) + fi[idx] < np.exp(-0.5 * x * x):
            return x
        r = (_aux_word(aux, ast, ka, c1, c2, c3) << _S32) | _aux_word(aux, ast, ka, c1, c2, c3)


# ------------------------------------------------------------------------------------------------
# exp for the softmax step: plain arithmetic (no libm), so the loop vectorises and the softmax
# families are the same bits on any IEEE machine
# ------------------------------------------------------------------------------------------------
_LN2_HI = 6.93147180369123816490e-01    # fdlibm's ln2_hi (32 significant bits: k ln2_hi is exact)
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_POW2 = np.array([2.0 ** (k + 64) for k in range(-1075, 1)])   # 2^(k + 64), k = -1075 .. 0: exact
_TWO_M64 = 2.0 ** -64


@njit(inline="always")
def _exp_nonpos(x):  # noqa: ANN001
    """e^x for x <= 0 (including -inf), within 2 ulp (tested against numpy): x = k ln2 + r
    (Cody-Waite, |r| <= ln2/2), e^r by its degree-13 Taylor polynomial (remainder < 1e-17), times
    2^k as (. 2^(k + 64)) 2^-64 (one rounding, also for subnormal results); 0 below -745.2."""
    kf = max(np.floor(x * _INV_LN2 + 0.5), -1075.0)
    r = (x - kf * _LN2_HI) - kf * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    v = (p * _POW2[np.int64(kf) + 1075]) * _TWO_M64
    return 0.0 if x < -745.2 else v


# ------------------------------------------------------------------------------------------------
# rows: row r of an instance reads main-stream words [_row_start(r), _row_start(r + 1))
# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def sorting_network(m: int) -> np.ndarray:
    """Batcher's odd-even merge sort for m keys as comparator pairs (i, j), i < j, shape (pairs, 2):
    the network for the next power of two with every comparator touching a position >= m dropped
    (those positions would hold +inf sentinels, which never move, so the rest sorts the first m)."""
    size = 1
    while size < m:
        size *= 2
    pairs = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p) and i + j + k < m:
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


@njit(**_FLAGS)
def _spacings_rows(V, k, rows, net):  # noqa: ANN001
    """Dirichlet(1) on k coordinates for each of ``rows`` rows at once: V[t, r] (t < k - 1) hold the
    u53 points of row r; sorted by the comparator network ``net`` (branch-free min/max, the loop
    over rows vectorises), then replaced by the gaps, V[k - 1, r] = 2^53 minus the largest point.
    The result is the same as any sort's: integer gaps in units of 2^-53."""
    for c in range(net.shape[0]):
        i, j = net[c, 0], net[c, 1]
        for r in range(rows):
            x, y = V[i, r], V[j, r]
            V[i, r] = min(x, y)
            V[j, r] = max(x, y)
    for r in range(rows):
        V[k - 1, r] = _TWO53
    for t in range(k - 1, 0, -1):
        for r in range(rows):
            V[t, r] -= V[t - 1, r]


@njit(**_FLAGS)
def _row_words(kind, n, r):  # noqa: ANN001
    """Main-stream words of row r (its fast path; rejections read the auxiliary stream)."""
    if kind == DIRICHLET:
        return 2 * (n - 1)
    if kind == SOFTMAX or kind == LOGITS:
        return 2 * n
    if kind == CAUSAL:
        return 2 * (r + 1)
    if kind == HARD:
        return 1
    k = max(1, -(-n // 4))
    return k + 2 * (k - 1)


@njit(**_FLAGS)
def _row_start(kind, n, r):  # noqa: ANN001
    if kind == CAUSAL:
        return r * (r + 1)
    return r * _row_words(kind, n, 0)


@njit(**_FLAGS)
def _softmax_matrix(kind, A, n, temp, buf, st, total, aux, ast, ka, c1, c2, c3, ki, wi, fi):  # noqa: ANN001
    """All rows of one softmax-T / causal / logits instance (one call per matrix: a call per row,
    with its many array arguments, cost as much as the row): row r is the max-subtracted softmax of
    Gaussian logits / T (numpy's path) on entries 0..n-1, or 0..r for causal (T = 1, exact zeros
    after), or the logits / T themselves for LOGITS."""
    c2a = c2 | _AUX
    for r in range(n):
        w0 = _row_start(kind, n, r)
        _ensure(buf, st, w0, w0 + _row_words(kind, n, r), total, ka, c1, c2, c3)
        q = w0 - st[0]
        m = r + 1 if kind == CAUSAL else n
        top = -np.inf
        for t in range(m):
            # numpy's ziggurat fast path (~98.5%) on the main-stream 64-bit word a 2^32 + b, written
            # out here; the wedge, the tail and retries in _normal_slow (auxiliary stream)
            x = (buf[q + 2 * t] << _S32) | buf[q + 2 * t + 1]
            idx = x & _BYTE
            h = x >> _S8
            rabs = (h >> _ONE) & _M52
            if rabs < ki[idx]:
                z = np.float64(rabs) * wi[idx]
                if (h & _ONE) == _ONE:
                    z = -z
            else:
                z = _normal_slow(x, aux, ast, ka, c1, c2a, c3, ki, wi, fi)
            if kind != CAUSAL:
                z = z / temp
            A[r, t] = z
            top = max(top, z)
        for t in range(m, n):
            A[r, t] = 0.0
        if kind == LOGITS:
            continue
        for t in range(m):                  # no reduction in this loop: it vectorises
            A[r, t] = _exp_nonpos(A[r, t] - top)
        s = 0.0
        for t in range(m):                  # the row sum, sequential (numpy's sum is pairwise)
            s += A[r, t]
        for t in range(m):
            A[r, t] = A[r, t] / s


@njit(**_FLAGS)
def _instance(kind, temp, n, A, buf, st, aux, ast, V, P, net, ka, c1, c2, c3, ki, wi, fi):  # noqa: ANN001
    st[0] = st[1] = 0                 # main buffer empty
    ast[0] = _SEG                     # auxiliary buffer empty, next segment 0
    ast[1] = 0
    c2a = c2 | _AUX                   # the auxiliary stream: top bit of the index's high word
    total = _row_start(kind, n, n)
    if kind == SOFTMAX or kind == LOGITS or kind == CAUSAL:
        _softmax_matrix(kind, A, n, temp, buf, st, total, aux, ast, ka, c1, c2, c3, ki, wi, fi)
        return
    k = n if kind == DIRICHLET else max(1, -(-n // 4))
    for r in range(n):
        w0 = _row_start(kind, n, r)
        _ensure(buf, st, w0, w0 + _row_words(kind, n, r), total, ka, c1, c2, c3)
        q = w0 - st[0]
        if kind == DIRICHLET:
            for t in range(n - 1):
                V[t, r] = _u53(buf[q + 2 * t], buf[q + 2 * t + 1])
        elif kind == HARD:
            c = _bounded(n, buf[q], aux, ast, ka, c1, c2a, c3)
            for t in range(n):
                A[r, t] = 0.0
            A[r, c] = 1.0
        else:   # SPARSE: partial Fisher-Yates (P[r, :k] is the support), the k - 1 points after it
            for t in range(n):
                P[r, t] = t
                A[r, t] = 0.0
            for t in range(k):
                j = t + _bounded(n - t, buf[q + t], aux, ast, ka, c1, c2a, c3)
                P[r, t], P[r, j] = P[r, j], P[r, t]
            for t in range(k - 1):
                V[t, r] = _u53(buf[q + k + 2 * t], buf[q + k + 2 * t + 1])
    if kind == DIRICHLET:
        _spacings_rows(V, n, n, net)
        for r in range(n):
            for t in range(n):
                A[r, t] = V[t, r] * _EPS53
    elif kind == SPARSE:
        _spacings_rows(V, k, n, net)
        for r in range(n):
            for t in range(k):
                A[r, P[r, t]] = V[t, r] * _EPS53


@njit(parallel=True, **_FLAGS)
def _sample(kind, temp, n, start, ka, chunk, words, net, out, ki, wi, fi):  # noqa: ANN001
    count = out.shape[0]
    items = (count + _PER - 1) // _PER
    for it in prange(items):
        buf = np.empty(words, np.uint64)
        st = np.empty(2, np.int64)
        aux = np.empty(_SEG, np.uint64)
        ast = np.empty(2, np.int64)
        pts = n if kind == DIRICHLET or kind == SPARSE else 1
        V = np.empty((pts, n), np.int64)                        # spacings, one column per row
        P = np.empty((n if kind == SPARSE else 1, n), np.int64)  # sparse supports
        for i in range(it * _PER, min(count, (it + 1) * _PER)):
            idx = start + _U(i)
            _instance(kind, temp, n, out[i], buf, st, aux, ast, V, P, net, ka,
                      idx & _LO, idx >> _S32, chunk, ki, wi, fi)


def _words(kind: int, n: int) -> int:
    """Main-buffer length (words, whole segments): the instance's main-stream words (+ one segment
    of misalignment), at most :data:`MAX_BUFFER` but never less than a row needs. Only speed
    depends on it, never values."""
    k = max(1, -(-n // 4))
    row = {DIRICHLET: 2 * (n - 1), SOFTMAX: 2 * n, LOGITS: 2 * n, CAUSAL: 2 * n, HARD: 1, SPARSE: k + 2 * (k - 1)}[kind]
    total = n * (n + 1) if kind == CAUSAL else n * row
    want = max(min(total, MAX_BUFFER), row) + _SEG
    return _SEG * (-(-want // _SEG))


def _int(value: object, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{name}: must be an integer, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError(f"{name}: must be an integer, got {value!r}") from None
    if not lo <= v < hi:
        raise ValueError(f"{name}: must be in [{lo}, {hi}), got {v}")
    return v


def _run(family: str, kind: int, temp: float, n: int, count: int, seed: int, chunk: int, start: int) -> np.ndarray:
    n = _int(n, "n", 1, MAX_N + 1)
    count = _int(count, "count", 0, MAX_INDEX)
    seed = _int(seed, "seed", 0, 1 << 128)
    chunk = _int(chunk, "chunk", 0, MAX_CHUNK)
    start = _int(start, "start", 0, MAX_INDEX)
    if start + count > MAX_INDEX:
        raise ValueError(f"start + count: instance indices must stay below 2^63, got {start} + {count}")
    k0, k1 = (int(w) for w in np.random.SeedSequence([seed, family_id(family), n]).generate_state(2, np.uint32))
    out = np.empty((count, n, n))
    if count:
        net = sorting_network(n - 1 if kind == DIRICHLET else max(1, -(-n // 4)) - 1)
        _sample(kind, temp, n, _U(start), round_keys(k0, k1), _U(chunk), _words(kind, n), net, out, _KI, _WI, _FI)
    return out


def sample_counter(family: str, n: int, count: int, seed: int, chunk: int, start: int = 0) -> np.ndarray:
    """Instances ``start .. start + count - 1`` of chunk ``chunk`` of ``family``: ``count``
    row-stochastic n x n float64 matrices, shape (count, n, n), drawn by :data:`COUNTER_GENERATOR`
    (module docstring), in parallel over instances; instance i depends only on
    (seed, family, n, chunk, i). Bad arguments: ValueError naming the argument.

    >>> sample_counter("sparse", 8, 1, seed=3, chunk=0).astype(bool).sum(-1).tolist()
    [[2, 2, 2, 2, 2, 2, 2, 2]]
    """
    check_family(family)
    if family.startswith("softmax-T"):
        kind, temp = SOFTMAX, float(family[len("softmax-T"):])
    else:
        kind, temp = {"dirichlet": DIRICHLET, "causal": CAUSAL, "hard": HARD, "sparse": SPARSE}[family], 1.0
    return _run(family, kind, temp, n, count, seed, chunk, start)


def softmax_logits(family: str, n: int, count: int, seed: int, chunk: int, start: int = 0) -> np.ndarray:
    """The logits z / T (standard Gaussian z) from which :func:`sample_counter` draws the same
    arguments' ``softmax-T<T>`` matrices (same stream): for checking the Gaussian draws and the
    softmax step separately."""
    if not check_family(family).startswith("softmax-T"):
        raise ValueError(f"family {family!r}: softmax_logits needs a softmax-T<T> family")
    return _run(family, LOGITS, float(family[len("softmax-T"):]), n, count, seed, chunk, start)


def regenerate_one(family: str, n: int, seed: int, chunk: int, index: int) -> np.ndarray:
    """Instance ``index`` of chunk ``chunk`` alone, an (n, n) matrix: bitwise row ``index`` of any
    :func:`sample_counter` call of that chunk that covers it."""
    return sample_counter(family, n, 1, seed, chunk, start=index)[0]
