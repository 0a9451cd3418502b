"""Hypothesis strategies for row-stochastic matrices, reusable by other projects' tests.

    stochastic(n)        float rows (normalised positive floats; rows sum to 1 within rounding)
    dyadic(n)            exact dyadic rationals: rows sum to exactly 1 in float arithmetic
    sparse(n)            dyadic with many exact zeros
    hard(n)              one-hot rows (hard attention)
    causal(n)            lower-triangular (causal mask), dyadic
    near_tie(n)          coarse dyadic matrices full of ties, then one entry pair nudged by
                         +-2**-50 within a row (rows still sum to exactly 1): near-ties at 1e-16
    any_stochastic(n)    one of the above
    unnormalised(n)      dyadic / near_tie / sparse / causal with each row scaled by (1 + c 2**-40),
                         c in [-64, 64]: rows do NOT sum to exactly 1 (deviation up to ~6e-11), so the
                         float path must decide with a real row deviation
    twin_rows(n)         square, rows in identical pairs (2q, 2q+1), then unnormalised: every
                         maximising pair has a twin pair with the same exact d, so the float filter
                         cannot separate them and the exact path is provably taken

All return numpy float64 arrays of shape (n, m) (m = n unless given).
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from hypothesis import strategies as st

TINY = 2.0 ** -50


def _sizes(n: Optional[int], lo: int = 1, hi: int = 6):
    return st.just(n) if n is not None else st.integers(lo, hi)


@st.composite
def stochastic(draw, n: Optional[int] = None, m: Optional[int] = None, positive: bool = True):
    n = draw(_sizes(n, 1, 7))
    m = n if m is None else m
    lo = 1e-3 if positive else 0.0
    vals = draw(st.lists(st.floats(lo, 1.0, allow_nan=False, allow_infinity=False), min_size=n * m, max_size=n * m))
    a = np.array(vals, dtype=np.float64).reshape(n, m)
    if not positive:
        a[np.arange(n), draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n))] += 0.5
    return a / a.sum(axis=1, keepdims=True)


def _dyadic_row(draw, m: int, bits: int, zeros: float, allowed: Optional[list[int]] = None) -> list[float]:
    total = 2 ** bits
    cols = allowed if allowed is not None else list(range(m))
    weights = [0] * m
    k = draw(st.integers(1, len(cols)))
    chosen = draw(st.permutations(cols))[:k] if zeros > 0 else cols
    cuts = sorted(draw(st.lists(st.integers(0, total), min_size=len(chosen) - 1, max_size=len(chosen) - 1)))
    parts = [b - a for a, b in zip([0] + cuts, cuts + [total])]
    for c, p in zip(chosen, parts):
        weights[c] = p
    if sum(weights) == 0:
        weights[chosen[0]] = total
    return [w / total for w in weights]


@st.composite
def dyadic(draw, n: Optional[int] = None, m: Optional[int] = None, bits: Optional[int] = None, zeros: float = 0.0):
    n = draw(_sizes(n, 1, 6))
    m = n if m is None else m
    bits = draw(st.integers(1, 8)) if bits is None else bits
    return np.array([_dyadic_row(draw, m, bits, zeros) for _ in range(n)], dtype=np.float64)


def sparse(n: Optional[int] = None, m: Optional[int] = None):
    return dyadic(n=n, m=m, zeros=0.5)


@st.composite
def hard(draw, n: Optional[int] = None, m: Optional[int] = None):
    n = draw(_sizes(n, 1, 7))
    m = n if m is None else m
    idx = draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n))
    a = np.zeros((n, m))
    a[np.arange(n), idx] = 1.0
    return a


@st.composite
def causal(draw, n: Optional[int] = None, bits: Optional[int] = None):
    n = draw(_sizes(n, 1, 6))
    bits = draw(st.integers(1, 6)) if bits is None else bits
    rows = [_dyadic_row(draw, n, bits, zeros=draw(st.sampled_from([0.0, 0.5])), allowed=list(range(i + 1)))
            for i in range(n)]
    return np.array(rows, dtype=np.float64)


@st.composite
def near_tie(draw, n: Optional[int] = None, m: Optional[int] = None):
    """Coarse dyadic (entries multiples of 1/8: ties everywhere), then a +-2**-50 nudge that moves
    mass between two entries of one row, keeping the row sum exactly 1."""
    bases = [dyadic(n=n, m=m, bits=3), sparse(n=n, m=m)]
    if m is None or m == n:
        bases.append(causal(n=n, bits=3))
    base = draw(st.one_of(*bases))
    a = base.copy()
    for _ in range(draw(st.integers(1, 2))):
        i = draw(st.integers(0, a.shape[0] - 1))
        nz = np.flatnonzero(a[i] >= 0.125)
        if len(nz) == 0:
            continue
        src = int(draw(st.sampled_from(list(nz))))
        dst = draw(st.integers(0, a.shape[1] - 1))
        if dst == src:
            continue
        a[i, src] -= TINY
        a[i, dst] += TINY
    return a


def any_stochastic(n: Optional[int] = None, m: Optional[int] = None):
    square = m is None
    options = [stochastic(n=n, m=m), dyadic(n=n, m=m), sparse(n=n, m=m), hard(n=n, m=m), near_tie(n=n, m=m)]
    if square:
        options.append(causal(n=n))
    return st.one_of(*options)


@st.composite
def chained_pair(draw, max_n: int = 5):
    """(P, Q) with P: (n, m), Q: (m, p), drawn from the adversarial families."""
    n, m, p = draw(st.integers(1, max_n)), draw(st.integers(1, max_n)), draw(st.integers(1, max_n))
    fam = st.sampled_from(["dyadic", "sparse", "hard", "near_tie", "stochastic", "causal"])
    def one(r, c, kind):
        if kind == "causal" and r == c:
            return causal(n=r)
        if kind == "causal":
            kind = "sparse"
        return {"dyadic": dyadic, "sparse": sparse, "hard": hard, "near_tie": near_tie,
                "stochastic": stochastic}[kind](n=r, m=c)
    return draw(one(n, m, draw(fam))), draw(one(m, p, draw(fam)))


SCALE = 2.0 ** -40


def _scale_rows(draw, a: np.ndarray) -> np.ndarray:
    c = draw(st.lists(st.integers(-64, 64), min_size=a.shape[0], max_size=a.shape[0]))
    return a * (1.0 + np.array(c, dtype=np.float64) * SCALE)[:, None]


@st.composite
def unnormalised(draw, n: Optional[int] = None):
    """Square adversarial matrices whose rows are scaled by 1 + c 2**-40 (the rational matrix is
    the scaled floats with rows renormalised exactly)."""
    base = draw(st.one_of(dyadic(n=n), near_tie(n=n), sparse(n=n), causal(n=n)))
    return _scale_rows(draw, base)


@st.composite
def twin_rows(draw, half: Optional[int] = None):
    """(2h, 2h) matrices with rows 2q and 2q+1 equal before scaling (see the module doc)."""
    h = draw(_sizes(half, 1, 3))
    base = draw(st.one_of(dyadic(n=h, m=2 * h, bits=3), near_tie(n=h, m=2 * h), sparse(n=h, m=2 * h)))
    return _scale_rows(draw, np.repeat(base, 2, axis=0))
