"""Hypothesis strategies of every random family a statement's symbols are drawn from, for a test of
your own:

    from hypothesis import given
    from attnbounds import decide, instances, logits, softmax, delta, ptp, exp

    L = logits("L")
    BOUND = delta(softmax(L)) <= 1 - exp(-ptp(L))

    @given(instances(BOUND))
    def test_bound(inst):
        assert decide(BOUND, **inst).verdict != "violated"

    instances(statement)          a whole instance: {symbol: value} for every matrix and parameter of
                                  the statement (one size n for all, one d for the tokens), drawn by
                                  the families below under the statement's hypotheses (``assume=``; a
                                  Theorem's own); ``decide(statement, **inst)`` takes it as it is
    stochastic_matrices(n)        row-stochastic (n, n) float64 arrays: uniform-ish floats, exact
                                  dyadic rows, sparse, one-hot, causal, near ties (2^-50 apart)
                                  (:mod:`verification.testing.strategies`); with ``assume=``:
                                  causal (lower triangular), positive (every entry > 0),
                                  doubly-stochastic (mixtures of permutations, columns sum to exactly 1),
                                  symmetric (symmetric doubly stochastic)
    logit_matrices(n)             real (n, n) logits: floats at several scales (1/4 to 16), or exact
                                  rationals k/q on a grid (q <= 4; lists of Fractions: ties, exact
                                  equalities of exponentials); ``symmetric=True`` for a symmetric one
    token_matrices(n, d)          real (n, d) token states, floats or the rational grid
    parameter_values(lo, hi)      a rational in [lo, hi], the endpoints included (a Parameter's
                                  interval: ``parameter_values(alpha)``)
    sizes(lo, hi)                 the matrix size n

Floats stand for themselves exactly (a stochastic matrix for its rows divided by their exact sums),
so a counterexample Hypothesis finds is an exact one; an exact instance (any matrix of Fractions) is
decided in exact arithmetic.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Union

import numpy as np
from hypothesis import strategies as st

from theory.errors import InvalidInput
from verification.testing import strategies as T

SCALES = (0.25, 1.0, 4.0, 16.0)      # logits and tokens: entries in [-scale, scale]
GRID = (1, 2, 3, 4)                  # the rational grid's denominators; entries k/q, |k/q| <= GRID_RANGE
GRID_RANGE = 4
SIZES = (2, 5)                       # n when none is given (one size for every matrix of an instance)
DIMS = (1, 4)                        # d (the tokens' width) when none is given

Size = Union[int, st.SearchStrategy, None]


def sizes(lo: int = SIZES[0], hi: int = SIZES[1]) -> st.SearchStrategy:
    """The size n of an instance's matrices, in [lo, hi]."""
    return st.integers(lo, hi)


def _size(n: Size, default: tuple) -> st.SearchStrategy:
    if n is None:
        return st.integers(*default)
    return n if isinstance(n, st.SearchStrategy) else st.just(int(n))


def _check(assume: Any) -> tuple:
    from theory.expr import check_assumptions

    assume = (assume,) if isinstance(assume, str) else tuple(assume)
    check_assumptions(assume, "strategies")
    return assume


@st.composite
def _composition(draw: Any, parts: int, bits: int) -> list[int]:
    """``parts`` positive integers summing to 2**bits (2**bits >= parts)."""
    total = 2 ** bits
    cuts = sorted(draw(st.sets(st.integers(1, total - 1), min_size=parts - 1, max_size=parts - 1)))
    return [b - a for a, b in zip([0] + cuts, cuts + [total])]


@st.composite
def _positive_dyadic(draw: Any, n: int) -> np.ndarray:
    """Every entry > 0, a multiple of 2^-bits, rows summing to exactly 1; sometimes nudged by 2^-50."""
    bits = draw(st.integers(max(1, (n - 1).bit_length()), 8))
    a = np.array([draw(_composition(n, bits)) for _ in range(n)], dtype=np.float64) / 2.0 ** bits
    if n > 1 and draw(st.booleans()):
        i, j, k = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if j != k:
            a[i, j] -= T.TINY
            a[i, k] += T.TINY
    return a


@st.composite
def _causal_one_hot(draw: Any, n: int) -> np.ndarray:
    a = np.zeros((n, n))
    for i in range(n):
        a[i, draw(st.integers(0, i))] = 1.0
    return a


@st.composite
def _doubly(draw: Any, n: int, positive: bool) -> np.ndarray:
    """A doubly stochastic matrix with dyadic entries (rows and columns sum to exactly 1): a mixture
    of permutation matrices (Birkhoff), or for ``positive`` a permuted circulant with every weight > 0."""
    if positive:
        bits = draw(st.integers(max(1, (n - 1).bit_length()), 8))
        w = np.array(draw(_composition(n, bits)), dtype=np.float64) / 2.0 ** bits
        circulant = np.array([[w[(k - i) % n] for k in range(n)] for i in range(n)])
        p = np.array(draw(st.permutations(range(n))))
        return circulant[p][:, p]
    k = draw(st.integers(1, 3))
    bits = draw(st.integers(max(1, (k - 1).bit_length()), 6))
    w = np.array(draw(_composition(k, bits)), dtype=np.float64) / 2.0 ** bits
    out = np.zeros((n, n))
    for weight in w:
        out[np.arange(n), np.array(draw(st.permutations(range(n))))] += weight
    return out


def stochastic_matrices(n: Size = None, *, assume: Any = ()) -> st.SearchStrategy:
    """Row-stochastic (n, n) float64 arrays (see the module docstring) satisfying every hypothesis of
    ``assume`` (causal, positive, doubly-stochastic, symmetric; two that exclude each other are refused)."""
    assume = set(_check(assume))

    @st.composite
    def draw_one(draw: Any) -> np.ndarray:
        size = draw(_size(n, SIZES))
        if "doubly-stochastic" in assume or "symmetric" in assume:
            M = draw(_doubly(size, "positive" in assume))
            return (M + M.T) / 2 if "symmetric" in assume else M
        if "causal" in assume:
            return draw(st.one_of(T.causal(n=size), _causal_one_hot(size)))
        if "positive" in assume:
            return draw(st.one_of(T.stochastic(n=size, positive=True), _positive_dyadic(size)))
        return draw(T.any_stochastic(n=size))
    return draw_one()


def _grid_entries(count: int) -> st.SearchStrategy:
    @st.composite
    def draw_grid(draw: Any) -> list[Fraction]:
        q = draw(st.sampled_from(GRID))
        ks = draw(st.lists(st.integers(-GRID_RANGE * q, GRID_RANGE * q), min_size=count, max_size=count))
        return [Fraction(k, q) for k in ks]
    return draw_grid()


def _float_entries(count: int, scale: Optional[float]) -> st.SearchStrategy:
    @st.composite
    def draw_floats(draw: Any) -> list[float]:
        s = draw(st.sampled_from(SCALES)) if scale is None else float(scale)
        return draw(st.lists(st.floats(-s, s, allow_nan=False, allow_infinity=False), min_size=count,
                             max_size=count))
    return draw_floats()


def _real(rows: int, cols: int, scale: Optional[float], grid: Optional[bool], symmetric: bool = False) -> st.SearchStrategy:
    @st.composite
    def draw_real(draw: Any) -> Any:
        on_grid = draw(st.booleans()) if grid is None else bool(grid)
        if on_grid:
            vals = draw(_grid_entries(rows * cols))
            M = [vals[i * cols:(i + 1) * cols] for i in range(rows)]
            if symmetric:
                M = [[(M[i][k] + M[k][i]) / 2 for k in range(cols)] for i in range(rows)]
            return M
        X = np.array(draw(_float_entries(rows * cols, scale)), dtype=np.float64).reshape(rows, cols)
        return (X + X.T) / 2 if symmetric else X
    return draw_real()


def logit_matrices(n: Size = None, *, scale: Optional[float] = None, grid: Optional[bool] = None,
                   symmetric: bool = False) -> st.SearchStrategy:
    """Real (n, n) logits: a float64 array with entries in [-scale, scale] (scale drawn from
    :data:`SCALES` when None), or rows of Fractions k/q on the rational grid (``grid=True``; either
    when None); ``symmetric=True`` makes it symmetric."""
    @st.composite
    def draw_one(draw: Any) -> Any:
        size = draw(_size(n, SIZES))
        return draw(_real(size, size, scale, grid, symmetric))
    return draw_one()


def token_matrices(n: Size = None, d: Size = None, *, scale: Optional[float] = None,
                   grid: Optional[bool] = None) -> st.SearchStrategy:
    """Real (n, d) token states, as :func:`logit_matrices` draws entries."""
    @st.composite
    def draw_one(draw: Any) -> Any:
        rows, cols = draw(_size(n, SIZES)), draw(_size(d, DIMS))
        return draw(_real(rows, cols, scale, grid))
    return draw_one()


def parameter_values(lo: Any, hi: Any = None, max_denominator: int = 16) -> st.SearchStrategy:
    """A Fraction in [lo, hi], the endpoints drawn as often as the inside (``lo`` may be a
    :func:`theory.expr.parameter`, whose interval is taken)."""
    if hi is None:
        interval = getattr(lo, "interval", None)
        if interval is None:
            raise InvalidInput(f"parameter_values: give an interval (lo, hi) or a parameter, got {lo!r}")
        lo, hi = interval
    lo, hi = Fraction(lo), Fraction(hi)
    if lo > hi:
        raise InvalidInput(f"parameter_values: the interval [{lo}, {hi}] is empty")
    inside = st.fractions(lo, hi, max_denominator=max_denominator)
    return st.one_of(st.sampled_from([lo, hi]), inside)


def instances(statement: Any, *, assume: Any = (), where: Any = (), n: Size = None, d: Size = None) -> st.SearchStrategy:
    """Whole instances of ``statement`` (a relation over :mod:`theory.expr`, a Theorem or its id):
    dicts {symbol: value} that :func:`attnbounds.decide` takes as ``decide(statement, **inst)``; every
    stochastic matrix drawn under the hypotheses (``assume``, with a Theorem's own), logits symmetric
    under "symmetric". ``n``, ``d``: a size, a strategy of sizes, or None (n in 2..5, d in 1..4).
    ``where=`` relations are not drawn for: an instance outside them is decided not-applicable."""
    from attnbounds.decision import compiled_for

    compiled = compiled_for(statement, _check(assume), where)
    assume = compiled.assume

    @st.composite
    def draw_one(draw: Any) -> dict:
        size = draw(_size(n, SIZES))
        width = draw(_size(d, DIMS)) if "d" in compiled.sizes else None
        inst: dict[str, Any] = {}
        for name, role in compiled.roles:
            if role == "logits":
                inst[name] = draw(logit_matrices(size, symmetric="symmetric" in assume))
            elif role == "tokens":
                inst[name] = draw(token_matrices(size, width))
            else:
                inst[name] = draw(stochastic_matrices(size, assume=assume))
        for name, lo, hi in compiled.params:
            inst[name] = draw(parameter_values(lo, hi))
        return inst
    return draw_one()
