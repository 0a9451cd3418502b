"""Philox4x32-10 streams and the draws built on them (numba, no fastmath): the counter-based
generator of :mod:`numerics.sources.counter_random` (Salmon, Moraes, Dror, Shaw, SC 2011; the
Random123 library's known-answer vectors are checked by tests/numerics/test_counter_random.py),
its stream layout (main and auxiliary streams, lane-major segments of 16 blocks), uniform,
bounded-integer and Gaussian draws (numpy's 256-layer ziggurat) and an exp made of plain
arithmetic (the same bits on any IEEE machine). The layout and formulas are described in
:mod:`numerics.sources.counter_random`'s docstring."""
from __future__ import annotations

import math

import numpy as np
from numba import njit


FLAGS = dict(cache=True, nogil=True, boundscheck=False)   # no fastmath: results are bitwise stable

U = np.uint64
M0, M1 = U(0xD2511F53), U(0xCD9E8D57)     # Philox4x32 multipliers
W0, W1 = U(0x9E3779B9), U(0xBB67AE85)     # Weyl key increments
LO = U(0xFFFFFFFF)
S32, S5, S6, S26, S8 = U(32), U(5), U(6), U(26), U(8)
ONE, BYTE, M52 = U(1), U(0xFF), U(0x000FFFFFFFFFFFFF)
TWO32 = U(1 << 32)
EPS53 = 2.0 ** -53
TWO53 = 1 << 53

DIRICHLET, SOFTMAX, CAUSAL, HARD, SPARSE, LOGITS = 0, 1, 2, 3, 4, 5   # LOGITS: softmax-T's z / T
GAUSS, GRID, WORDS, BIRKHOFF = 6, 7, 8, 9     # the real families, raw 32-bit words, doubly stochastic
MAX_N = 1 << 14            # per-instance counter blocks must stay below 2^32
MAX_CHUNK = 1 << 32        # the chunk is one 32-bit counter word
MAX_INDEX = 1 << 63        # the index is two counter words, the top bit flags the auxiliary stream
AUX = U(1 << 31)         # auxiliary-stream flag in counter word 2
PER = 8                   # instances per parallel work item (one set of buffers each)
MAX_BUFFER = 1 << 16       # main-buffer words (512 KiB) per work item


# ------------------------------------------------------------------------------------------------
# Philox4x32-10
# ------------------------------------------------------------------------------------------------
@njit(**FLAGS)
def philox_block(c0, c1, c2, c3, k0, k1):  # noqa: ANN001
    """One Philox4x32-10 block: 10 rounds of the Random123 round function (uint64 lanes holding
    32-bit words)."""
    for _ in range(10):
        p0 = M0 * c0
        p1 = M1 * c2
        c0, c1, c2, c3 = (p1 >> S32) ^ c1 ^ k0, p1 & LO, (p0 >> S32) ^ c3 ^ k1, p0 & LO
        k0 = (k0 + W0) & LO
        k1 = (k1 + W1) & LO
    return c0, c1, c2, c3


@njit(**FLAGS)
def philox4x32_10(ctr, key):  # noqa: ANN001
    """Philox4x32-10 of counter ``ctr`` (4 words) under ``key`` (2 words), as a uint64 array of 4
    32-bit words: the reference function the known-answer tests check."""
    m = LO
    x = philox_block(U(ctr[0]) & m, U(ctr[1]) & m, U(ctr[2]) & m, U(ctr[3]) & m, U(key[0]) & m, U(key[1]) & m)
    out = np.empty(4, np.uint64)
    out[0], out[1], out[2], out[3] = x
    return out


# ------------------------------------------------------------------------------------------------
# streams. A stream is the Philox output of the counters (block, c1, c2, c3), block = 0, 1, 2, ...,
# read in segments of 16 blocks (64 words), lane-major inside a segment: word w of a stream is lane
# (w mod 64) div 16 of block 16 (w div 64) + (w mod 16). (Lane-major segments let the 10 rounds run
# vectorised over 16 blocks; the order is fixed, whatever the buffer size.)
# ------------------------------------------------------------------------------------------------
SEG = 64


@njit(inline="always")
def philox_round(c0, c1, c2, c3, k0, k1):  # noqa: ANN001
    p0 = M0 * c0
    p1 = M1 * c2
    return (p1 >> S32) ^ c1 ^ k0, p1 & LO, (p0 >> S32) ^ c3 ^ k1, p0 & LO


def round_keys(k0: int, k1: int) -> np.ndarray:
    """The 10 Philox round keys (k0 + r W0, k1 + r W1 mod 2^32), interleaved, uint64."""
    return np.array([(k + r * w) & 0xFFFFFFFF for r in range(10) for k, w in ((k0, 0x9E3779B9), (k1, 0xBB67AE85))],
                    np.uint64)


@njit(**FLAGS)
def fill(buf, off, seg0, nseg, ka, c1, c2, c3):  # noqa: ANN001
    """Segments seg0 .. seg0 + nseg - 1 of the stream (c1, c2, c3) into buf[off:off + 64 nseg]."""
    for s in range(nseg):
        base = off + SEG * s
        blk = U(16 * (seg0 + s))
        for j in range(16):
            x0, x1, x2, x3 = blk + U(j), c1, c2, c3
            for r in range(10):
                x0, x1, x2, x3 = philox_round(x0, x1, x2, x3, ka[2 * r], ka[2 * r + 1])
            buf[base + j] = x0
            buf[base + 16 + j] = x1
            buf[base + 32 + j] = x2
            buf[base + 48 + j] = x3


@njit(**FLAGS)
def ensure(buf, st, w0, w1, total, ka, c1, c2, c3):  # noqa: ANN001
    """Make the main stream's words [w0, w1) readable at buf[w - st[0]]: st = (first word held,
    end of words held); refills from the segment of w0 as far as the buffer or the instance's
    ``total`` words go."""
    if w0 >= st[0] and w1 <= st[1]:
        return
    seg0 = w0 // SEG
    nseg = min(buf.size // SEG, (total + SEG - 1) // SEG - seg0)
    fill(buf, 0, seg0, nseg, ka, c1, c2, c3)
    st[0] = seg0 * SEG
    st[1] = (seg0 + nseg) * SEG


@njit(**FLAGS)
def aux_word(aux, ast, ka, c1, c2, c3):  # noqa: ANN001
    """The next 32-bit word (as uint64) of the auxiliary stream (rejection retries): ast = (next
    position in aux, next segment)."""
    p = ast[0]
    if p == SEG:
        fill(aux, 0, ast[1], 1, ka, c1, c2, c3)
        ast[1] += 1
        p = 0
    ast[0] = p + 1
    return aux[p]


@njit(inline="always")
def u53(a, b):  # noqa: ANN001
    """A uniform integer in [0, 2^53) from two words (numpy's (a >> 5, b >> 6) construction)."""
    return np.int64(((a >> S5) << S26) | (b >> S6))


@njit(**FLAGS)
def aux_double(aux, ast, ka, c1, c2, c3):  # noqa: ANN001
    a = aux_word(aux, ast, ka, c1, c2, c3)
    b = aux_word(aux, ast, ka, c1, c2, c3)
    return u53(a, b) * EPS53


@njit(**FLAGS)
def bounded(s, w, aux, ast, ka, c1, c2, c3):  # noqa: ANN001
    """Uniform integer in [0, s), 1 <= s <= 2^32, by Lemire's multiply-shift with rejection
    (unbiased): first try with the main-stream word w, retries from the auxiliary stream."""
    su = U(s)
    m = w * su
    if (m & LO) < su:
        t = (TWO32 - su) % su
        while (m & LO) < t:
            m = aux_word(aux, ast, ka, c1, c2, c3) * su
    return np.int64(m >> S32)


# ------------------------------------------------------------------------------------------------
# the ziggurat of numpy's random_standard_normal (256 layers, 52-bit magnitudes)
# ------------------------------------------------------------------------------------------------
ZIG_R = 3.6541528853610088
ZIG_INV_R = 1.0 / ZIG_R


def ziggurat_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ki, wi, fi) as in numpy's ziggurat_constants.h: layer i (1..255) spans x in [0, x_i] with
    inner rectangle [0, x_{i-1}] (x_0 = 0, x_255 = r), layer 0 is the base strip of width v/f(r)
    (its part beyond r is the tail); every layer has the area v."""
    f = lambda x: math.exp(-0.5 * x * x)  # noqa: E731
    r = ZIG_R
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


KI, WI, FI = ziggurat_tables()


@njit(**FLAGS)
def normal_slow(r, aux, ast, ka, c1, c2, c3, ki, wi, fi):  # noqa: ANN001
    """The rest of numpy's ziggurat (distributions.c random_standard_normal) once the first 64-bit
    word ``r`` missed the fast path: wedge and tail tests and retries on the auxiliary stream."""
    while True:
        idx = r & BYTE
        r >>= S8
        neg = (r & ONE) == ONE
        rabs = (r >> ONE) & M52
        x = np.float64(rabs) * wi[idx]
        if neg:
            x = -x
        if rabs < ki[idx]:
            return x
        if idx == 0:
            while True:
                xx = -ZIG_INV_R * np.log1p(-aux_double(aux, ast, ka, c1, c2, c3))
                yy = -np.log1p(-aux_double(aux, ast, ka, c1, c2, c3))
                if yy + yy > xx * xx:
                    return -(ZIG_R + xx) if ((rabs >> S8) & ONE) == ONE else ZIG_R + xx
        elif (fi[idx - ONE] - fi[idx]) * aux_double(aux, ast, ka, c1, c2, c3) + fi[idx] < np.exp(-0.5 * x * x):
            return x
        r = (aux_word(aux, ast, ka, c1, c2, c3) << S32) | aux_word(aux, ast, ka, c1, c2, c3)


# ------------------------------------------------------------------------------------------------
# exp for the softmax step: plain arithmetic (no libm), so the loop vectorises and the softmax
# families are the same bits on any IEEE machine
# ------------------------------------------------------------------------------------------------
LN2_HI = 6.93147180369123816490e-01    # fdlibm's ln2_hi (32 significant bits: k ln2_hi is exact)
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e+00
POW2 = np.array([2.0 ** (k + 64) for k in range(-1075, 1)])   # 2^(k + 64), k = -1075 .. 0: exact
TWO_M64 = 2.0 ** -64


@njit(inline="always")
def exp_nonpos(x):  # noqa: ANN001
    """e^x for x <= 0 (including -inf), within 2 ulp (tested against numpy): x = k ln2 + r
    (Cody-Waite, |r| <= ln2/2), e^r by its degree-13 Taylor polynomial (remainder < 1e-17), times
    2^k as (. 2^(k + 64)) 2^-64 (one rounding, also for subnormal results); 0 below -745.2."""
    kf = max(np.floor(x * INV_LN2 + 0.5), -1075.0)
    r = (x - kf * LN2_HI) - kf * LN2_LO
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
    v = (p * POW2[np.int64(kf) + 1075]) * TWO_M64
    return 0.0 if x < -745.2 else v


