"""Brute-force exact evaluation of the definitions (Fractions, no cleverness): the reference that
the fast and exact paths of numerics/ are tested against. Small instances only."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np


def exact_rows(M: Any) -> list[list[Fraction]]:
    """Rationals the floats represent, each row divided by its exact sum."""
    rows = [[Fraction(float(x)) for x in r] for r in np.asarray(M, dtype=np.float64)]
    return [[x / sum(r) for x in r] for r in rows]


def delta(rows: list[list[Fraction]]) -> Fraction:
    n = len(rows)
    best = Fraction(0)
    for i in range(n):
        for j in range(n):
            best = max(best, sum(abs(a - b) for a, b in zip(rows[i], rows[j])) / 2)
    return best


def matmul(X: list[list[Fraction]], Y: list[list[Fraction]]) -> list[list[Fraction]]:
    return [[sum((X[i][k] * Y[k][j] for k in range(len(Y))), Fraction(0)) for j in range(len(Y[0]))]
            for i in range(len(X))]


def residual(rows: list[list[Fraction]], r: Fraction = Fraction(1, 2)) -> list[list[Fraction]]:
    n = len(rows)
    return [[r * (i == k) + (1 - r) * rows[i][k] for k in range(n)] for i in range(n)]


def factor_equality(M: Any) -> bool:
    """delta((I+A)/2) == (1 + delta(A))/2 by the definitions."""
    A = exact_rows(M)
    return delta(residual(A)) == (1 + delta(A)) / 2


def factor_slack(M: Any) -> Fraction:
    A = exact_rows(M)
    return (1 + delta(A)) / 2 - delta(residual(A))


def product_equality(Pm: Any, Qm: Any) -> bool:
    P, Q = exact_rows(Pm), exact_rows(Qm)
    return delta(matmul(P, Q)) == delta(P) * delta(Q)


def rollout_chain(stack: Any) -> list[tuple[Fraction, Fraction]]:
    """For fused A_1..A_L: [(delta(R_l), prod delta(Ahat_k)) for each l], exactly."""
    Rm, prod, out = None, Fraction(1), []
    for A in stack:
        H = residual(exact_rows(A))
        Rm = H if Rm is None else matmul(H, Rm)
        prod *= delta(H)
        out.append((delta(Rm), prod))
    return out
