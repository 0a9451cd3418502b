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


def factor_pairs(M: Any) -> tuple[bool, bool, bool]:
    """(equality, through_first, through_other) of Theorem D1 by its condition: some pair (i, j),
    i != j, attaining delta(A) with A_ii >= A_ji and A_jj >= A_ij; 'first' if such a pair contains
    token 0, 'other' if such a pair avoids it."""
    A = exact_rows(M)
    n = len(A)
    tv = {(i, j): sum(abs(a - b) for a, b in zip(A[i], A[j])) / 2 for i in range(n) for j in range(i + 1, n)}
    if not tv:
        return False, False, False
    top = max(tv.values())
    good = [(i, j) for (i, j), d in tv.items() if d == top and A[i][i] >= A[j][i] and A[j][j] >= A[i][j]]
    return bool(good), any(i == 0 for i, _ in good), any(i != 0 for i, _ in good)


def rollout_steps(factors: list[list[list[Fraction]]]) -> list[dict]:
    """For exact factors Ahat_1..Ahat_L: per layer l, R_l = Ahat_l R_{l-1} and
    dict(delta_R, prod (= prod_{k<=l} delta(Ahat_k)), d2 (delta(Ahat_l R_{l-1}) == delta(Ahat_l)
    delta(R_{l-1}), with R_0 = I), chain (delta_R == prod))."""
    Rm, prod, out = None, Fraction(1), []
    for H in factors:
        dH = delta(H)
        if Rm is None:
            Rm, d2 = H, True                     # R_1 = Ahat_1 I and delta(I) = 1
        else:
            d_prev = delta(Rm)
            Rm = matmul(H, Rm)
            d2 = delta(Rm) == dH * d_prev
        prod *= dH
        dR = delta(Rm)
        out.append(dict(delta_R=dR, prod=prod, d2=d2, chain=dR == prod))
    return out


def rollout_chain(stack: Any, r: Fraction = Fraction(1, 2)) -> list[tuple[Fraction, Fraction]]:
    """For fused A_1..A_L: [(delta(R_l), prod delta(Ahat_k)) for each l], exactly, with
    Ahat = r I + (1 - r) A (A's rows renormalised exactly; ``r`` exact, e.g. Fraction(float))."""
    return [(s["delta_R"], s["prod"]) for s in rollout_steps([residual(exact_rows(A), Fraction(r)) for A in stack])]
