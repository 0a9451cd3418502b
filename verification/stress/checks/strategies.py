"""Hypothesis strategies of instances of a statement over :mod:`theory.expr` at size n, for the
guided search (:func:`verification.stress.checks.hunt.hypothesis_search`): per kind of symbol,
adversarial draws that shrink toward small rationals. Stochastic matrices from
:mod:`verification.testing.strategies` (causal ones under ``causal``, exact convex combinations of
permutation matrices under ``doubly-stochastic``, their symmetrisations under ``symmetric``), real
matrices on the grid of quarters in [-8, 8] or floats in [-16, 16] (symmetric logits under
``symmetric``), d in 1..:data:`MAX_D`, a parameter lo, hi or a dyadic point between.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from verification.stress.checks.draws import Law

MAX_D = 3                # hypothesis draws d in 1..3


# -- per kind ---------------------------------------------------------------------------------------
def _birkhoff(st: Any, n: int, symmetric: bool) -> Any:
    """Exact convex combinations of 1 to n + 1 permutation matrices with dyadic weights (symmetrised)."""
    @st.composite
    def draw_one(draw: Any) -> np.ndarray:
        k = draw(st.integers(1, n + 1))
        perms = draw(st.lists(st.permutations(list(range(n))), min_size=k, max_size=k))
        bits = draw(st.integers(0, 6))
        total = 2 ** bits
        cuts = sorted(draw(st.lists(st.integers(0, total), min_size=k - 1, max_size=k - 1)))
        weights = [b - a for a, b in zip([0] + cuts, cuts + [total])]
        M = np.zeros((n, n))
        for p, w in zip(perms, weights):
            M[np.arange(n), p] += w / total
        return (M + M.T) / 2 if symmetric else M
    return draw_one()


def _real(st: Any, rows: int, cols: int, symmetric: bool) -> Any:
    entries = st.one_of(st.integers(-32, 32).map(lambda k: k / 4),
                        st.floats(-16, 16, allow_nan=False, allow_infinity=False, allow_subnormal=False))
    mat = st.lists(entries, min_size=rows * cols, max_size=rows * cols).map(
        lambda v: np.array(v, dtype=np.float64).reshape(rows, cols))
    return mat.map(lambda Z: (Z + Z.T) / 2) if symmetric else mat


def _parameter(st: Any, lo: Fraction, hi: Fraction) -> Any:
    if lo == hi:
        return st.just(lo)
    return st.one_of(st.just(lo), st.just(hi), st.integers(1, 2 ** 16 - 1).map(lambda j: lo + (hi - lo) * j / 2 ** 16))


def _stochastic(st: Any, n: int, assume: tuple) -> Any:
    from verification.testing import strategies as S

    if "causal" in assume:
        return S.causal(n=n)
    if "symmetric" in assume or "doubly-stochastic" in assume:
        return _birkhoff(st, n, "symmetric" in assume)
    if "positive" in assume:
        return st.one_of(S.stochastic(n=n), S.dyadic(n=n))
    return st.one_of(S.stochastic(n=n), S.dyadic(n=n), S.near_tie(n=n), S.unnormalised(n=n))


def instances(law: Law, n: int) -> Any:
    """A hypothesis strategy of instances at size n (see the module docstring): ``{"A": (n, n), "X": (n, d),
    "alpha": Fraction, ...}``."""
    from hypothesis import strategies as st

    @st.composite
    def draw_one(draw: Any) -> dict:
        d = draw(st.integers(1, MAX_D)) if law.tokens else None
        out: dict = {}
        for name, kind in law.roles:
            kind = kind or "stochastic"
            if kind == "stochastic":
                out[name] = draw(_stochastic(st, n, law.assume))
            else:
                out[name] = draw(_real(st, n, n if kind == "logits" else d,
                                       kind == "logits" and "symmetric" in law.assume))
        for name, lo, hi in law.params:
            out[name] = draw(_parameter(st, Fraction(lo), Fraction(hi)))
        return out
    return draw_one()
