"""Exact re-check of an SMT counterexample: the statement evaluated on the model's rational entries
with Fractions (distances through :class:`numerics.stochastic.ExactMatrix`), and, where every entry
is a float exactly (dyadic), cross-checked against the suite's own exact evaluators
(:func:`numerics.dobrushin.factor_equality`, :func:`numerics.dobrushin.product_equality`,
:func:`numerics.dobrushin.dobrushin`).

>>> A = [[Fraction(1), Fraction(0)], [Fraction(1, 2), Fraction(1, 2)]]
>>> delta(A), d1_equality(A), d1_condition(A)
(Fraction(1, 2), True, True)
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional, Sequence

import numpy as np

from numerics.stochastic import ExactMatrix
from theory.errors import InvalidInput

FMatrix = Sequence[Sequence[Fraction]]


def _em(M: FMatrix) -> ExactMatrix:
    for i, row in enumerate(M):
        if sum(row) != 1 or any(v < 0 for v in row):
            raise InvalidInput(f"row {i} of the counterexample is not a probability vector: {row}")
    return ExactMatrix.from_rationals(M)


def tv(M: FMatrix, i: int, j: int) -> Fraction:
    return _em(M).tv(i, j)


def delta(M: FMatrix) -> Fraction:
    E = _em(M)
    return max((E.tv(i, j) for i in range(E.n) for j in range(i + 1, E.n)), default=Fraction(0))


def residual(A: FMatrix) -> list[list[Fraction]]:
    return [[(a + (1 if i == k else 0)) / 2 for k, a in enumerate(row)] for i, row in enumerate(A)]


def product(P: FMatrix, Q: FMatrix) -> list[list[Fraction]]:
    return [[sum((P[i][k] * Q[k][t] for k in range(len(Q))), Fraction(0)) for t in range(len(Q[0]))]
            for i in range(len(P))]


def d1_equality(A: FMatrix) -> bool:
    return delta(residual(A)) == (1 + delta(A)) / 2


def d1_condition(A: FMatrix, mutual: bool = True, attaining: bool = True, strict: bool = False) -> bool:
    """D1's equality condition, or its wrong variants (one-sided self-dominance, any pair), or its
    mutation ``strict`` (strict self-dominance both ways)."""
    D, n = delta(A), len(A)
    for i in range(n):
        for j in range(n):
            if i == j or (attaining and tv(A, i, j) != D):
                continue
            if strict and A[i][i] > A[j][i] and A[j][j] > A[i][j]:
                return True
            if not strict and A[i][i] >= A[j][i] and (not mutual or A[j][j] >= A[i][j]):
                return True
    return False


def d2_condition(P: FMatrix, Q: FMatrix, cancel: bool = True, attaining: bool = True, unit: bool = False) -> bool:
    """D2's equality condition (docs/theory.md §1), or its wrong variants (without (b); any pair), or
    its mutation ``unit`` (the condition and delta(P) = 1)."""
    DP = delta(P)
    if unit and DP != 1:
        return False
    return any(d2_pair(P, Q, i, j, cancel) for i in range(len(P)) for j in range(len(P))
               if i != j and (not attaining or tv(P, i, j) == DP))


def d2_pair(P: FMatrix, Q: FMatrix, i: int, j: int, cancel: bool = True) -> bool:
    """(a) and, unless ``cancel=False``, (b) of D2's condition for the pair (i, j) of rows of P."""
    DQ, m, p = delta(Q), len(Q), len(Q[0])
    plus = [k for k in range(m) if P[i][k] > P[j][k]]
    minus = [k for k in range(m) if P[i][k] < P[j][k]]
    if any(tv(Q, k, l) != DQ for k in plus for l in minus):
        return False
    return not (cancel and any({(Q[k][t] > Q[l][t]) - (Q[k][t] < Q[l][t]) for k in plus for l in minus} >= {1, -1}
                               for t in range(p)))


def lower_triangular(A: FMatrix) -> bool:
    return all(A[i][k] == 0 for i in range(len(A)) for k in range(i + 1, len(A[i])))


def dyadic(*mats: FMatrix) -> bool:
    """Every entry is a float exactly (so the suite's float-input evaluators see the same matrix)."""
    return all(Fraction(float(v)) == v for M in mats for row in M for v in row)


def suite_cross_check(kind: str, mats: dict) -> Optional[bool]:
    """Whether the suite's exact evaluators agree with this module on the counterexample
    (None when some entry is not a float exactly). ``kind``: "d1" (matrix A) or "d2" (P, Q)."""
    from numerics.dobrushin import dobrushin, factor_equality, product_equality

    if kind == "d1":
        A = mats["A"]
        if not dyadic(A):
            return None
        a = np.array(A, dtype=np.float64)
        return (bool(factor_equality(a)) == d1_equality(A)
                and Fraction(float(dobrushin(a))) == delta(A))
    P, Q = mats["P"], mats["Q"]
    if not dyadic(P, Q):
        return None
    p, q = np.array(P, dtype=np.float64), np.array(Q, dtype=np.float64)
    trivial = delta(P) * delta(Q) == 0
    return (bool(product_equality(p, q)) == (trivial or d2_condition(P, Q))
            and Fraction(float(dobrushin(p))) == delta(P) and Fraction(float(dobrushin(q))) == delta(Q))
