"""z3 building blocks for the Dobrushin statements: stochastic matrices of real variables, total
variation distances written with ``If``, maxima, products, and the equality conditions of D1/D2.

Every helper returns z3 terms over exact rationals (z3's ``Real``); nothing here is a float.
``tv`` is exact (both signs of every difference through ``If``); ``tv_upper`` is an over-approximation
(an auxiliary variable per coordinate with ``t >= x``, ``t >= -x``) that is sound and complete
wherever a distance only needs to be *small* in a query (a solution with the auxiliaries larger
exists iff one with them exact does), and keeps such queries linear and free of case splits.
"""
from __future__ import annotations

from itertools import count
from typing import Sequence

import z3

Row = Sequence[z3.ArithRef]
Matrix = Sequence[Row]

_fresh = count()


def stochastic(name: str, n: int, m: int, out: list) -> list[list[z3.ArithRef]]:
    """An n x m matrix of real variables ``name_i_k``; appends non-negativity and unit row sums to ``out``."""
    M = [[z3.Real(f"{name}_{i}_{k}") for k in range(m)] for i in range(n)]
    for row in M:
        out += [x >= 0 for x in row]
        out.append(z3.Sum(row) == 1)
    return M


def lower_triangular(M: Matrix, out: list) -> None:
    """Causal attention: every entry above the diagonal is 0."""
    out += [M[i][k] == 0 for i in range(len(M)) for k in range(i + 1, len(M[i]))]


def absolute(x: z3.ArithRef) -> z3.ArithRef:
    return z3.If(x >= 0, x, -x)


def tv(a: Row, b: Row) -> z3.ArithRef:
    """1/2 ||a - b||_1, exactly."""
    return z3.Sum([absolute(x - y) for x, y in zip(a, b)]) / 2


def tv_upper(a: Row, b: Row, out: list) -> z3.ArithRef:
    """A term >= 1/2 ||a - b||_1 (fresh t_k >= |a_k - b_k|, constraints appended to ``out``)."""
    ts = []
    for x, y in zip(a, b):
        t = z3.Real(f"t!{next(_fresh)}")
        out += [t >= x - y, t >= y - x]
        ts.append(t)
    return z3.Sum(ts) / 2


def pairs(n: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def delta_exact(M: Matrix, name: str, out: list) -> tuple[z3.ArithRef, dict]:
    """A variable equal to delta(M) = max_{i<j} tv(M_i, M_j), and the dict of exact tv terms by pair.
    n = 1: delta = 0."""
    D = z3.Real(f"{name}!{next(_fresh)}")
    d = {(i, j): tv(M[i], M[j]) for i, j in pairs(len(M))}
    if not d:
        out.append(D == 0)
        return D, d
    out += [D >= v for v in d.values()]
    out.append(z3.Or([D == v for v in d.values()]))
    return D, d


def delta_upper(M: Matrix, name: str, out: list) -> z3.ArithRef:
    """A variable >= delta(M) (for a query in which delta(M) only needs to be small)."""
    D = z3.Real(f"{name}!{next(_fresh)}")
    out += [D >= tv_upper(M[i], M[j], out) for i, j in pairs(len(M))]
    out.append(D >= 0)
    return D


def matmul(P: Matrix, Q: Matrix) -> list[list[z3.ArithRef]]:
    return [[z3.Sum([P[i][k] * Q[k][t] for k in range(len(Q))]) for t in range(len(Q[0]))] for i in range(len(P))]


def residual(A: Matrix) -> list[list[z3.ArithRef]]:
    """The rollout factor (I + A)/2."""
    return [[(A[i][k] + (1 if i == k else 0)) / 2 for k in range(len(A[i]))] for i in range(len(A))]


def mutually_self_dominant(A: Matrix, i: int, j: int) -> z3.BoolRef:
    """A_ii >= A_ji and A_jj >= A_ij."""
    return z3.And(A[i][i] >= A[j][i], A[j][j] >= A[i][j])


def d1_condition(A: Matrix, D: z3.ArithRef, d: dict, mutual: bool = True, attaining: bool = True,
                 strict: bool = False) -> z3.BoolRef:
    """Theorem D1's equality condition: some pair (i, j), i != j, attaining delta(A) = ``D`` is
    mutually self-dominant. ``mutual=False``: only A_ii >= A_ji (a wrong variant); ``attaining=False``:
    any pair (a wrong variant); ``strict``: strictly self-dominant, A_ii > A_ji and A_jj > A_ij (a
    mutation: too strong a condition)."""
    cases = []
    for (i, j), dij in d.items():
        for a, b in ((i, j), (j, i)) if not mutual else ((i, j),):
            if strict:
                dom = z3.And(A[a][a] > A[b][a], A[b][b] > A[a][b])
            else:
                dom = mutually_self_dominant(A, a, b) if mutual else A[a][a] >= A[b][a]
            cases.append(z3.And(dij == D, dom) if attaining else dom)
    return z3.Or(cases)


def d2_condition(P: Matrix, Q: Matrix, DP: z3.ArithRef, DQ: z3.ArithRef, dP: dict, dQ: dict,
                 cancel: bool = True, attaining: bool = True, unit: bool = False) -> z3.BoolRef:
    """Theorem D2's equality condition (delta(P) delta(Q) > 0 assumed by the caller): some pair
    (i, j) attaining delta(P) (``DP``) such that (a) every (k, l) in S+ x S- attains delta(Q)
    (``DQ``), and (b) no column t has Q_kt > Q_lt for one pair of S+ x S- and Q_k't < Q_l't for
    another. ``cancel=False`` drops (b), ``attaining=False`` drops "attaining delta(P)" (wrong variants);
    ``unit`` adds "and delta(P) = 1" inside every case (a mutation: too strong a condition)."""
    m, p = len(Q), len(Q[0])

    def dq(k: int, l: int) -> z3.ArithRef:
        return dQ[(min(k, l), max(k, l))] if k != l else z3.RealVal(0)

    cases = []
    for i in range(len(P)):
        for j in range(len(P)):
            if i == j:
                continue
            plus = [P[i][k] > P[j][k] for k in range(m)]
            minus = [P[i][k] < P[j][k] for k in range(m)]
            a = z3.And([z3.Implies(z3.And(plus[k], minus[l]), dq(k, l) == DQ)
                        for k in range(m) for l in range(m) if k != l])
            parts = [a]
            if cancel:
                for t in range(p):
                    up = z3.Or([z3.And(plus[k], minus[l], Q[k][t] > Q[l][t]) for k in range(m) for l in range(m) if k != l])
                    down = z3.Or([z3.And(plus[k], minus[l], Q[k][t] < Q[l][t]) for k in range(m) for l in range(m) if k != l])
                    parts.append(z3.Not(z3.And(up, down)))
            if attaining:
                parts.append(dP[(min(i, j), max(i, j))] == DP)
            if unit:
                parts.append(DP == 1)
            cases.append(z3.And(parts))
    return z3.Or(cases)
