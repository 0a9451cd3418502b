"""A statement compiled once into a flat program of nodes (children before parents), the form every
evaluator of :mod:`numerics.expr` runs: no sympy is touched per instance.

Matrix nodes: ``leaf`` (A, B or C), ``lin`` (sum_i c_i X_i + c_I I, rational c, X_i leaves or
products), ``mmul`` (a product of two or more nodes, in order), ``mpow`` (a positive integer power).
Scalar nodes: ``const``, ``delta`` (of a matrix node), ``lin`` (c_0 + sum_i c_i s_i), ``mul`` (a
product of two or more non-constant nodes), ``pow`` (nonzero integer power), ``max``, ``min``.
Identical subexpressions become one node (delta(A) used twice is computed once); sums and rational
multiples are flattened (``(I + A)/2`` is one ``lin`` node: A/2 + I/2), constants folded, identity
factors of products dropped.

Each node carries a static bound ``mag``: for a matrix the largest row sum of |entries| of its exact
value (these matrices are nonnegative, so it is the exact row sum: 1 for every argument of delta),
for a scalar a bound on |value| (inf after a division). The float error bounds and the exact-grid
test (:mod:`numerics.expr.floats`) use it.

>>> from theory.expr import A, I, delta
>>> c = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
>>> [node.op for node in c.nodes], c.relation
(['leaf', 'lin', 'delta', 'delta', 'lin'], '<=')
>>> c.nodes[c.lhs].affine                 # delta((I + A)/2): A/2 + I/2, affine in the leaves
(Fraction(1, 2), (('A', Fraction(1, 2)),))
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from theory.errors import InvalidInput
from theory.expr import normal_form, written_relation

ONE, ZERO = Fraction(1), Fraction(0)
BIGGEST = Fraction(2) ** 1000     # constants and coefficients stay in float range


@dataclass(frozen=True)
class Node:
    """One step of a compiled statement (see the module docstring). ``args`` index earlier nodes;
    ``coefs`` pair with ``args`` in a ``lin``; ``const`` is a ``lin``'s constant term (scalar) or
    identity coefficient (matrix), or a ``const`` node's value; ``affine`` (``delta`` only) is
    (identity coefficient, ((leaf, coefficient), ...)) when delta's argument is affine in the
    leaves (no product), else None."""

    op: str
    matrix: bool
    args: tuple[int, ...] = ()
    coefs: tuple[Fraction, ...] = ()
    const: Fraction = ZERO
    name: str = ""
    power: int = 0
    mag: float = 1.0
    affine: Optional[tuple] = None


@dataclass(frozen=True)
class Compiled:
    """A validated statement ``lhs <= rhs`` (or ``<``, ``strict``) as a program: ``nodes`` in
    evaluation order, ``lhs``/``rhs`` the indices of its two sides, ``matrices`` the names of
    A, B, C that occur (in that order); ``written`` the relation as the statement was written
    (``>=`` and ``>`` are compiled the other way round: :meth:`as_written` turns the sides back)."""

    statement: Any
    strict: bool
    matrices: tuple[str, ...]
    nodes: tuple[Node, ...]
    lhs: int
    rhs: int
    written: str = ""

    @property
    def relation(self) -> str:
        return "<" if self.strict else "<="

    def as_written(self, lhs: Any, rhs: Any) -> dict:
        """``{"lhs", "relation", "rhs"}``: this program's sides ``lhs`` (<= or <) ``rhs`` as the statement
        writes them (:func:`theory.expr.as_written`).

        >>> from theory.expr import A, delta
        >>> compile_statement(delta(A) >= delta(A**2)).as_written("1/4", "1/2")
        {'lhs': '1/2', 'relation': '>=', 'rhs': '1/4'}
        """
        from theory.expr import as_written

        return as_written(self.written or self.relation, lhs, rhs)


def up(x: Fraction) -> float:
    """A float >= the rational x (inf if it overflows)."""
    try:
        f = float(x)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.memo: dict[tuple, int] = {}
        self.exact_mag: list[Optional[Fraction]] = []    # exact static bounds (None: unbounded)

    def add(self, node: Node, mag: Optional[Fraction]) -> int:
        for c in (node.const,) + node.coefs:
            if abs(c) > BIGGEST:
                shown = str(c) if len(str(c)) <= 24 else f"{str(c)[:12]}... ({len(str(c))} characters)"
                raise InvalidInput(f"statement: constant {shown} is too large for the float evaluator (|c| > 2**1000)")
        key = (node.op, node.matrix, node.args, node.coefs, node.const, node.name, node.power)
        if key not in self.memo:
            self.memo[key] = len(self.nodes)
            self.nodes.append(Node(**{**node.__dict__, "mag": math.inf if mag is None else up(mag)}))
            self.exact_mag.append(mag)
        return self.memo[key]

    # -- matrices: a tree -> (identity coefficient, {atom node: coefficient}) ---------------------
    def terms(self, t: tuple) -> tuple[Fraction, dict[int, Fraction]]:
        op = t[0]
        if op == "eye":
            return ONE, {}
        if op == "leaf":
            return ZERO, {self.add(Node("leaf", True, name=t[1]), ONE): ONE}
        if op == "scale":
            e, d = self.terms(t[2])
            return t[1] * e, {k: t[1] * v for k, v in d.items()}
        if op == "madd":
            e, d = ZERO, {}
            for a in t[1]:
                ea, da = self.terms(a)
                e += ea
                for k, v in da.items():
                    d[k] = d.get(k, ZERO) + v
            return e, {k: v for k, v in d.items() if v != 0}
        if op == "mmul":
            c, factors = ONE, []
            for a in t[1]:
                ea, da = self.terms(a)
                if not da:                      # c * I: a scalar factor
                    c *= ea
                else:
                    factors.append(self.matrix(a))
            if not factors:
                return c, {}
            if len(factors) == 1:
                return ZERO, {factors[0]: c}
            mag = math.prod((self.exact_mag[f] for f in factors), start=ONE)
            return ZERO, {self.add(Node("mmul", True, args=tuple(factors)), mag): c}
        if op == "mpow":
            e, d = self.terms(t[1])
            if not d:
                return e ** t[2], {}
            base = self.matrix(t[1])
            return ZERO, {self.add(Node("mpow", True, args=(base,), power=t[2]), self.exact_mag[base] ** t[2]): ONE}
        raise AssertionError(f"not a matrix term: {t!r}")   # theory.expr.normal_form produced it

    def matrix(self, t: tuple) -> int:
        e, d = self.terms(t)
        if e == 0 and len(d) == 1 and next(iter(d.values())) == 1:
            return next(iter(d))
        args = tuple(sorted(d))
        mag = abs(e) + sum((abs(d[a]) * self.exact_mag[a] for a in args), ZERO)
        return self.add(Node("lin", True, args=args, coefs=tuple(d[a] for a in args), const=e), mag)

    def affine(self, t: tuple) -> Optional[tuple]:
        e, d = self.terms(t)
        if all(self.nodes[a].op == "leaf" for a in d):
            return e, tuple(sorted((self.nodes[a].name, c) for a, c in d.items()))
        return None

    # -- scalars: a tree -> (constant, {node: coefficient}) ----------------------------------------
    def linear(self, t: tuple) -> tuple[Fraction, dict[int, Fraction]]:
        op = t[0]
        if op == "const":
            return t[1], {}
        if op == "add":
            c, d = ZERO, {}
            for a in t[1]:
                ca, da = self.linear(a)
                c += ca
                for k, v in da.items():
                    d[k] = d.get(k, ZERO) + v
            return c, {k: v for k, v in d.items() if v != 0}
        if op == "mul":
            c, factors = ONE, []
            for a in t[1]:
                ca, da = self.linear(a)
                if da:
                    factors.append(self.scalar(a))
                else:
                    c *= ca
            if c == 0 or not factors:
                return (ZERO if factors else c), {}
            if len(factors) == 1:
                return ZERO, {factors[0]: c}
            factors.sort()
            mag = self.product_mag(factors)
            return ZERO, {self.add(Node("mul", False, args=tuple(factors)), mag): c}
        if op == "pow":
            cb, db = self.linear(t[1])
            if not db:
                if cb == 0 and t[2] < 0:
                    raise InvalidInput(f"statement: division by zero (0**({t[2]})) in the bound")
                return cb ** t[2], {}
            base = self.scalar(t[1])
            m = self.exact_mag[base]
            mag = None if (t[2] < 0 or m is None) else m ** t[2]
            return ZERO, {self.add(Node("pow", False, args=(base,), power=t[2]), mag): ONE}
        if op in ("max", "min"):
            parts = [self.linear(a) for a in t[1]]
            if all(not d for _, d in parts):
                return (max if op == "max" else min)(c for c, _ in parts), {}
            args = tuple(sorted({self.scalar(a) for a in t[1]}))
            if len(args) == 1:
                return ZERO, {args[0]: ONE}
            mags = [self.exact_mag[a] for a in args]
            mag = None if any(m is None for m in mags) else max(mags)
            return ZERO, {self.add(Node(op, False, args=args), mag): ONE}
        if op == "delta":
            arg = self.matrix(t[1])
            node = Node("delta", False, args=(arg,), affine=self.affine(t[1]))
            return ZERO, {self.add(node, self.exact_mag[arg]): ONE}
        raise AssertionError(f"not a scalar term: {t!r}")

    def product_mag(self, factors: list[int]) -> Optional[Fraction]:
        mags = [self.exact_mag[f] for f in factors]
        return None if any(m is None for m in mags) else math.prod(mags, start=ONE)

    def scalar(self, t: tuple) -> int:
        c, d = self.linear(t)
        if not d:
            return self.add(Node("const", False, const=c), abs(c))
        if c == 0 and len(d) == 1 and next(iter(d.values())) == 1:
            return next(iter(d))
        args = tuple(sorted(d))
        mags = [self.exact_mag[a] for a in args]
        mag = None if any(m is None for m in mags) else abs(c) + sum((abs(d[a]) * m for a, m in zip(args, mags)), ZERO)
        return self.add(Node("lin", False, args=args, coefs=tuple(d[a] for a in args), const=c), mag)


def compile_statement(statement: Any) -> Compiled:
    """Validate ``statement`` (:func:`theory.expr.validate`: InvalidInput naming what is outside the
    vocabulary) and compile it once into a :class:`Compiled` program."""
    form = normal_form(statement)
    b = _Builder()
    lhs, rhs = b.scalar(form.lhs), b.scalar(form.rhs)
    names = {node.name for node in b.nodes if node.op == "leaf"}
    matrices = tuple(m for m in ("A", "B", "C") if m in names)
    if not matrices:
        raise InvalidInput(f"statement: {form.relation} uses none of A, B, C (once simplified): there is no "
                           "instance to check it on")
    return Compiled(statement=form.relation, strict=form.strict, matrices=matrices, nodes=tuple(b.nodes),
                    lhs=lhs, rhs=rhs, written=written_relation(statement))


def power_by_squaring(x: Any, k: int, mul: Any) -> Any:
    """``x**k`` (k >= 1) by repeated squaring, every product through ``mul``: one order of products
    for the float path (each product's error rule applied by ``mul``) and the exact one.

    >>> power_by_squaring(3, 5, lambda a, b: a * b)
    243
    """
    out, base = None, x
    while k:
        if k & 1:
            out = base if out is None else mul(out, base)
        k >>= 1
        if k:
            base = mul(base, base)
    return out
