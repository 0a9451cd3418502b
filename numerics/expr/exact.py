"""The exact evaluator of a compiled statement: both sides as Fractions on one instance.

Matrices are held row by row as Python integers over a per-row denominator (row i is
``nums[i][k] / dens[i]``), the way :class:`numerics.stochastic.ExactMatrix` holds a float matrix
with its rows renormalised exactly; sums, rational multiples, products and powers stay exact, and
delta(M) = max_{i<j} sum_k |M_ik d_j - M_jk d_i| / (2 d_i d_j) over every pair (no float guidance:
this is the reference the fast paths are checked against, and the last resort of
:func:`numerics.expr.decide`). Scalars are Fractions; a division by an exact zero raises
ZeroDivisionError (:func:`sides_of`) or InvalidInput (:func:`exact_sides`).

>>> from theory.expr import A, I, delta
>>> from numerics.expr.program import compile_statement
>>> c = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
>>> exact_sides(c, {"A": [["1/3", "2/3"], [1, 0]]})
(Fraction(1, 6), Fraction(5, 6))
"""
from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import gcd, lcm
from typing import Any

import numpy as np

from numerics.expr.program import Compiled, Node, power_by_squaring
from numerics.stochastic import ExactMatrix, as_stochastic, loaded_torch
from theory.errors import InvalidInput


class Rows:
    """An exact n x n matrix: entry (i, k) is ``nums[i][k] / dens[i]`` (Python ints, dens > 0)."""

    __slots__ = ("nums", "dens")

    def __init__(self, nums: list[list[int]], dens: list[int]):
        self.nums, self.dens = nums, dens

    @classmethod
    def of(cls, E: ExactMatrix) -> "Rows":
        return cls([list(r) for r in E.num], list(E.rowsum)).reduced()

    @classmethod
    def eye(cls, n: int) -> "Rows":
        return cls([[int(i == k) for k in range(n)] for i in range(n)], [1] * n)

    def reduced(self) -> "Rows":
        for i, (row, d) in enumerate(zip(self.nums, self.dens)):
            g = gcd(d, *row)
            if g > 1:
                self.nums[i] = [v // g for v in row]
                self.dens[i] = d // g
        return self

    def fractions(self) -> list[list[Fraction]]:
        return [[Fraction(v, d) for v in row] for row, d in zip(self.nums, self.dens)]


def lin(eye: Fraction, terms: list[tuple[Fraction, Rows]], n: int) -> Rows:
    """eye * I + sum_i c_i X_i, row by row over a common denominator."""
    nums, dens = [], []
    for i in range(n):
        den = eye.denominator
        for c, X in terms:
            den = lcm(den, c.denominator * X.dens[i])
        row = [0] * n
        row[i] = eye.numerator * (den // eye.denominator)
        for c, X in terms:
            f = c.numerator * (den // (c.denominator * X.dens[i]))
            row = [r + f * v for r, v in zip(row, X.nums[i])]
        nums.append(row)
        dens.append(den)
    return Rows(nums, dens).reduced()


def matmul(X: Rows, Y: Rows) -> Rows:
    """X Y exactly: Y over one common denominator D, row i of X Y = (row_i(X) Y') / (d_i D)."""
    D = lcm(*Y.dens)
    Yc = [[v * (D // d) for v in row] for row, d in zip(Y.nums, Y.dens)]
    cols = list(zip(*Yc))
    nums = [[sum(a * b for a, b in zip(row, col)) for col in cols] for row in X.nums]
    return Rows(nums, [d * D for d in X.dens]).reduced()


def power(X: Rows, k: int) -> Rows:
    """X**k (k >= 1), exactly (:func:`~numerics.expr.program.power_by_squaring`)."""
    return power_by_squaring(X, k, matmul)


def delta(X: Rows) -> Fraction:
    """delta(X) = 1/2 max_{i<j} ||X_i - X_j||_1 over every pair, exactly (0 for n = 1)."""
    best = Fraction(0)
    n = len(X.nums)
    for i in range(n):
        ri, di = X.nums[i], X.dens[i]
        for j in range(i + 1, n):
            rj, dj = X.nums[j], X.dens[j]
            d = Fraction(sum(abs(a * dj - b * di) for a, b in zip(ri, rj)), 2 * di * dj)
            if d > best:
                best = d
    return best


def _value(node: Node, vals: list, n: int, leaves: dict) -> Any:
    op, args = node.op, node.args
    if op == "leaf":
        return leaves[node.name]
    if node.matrix:
        if op == "lin":
            return lin(node.const, [(c, vals[a]) for a, c in zip(args, node.coefs)], n)
        if op == "mmul":
            out = vals[args[0]]
            for a in args[1:]:
                out = matmul(out, vals[a])
            return out
        return power(vals[args[0]], node.power)
    if op == "const":
        return node.const
    if op == "delta":
        return delta(vals[args[0]])
    if op == "lin":
        return node.const + sum((c * vals[a] for a, c in zip(args, node.coefs)), Fraction(0))
    if op == "mul":
        out = Fraction(1)
        for a in args:
            out *= vals[a]
        return out
    if op == "pow":
        return vals[args[0]] ** node.power          # ZeroDivisionError for 0 ** -k
    pick = max if op == "max" else min
    return pick(vals[a] for a in args)


def node_values(compiled: Compiled, matrices: Mapping) -> list:
    """Every node's exact value (Fractions; matrices as :class:`Rows`) of ``compiled`` on ``matrices``
    ({name: ExactMatrix}, already exact and row-stochastic); ZeroDivisionError where a denominator is
    exactly 0."""
    leaves = {name: Rows.of(E) for name, E in matrices.items()}
    n = next(iter(matrices.values())).n
    vals: list = []
    for node in compiled.nodes:
        vals.append(_value(node, vals, n, leaves))
    return vals


def sides_of(compiled: Compiled, matrices: Mapping) -> tuple[Fraction, Fraction]:
    """(exact lhs, exact rhs) of ``compiled`` on ``matrices`` (see :func:`node_values`)."""
    vals = node_values(compiled, matrices)
    return vals[compiled.lhs], vals[compiled.rhs]


def exact_matrix(x: Any, name: str) -> ExactMatrix:
    """One square matrix as the exact rational matrix it stands for: a float array or tensor (rows
    renormalised exactly, after :func:`numerics.stochastic.as_stochastic`), an ExactMatrix, or rows
    of exact rationals (Fraction, int, or str such as "1/3"), which must be nonnegative and sum to
    exactly 1 row by row."""
    if isinstance(x, ExactMatrix):
        return x
    torch = loaded_torch()
    if (isinstance(x, np.ndarray) and x.dtype != object) or (torch is not None and isinstance(x, torch.Tensor)):
        batch = as_stochastic(x, name, square=True)
        if batch.lead:
            raise InvalidInput(f"{name}: expected one (n, n) matrix, got shape {batch.lead + (batch.n, batch.m)}")
        return ExactMatrix.from_floats(batch.data[0].astype(np.float64))
    try:
        rows = [[Fraction(v) for v in row] for row in x]
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise InvalidInput(f"{name}: not a matrix of rationals ({exc})") from None
    size = len(rows)
    if size == 0 or any(len(r) != size for r in rows):
        raise InvalidInput(f"{name}: must be a non-empty square matrix, got rows of lengths {[len(r) for r in rows]}")
    for i, row in enumerate(rows):
        if any(v < 0 for v in row):
            raise InvalidInput(f"{name}: row {i} has a negative entry")
        if sum(row) != 1:
            raise InvalidInput(f"{name}: row {i} sums to {sum(row)}, not exactly 1 (pass a float array to have "
                               "its rows renormalised exactly)")
    return ExactMatrix.from_rationals(rows)


def exact_sides(compiled: Compiled, mats: Any) -> tuple[Fraction, Fraction]:
    """(exact lhs, exact rhs) of ``compiled`` on one instance: ``mats`` maps each of the statement's
    matrices to one (n, n) matrix (see :func:`exact_matrix`). InvalidInput for bad matrices and
    where the statement is undefined (a denominator exactly 0)."""
    if not isinstance(mats, Mapping):
        raise InvalidInput(f"mats: expected a mapping such as {{'A': (n, n) matrix}}, got {type(mats).__name__}")
    extra = [k for k in mats if k not in compiled.matrices]
    if extra:
        raise InvalidInput(f"mats: {extra[0]!r} does not occur in the statement (it uses {', '.join(compiled.matrices)})")
    missing = [m for m in compiled.matrices if m not in mats]
    if missing:
        raise InvalidInput(f"mats: the statement uses {missing[0]} but mats has no {missing[0]!r}")
    exact = {m: exact_matrix(mats[m], m) for m in compiled.matrices}
    sizes = {m: E.n for m, E in exact.items()}
    if len(set(sizes.values())) > 1:
        raise InvalidInput(f"mats: the matrices have different sizes {sizes}; every matrix of a statement is n x n")
    try:
        return sides_of(compiled, exact)
    except ZeroDivisionError:
        raise InvalidInput(f"statement: {compiled.statement} is undefined on these matrices "
                           "(a denominator is exactly 0)") from None
