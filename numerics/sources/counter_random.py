"""Counter-based random row-stochastic families: a compiled, parallel twin of
:mod:`numerics.sources.random` for the stress sweep (the random baselines of docs/theory.md §2).

The families and their names are :mod:`numerics.sources.random`'s (``dirichlet``, ``softmax-T<T>``,
``causal``, ``hard``, ``sparse``, ``birkhoff``, ``symmetric``; the real ``gauss-<s>`` and ``grid``;
validated by its :func:`~numerics.sources.random.check_family` and
:func:`~numerics.sources.random.check_real`),
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
  (numpy's path in :func:`numerics.sources.random.sample`). exp is :func:`numerics.sources.philox.exp_nonpos`, plain
  arithmetic within 1 ulp of numpy's (tested): it vectorises (3x libm's speed here) and is the same
  bits on any IEEE machine. :func:`softmax_logits` gives the logits of the same arguments.
* ``causal`` -- the same with T = 1 on entries 0..i of row i; entries past the diagonal are exact 0
  (and no draws are spent on them).
* ``hard`` -- one-hot rows, the column uniform on 0..n-1 by Lemire's unbiased bounded integer
  (multiply-shift with rejection, 32-bit words).
* ``sparse`` -- a uniform support of ceil(n/4) columns (partial Fisher-Yates with Lemire draws),
  Dirichlet(1) by uniform spacings on it, exact zeros elsewhere.

* ``birkhoff`` -- permutations pi, rho and n more by full Fisher-Yates (n - 1 Lemire draws each),
  then 2n - 1 cut points uniform on 0..2^20 (Lemire) whose sorted spacings are the weights:
  sum_k w_k P_k with P_k = pi S^k rho (k < n) and the drawn permutations (exact, multiples of
  2^-20); ``symmetric`` -- (M + M^T)/2 of such an M (its own key).
* the real families (:func:`real_counter`, any n x cols): ``gauss-<s>`` -- the ziggurat's standard
  Gaussians times s; ``grid`` -- Lemire draws on 0..64, minus 32, over 4. A tokens matrix (n x d)
  adds d to its key. Parameters (:func:`words_counter`) read raw 32-bit words.

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
import operator

import numpy as np
from numba import njit, prange

from numerics.sources.philox import (AUX, BIRKHOFF, BYTE, CAUSAL, DIRICHLET, EPS53, FI, FLAGS, GAUSS, GRID,
                                     HARD, KI, LO, LOGITS, M52, MAX_BUFFER, MAX_CHUNK, MAX_INDEX, MAX_N, ONE,
                                     PER, S32, S8, SEG, SOFTMAX, SPARSE, TWO53, U, WI, WORDS, bounded, ensure,
                                     exp_nonpos, normal_slow, round_keys, u53)
from numerics.sources.random import (DOUBLY, GRID_MAX, GRID_STEP, WEIGHT_BITS, check_family, check_real, family_id,
                                     symmetrised)
from theory.errors import InvalidInput

COUNTER_GENERATOR = ("Philox4x32-10 (Random123); key = SeedSequence([seed, family_id, n]).generate_state(2, uint32), "
                     "counter = (block, index mod 2^32, index div 2^32 (+ 2^31: auxiliary stream), chunk), "
                     "words in lane-major segments of 16 blocks")


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


@njit(**FLAGS)
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
        V[k - 1, r] = TWO53
    for t in range(k - 1, 0, -1):
        for r in range(rows):
            V[t, r] -= V[t - 1, r]


@njit(**FLAGS)
def _row_words(kind, n, r, cols):  # noqa: ANN001
    """Main-stream words of row r of an n x cols instance (its fast path; rejections read the
    auxiliary stream); BIRKHOFF has one "row", the whole instance (:func:`_birkhoff`)."""
    if kind == DIRICHLET:
        return 2 * (n - 1)
    if kind == SOFTMAX or kind == LOGITS or kind == GAUSS:
        return 2 * cols
    if kind == CAUSAL:
        return 2 * (r + 1)
    if kind == HARD:
        return 1
    if kind == GRID or kind == WORDS:
        return cols
    if kind == BIRKHOFF:
        return (n + 2) * (n - 1) + 2 * n - 1
    k = max(1, -(-n // 4))
    return k + 2 * (k - 1)


@njit(**FLAGS)
def _row_start(kind, n, r, cols):  # noqa: ANN001
    if kind == CAUSAL:
        return r * (r + 1)
    if kind == BIRKHOFF:
        return 0 if r == 0 else _row_words(kind, n, 0, cols)
    return r * _row_words(kind, n, 0, cols)


@njit(**FLAGS)
def _softmax_matrix(kind, A, n, cols, temp, buf, st, total, aux, ast, ka, c1, c2, c3, ki, wi, fi):  # noqa: ANN001
    """All rows of one softmax-T / causal / logits / gauss instance (one call per matrix: a call per
    row, with its many array arguments, cost as much as the row): row r is the max-subtracted softmax
    of Gaussian logits / T (numpy's path) on entries 0..n-1, or 0..r for causal (T = 1, exact zeros
    after), or the logits / T themselves for LOGITS, or the Gaussians times ``temp`` (the standard
    deviation) on entries 0..cols-1 for GAUSS."""
    c2a = c2 | AUX
    for r in range(n):
        w0 = _row_start(kind, n, r, cols)
        ensure(buf, st, w0, w0 + _row_words(kind, n, r, cols), total, ka, c1, c2, c3)
        q = w0 - st[0]
        m = r + 1 if kind == CAUSAL else cols
        top = -np.inf
        for t in range(m):
            # numpy's ziggurat fast path (~98.5%) on the main-stream 64-bit word a 2^32 + b, written
            # out here; the wedge, the tail and retries in normal_slow (auxiliary stream)
            x = (buf[q + 2 * t] << S32) | buf[q + 2 * t + 1]
            idx = x & BYTE
            h = x >> S8
            rabs = (h >> ONE) & M52
            if rabs < ki[idx]:
                z = np.float64(rabs) * wi[idx]
                if (h & ONE) == ONE:
                    z = -z
            else:
                z = normal_slow(x, aux, ast, ka, c1, c2a, c3, ki, wi, fi)
            if kind == GAUSS:
                z = z * temp
            elif kind != CAUSAL:
                z = z / temp
            A[r, t] = z
            top = max(top, z)
        for t in range(m, cols):
            A[r, t] = 0.0
        if kind == LOGITS or kind == GAUSS:
            continue
        for t in range(m):                  # no reduction in this loop: it vectorises
            A[r, t] = exp_nonpos(A[r, t] - top)
        s = 0.0
        for t in range(m):                  # the row sum, sequential (numpy's sum is pairwise)
            s += A[r, t]
        for t in range(m):
            A[r, t] = A[r, t] / s


@njit(**FLAGS)
def _birkhoff(A, n, buf, st, total, aux, ast, P, ka, c1, c2, c3):  # noqa: ANN001
    """One ``birkhoff`` instance: permutations pi, rho and n more by Fisher-Yates (n - 1 Lemire
    draws each, words [k (n - 1), (k + 1)(n - 1)) for permutation k = 0..n+1), then 2n - 1 cut points
    uniform on 0..2^20 (one Lemire draw each) whose spacings are the weights: sum_k w_k P_k with
    P_k = pi S^k rho for k < n and the drawn ones after (exact: multiples of 2^-20)."""
    c2a = c2 | AUX
    for k in range(n + 2):
        for t in range(n):
            P[k, t] = t
        w0 = k * (n - 1)
        ensure(buf, st, w0, w0 + n - 1, total, ka, c1, c2, c3)
        q = w0 - st[0]
        for t in range(n - 1):
            j = t + bounded(n - t, buf[q + t], aux, ast, ka, c1, c2a, c3)
            P[k, t], P[k, j] = P[k, j], P[k, t]
    w0 = (n + 2) * (n - 1)
    ensure(buf, st, w0, w0 + 2 * n - 1, total, ka, c1, c2, c3)
    q = w0 - st[0]
    scale = np.int64(1) << WEIGHT_BITS
    cuts = np.empty(2 * n + 1, np.int64)
    cuts[0] = 0
    cuts[2 * n] = scale
    for t in range(2 * n - 1):
        cuts[t + 1] = bounded(scale + 1, buf[q + t], aux, ast, ka, c1, c2a, c3)
    cuts[1:2 * n] = np.sort(cuts[1:2 * n])
    step = 1.0 / scale
    for i in range(n):
        for j in range(n):
            A[i, j] = 0.0
    for k in range(2 * n):
        w = (cuts[k + 1] - cuts[k]) * step
        for i in range(n):
            col = P[0, (P[1, i] + k) % n] if k < n else P[2 + k - n, i]
            A[i, col] += w


@njit(**FLAGS)
def _instance(kind, temp, n, cols, A, buf, st, aux, ast, V, P, net, ka, c1, c2, c3, ki, wi, fi):  # noqa: ANN001
    st[0] = st[1] = 0                 # main buffer empty
    ast[0] = SEG                     # auxiliary buffer empty, next segment 0
    ast[1] = 0
    c2a = c2 | AUX                   # the auxiliary stream: top bit of the index's high word
    total = _row_start(kind, n, n, cols)
    if kind == SOFTMAX or kind == LOGITS or kind == CAUSAL or kind == GAUSS:
        _softmax_matrix(kind, A, n, cols, temp, buf, st, total, aux, ast, ka, c1, c2, c3, ki, wi, fi)
        return
    if kind == BIRKHOFF:
        _birkhoff(A, n, buf, st, total, aux, ast, P, ka, c1, c2, c3)
        return
    if kind == GRID or kind == WORDS:
        for r in range(n):
            w0 = _row_start(kind, n, r, cols)
            ensure(buf, st, w0, w0 + cols, total, ka, c1, c2, c3)
            q = w0 - st[0]
            for t in range(cols):
                if kind == WORDS:
                    A[r, t] = np.float64(buf[q + t])
                else:
                    v = bounded(2 * GRID_STEP * GRID_MAX + 1, buf[q + t], aux, ast, ka, c1, c2a, c3)
                    A[r, t] = (v - GRID_STEP * GRID_MAX) / GRID_STEP
        return
    k = n if kind == DIRICHLET else max(1, -(-n // 4))
    for r in range(n):
        w0 = _row_start(kind, n, r, cols)
        ensure(buf, st, w0, w0 + _row_words(kind, n, r, cols), total, ka, c1, c2, c3)
        q = w0 - st[0]
        if kind == DIRICHLET:
            for t in range(n - 1):
                V[t, r] = u53(buf[q + 2 * t], buf[q + 2 * t + 1])
        elif kind == HARD:
            c = bounded(n, buf[q], aux, ast, ka, c1, c2a, c3)
            for t in range(n):
                A[r, t] = 0.0
            A[r, c] = 1.0
        else:   # SPARSE: partial Fisher-Yates (P[r, :k] is the support), the k - 1 points after it
            for t in range(n):
                P[r, t] = t
                A[r, t] = 0.0
            for t in range(k):
                j = t + bounded(n - t, buf[q + t], aux, ast, ka, c1, c2a, c3)
                P[r, t], P[r, j] = P[r, j], P[r, t]
            for t in range(k - 1):
                V[t, r] = u53(buf[q + k + 2 * t], buf[q + k + 2 * t + 1])
    if kind == DIRICHLET:
        _spacings_rows(V, n, n, net)
        for r in range(n):
            for t in range(n):
                A[r, t] = V[t, r] * EPS53
    elif kind == SPARSE:
        _spacings_rows(V, k, n, net)
        for r in range(n):
            for t in range(k):
                A[r, P[r, t]] = V[t, r] * EPS53


@njit(parallel=True, **FLAGS)
def _sample(kind, temp, n, cols, start, ka, chunk, words, net, out, ki, wi, fi):  # noqa: ANN001
    count = out.shape[0]
    items = (count + PER - 1) // PER
    for it in prange(items):
        buf = np.empty(words, np.uint64)
        st = np.empty(2, np.int64)
        aux = np.empty(SEG, np.uint64)
        ast = np.empty(2, np.int64)
        pts = n if kind == DIRICHLET or kind == SPARSE else 1
        V = np.empty((pts, n), np.int64)                        # spacings, one column per row
        # sparse supports; birkhoff's permutations
        P = np.empty((n if kind == SPARSE else n + 2 if kind == BIRKHOFF else 1, n), np.int64)
        for i in range(it * PER, min(count, (it + 1) * PER)):
            idx = start + U(i)
            _instance(kind, temp, n, cols, out[i], buf, st, aux, ast, V, P, net, ka,
                      idx & LO, idx >> S32, chunk, ki, wi, fi)


def _words(kind: int, n: int, cols: int = 0) -> int:
    """Main-buffer length (words, whole segments): the instance's main-stream words (+ one segment
    of misalignment), at most :data:`MAX_BUFFER` but never less than a row needs (birkhoff: one
    permutation's or the weights' words). Only speed depends on it, never values."""
    k = max(1, -(-n // 4))
    cols = cols or n
    row = {DIRICHLET: 2 * (n - 1), SOFTMAX: 2 * n, LOGITS: 2 * n, CAUSAL: 2 * n, HARD: 1, SPARSE: k + 2 * (k - 1),
           GAUSS: 2 * cols, GRID: cols, WORDS: cols, BIRKHOFF: 2 * n - 1}[kind]
    total = (n * (n + 1) if kind == CAUSAL else (n + 2) * (n - 1) + 2 * n - 1 if kind == BIRKHOFF
             else n * row)
    want = max(min(total, MAX_BUFFER), row) + SEG
    return SEG * (-(-want // SEG))


def _int(value: object, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool):
        raise InvalidInput(f"{name}: must be an integer, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise InvalidInput(f"{name}: must be an integer, got {value!r}") from None
    if not lo <= v < hi:
        raise InvalidInput(f"{name}: must be in [{lo}, {hi}), got {v}")
    return v


def _run(family: str, kind: int, temp: float, n: int, count: int, seed: int, chunk: int, start: int,
         cols: int = 0, entropy: tuple = ()) -> np.ndarray:
    """``count`` n x cols (cols = n by default) instances of ``kind`` under the key of
    SeedSequence([seed, family_id(family), n, *entropy])."""
    n = _int(n, "n", 1, MAX_N + 1)
    cols = _int(cols or n, "cols", 1, MAX_N + 1)
    count = _int(count, "count", 0, MAX_INDEX)
    seed = _int(seed, "seed", 0, 1 << 128)
    chunk = _int(chunk, "chunk", 0, MAX_CHUNK)
    start = _int(start, "start", 0, MAX_INDEX)
    if start + count > MAX_INDEX:
        raise InvalidInput(f"start + count: instance indices must stay below 2^63, got {start} + {count}")
    key = [seed, family_id(family), n, *entropy]
    k0, k1 = (int(w) for w in np.random.SeedSequence(key).generate_state(2, np.uint32))
    out = np.empty((count, n, cols))
    if count:
        net = sorting_network(n - 1 if kind == DIRICHLET else max(1, -(-n // 4)) - 1)
        _sample(kind, temp, n, cols, U(start), round_keys(k0, k1), U(chunk), _words(kind, n, cols), net, out, KI, WI, FI)
    return out


def sample_counter(family: str, n: int, count: int, seed: int, chunk: int, start: int = 0) -> np.ndarray:
    """Instances ``start .. start + count - 1`` of chunk ``chunk`` of ``family``: ``count``
    row-stochastic n x n float64 matrices, shape (count, n, n), drawn by :data:`COUNTER_GENERATOR`
    (module docstring), in parallel over instances; instance i depends only on
    (seed, family, n, chunk, i). Bad arguments: InvalidInput naming the argument.

    >>> sample_counter("sparse", 8, 1, seed=3, chunk=0).astype(bool).sum(-1).tolist()
    [[2, 2, 2, 2, 2, 2, 2, 2]]
    """
    check_family(family)
    if family in DOUBLY:
        M = _run(family, BIRKHOFF, 1.0, n, count, seed, chunk, start)
        return M if family == "birkhoff" else symmetrised(M)
    if family.startswith("softmax-T"):
        kind, temp = SOFTMAX, float(family[len("softmax-T"):])
    else:
        kind, temp = {"dirichlet": DIRICHLET, "causal": CAUSAL, "hard": HARD, "sparse": SPARSE}[family], 1.0
    return _run(family, kind, temp, n, count, seed, chunk, start)


def real_counter(family: str, rows: int, cols: int, count: int, seed: int, chunk: int, start: int = 0,
                 entropy: tuple = (), symmetric: bool = False) -> np.ndarray:
    """Instances ``start .. start + count - 1`` of chunk ``chunk`` of the real ``family``
    (:func:`numerics.sources.random.check_real`: ``gauss-<s>``, standard Gaussians by the ziggurat
    times s; ``grid``, Lemire draws on 0..64 minus 32, over 4): (count, rows, cols) float64, key
    SeedSequence([seed, family_id(family), rows, *entropy]); ``symmetric`` (square): (Z + Z^T)/2.

    >>> Z = real_counter("grid", 2, 3, 4, seed=0, chunk=0)
    >>> Z.shape, bool((Z * 4 == np.round(Z * 4)).all() and (abs(Z) <= 8).all())
    ((4, 2, 3), True)
    """
    check_real(family)
    kind, s = (GRID, 1.0) if family == "grid" else (GAUSS, float(family[len("gauss-"):]))
    Z = _run(family, kind, s, rows, count, seed, chunk, start, cols=cols, entropy=entropy)
    return symmetrised(Z) if symmetric else Z


def words_counter(name: str, per: int, count: int, seed: int, chunk: int, start: int = 0,
                  entropy: tuple = ()) -> np.ndarray:
    """``per`` uniform 32-bit words (uint64) for each of instances ``start .. start + count - 1``:
    (count, per), key SeedSequence([seed, family_id(name), 1, *entropy]) (the parameters' draws,
    :func:`numerics.sources.random.parameter_values`)."""
    W = _run(name, WORDS, 1.0, 1, count, seed, chunk, start, cols=per, entropy=entropy)
    return W[:, 0, :].astype(np.uint64)


def softmax_logits(family: str, n: int, count: int, seed: int, chunk: int, start: int = 0) -> np.ndarray:
    """The logits z / T (standard Gaussian z) from which :func:`sample_counter` draws the same
    arguments' ``softmax-T<T>`` matrices (same stream): for checking the Gaussian draws and the
    softmax step separately."""
    if not check_family(family).startswith("softmax-T"):
        raise InvalidInput(f"family {family!r}: softmax_logits needs a softmax-T<T> family")
    return _run(family, LOGITS, float(family[len("softmax-T"):]), n, count, seed, chunk, start)


def regenerate_one(family: str, n: int, seed: int, chunk: int, index: int) -> np.ndarray:
    """Instance ``index`` of chunk ``chunk`` alone, an (n, n) matrix: bitwise row ``index`` of any
    :func:`sample_counter` call of that chunk that covers it."""
    return sample_counter(family, n, 1, seed, chunk, start=index)[0]
