"""A witness of a statement over :mod:`theory.expr`: the first of a few small exact instances on
which it is an equality (its two sides equal in exact arithmetic), for the derived
:attr:`theory.registry.Theorem.witness`.

Candidates, per matrix, in order (2 x 2 and 3 x 3, rows of Fractions): the rank-one uniform matrix
(delta 0), the identity and a permutation (delta 1), a matrix with two equal rows and one
point mass, and two mixed matrices; every combination for the statement's matrices (at most
6^3 = 216), filtered by the assumptions (``causal``: lower triangular; ``positive``).

>>> from theory.expr import A, delta
>>> find_witness(delta(A**2) <= delta(A)**2)["A"]
[[Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 2), Fraction(1, 2)]]
"""
from __future__ import annotations

from fractions import Fraction as F
from itertools import product
from typing import Any

from numerics.expr.certified import exact_sides
from numerics.expr.program import compile_statement
from theory.errors import InvalidInput


def _candidates(n: int) -> list[list[list[F]]]:
    u = [[F(1, n)] * n for _ in range(n)]
    eye = [[F(int(i == j)) for j in range(n)] for i in range(n)]
    perm = [[F(int(j == (i + 1) % n)) for j in range(n)] for i in range(n)]
    low = [[F(1)] + [F(0)] * (n - 1)] + [[F(1, i + 1)] * (i + 1) + [F(0)] * (n - i - 1) for i in range(1, n)]
    mixed = [[F(1, 2) if j == i else F(1, 2 * (n - 1)) for j in range(n)] for i in range(n)]
    tri = [[F(i + j + 1, sum(i + k + 1 for k in range(n))) for j in range(n)] for i in range(n)]
    return [u, eye, perm, low, mixed, tri]


def _ok(M: list, assume: tuple) -> bool:
    n = len(M)
    if "causal" in assume and any(M[i][j] for i in range(n) for j in range(i + 1, n)):
        return False
    return not ("positive" in assume and any(v <= 0 for row in M for v in row))


def find_witness(statement: Any, assume: tuple = ()) -> dict[str, list[list[F]]]:
    """``{"A": rows of Fractions, ...}`` on which ``statement`` is an equality (exact), or LookupError."""
    compiled = compile_statement(statement)
    for n in (2, 3):
        pool = [M for M in _candidates(n) if _ok(M, assume)]
        for combo in product(pool, repeat=len(compiled.matrices)):
            mats = dict(zip(compiled.matrices, combo))
            try:
                lhs, rhs = exact_sides(compiled, mats)
            except InvalidInput:        # undefined there (a denominator 0)
                continue
            if lhs == rhs:
                return mats
    raise LookupError(f"no witness: {compiled.statement} is an equality on none of the small exact candidates "
                      "(numerics.expr.witness)")
