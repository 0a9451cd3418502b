"""A witness of a statement over :mod:`theory.expr`: the first of a few small exact instances on
which it is an equality (its two sides equal in exact arithmetic, or as exact exponential
polynomials: :func:`numerics.expr.compare` says 0), inside its hypotheses and ``where=``, for the
derived :attr:`theory.registry.Theorem.witness`.

Candidates, per symbol, in order (2 x 2, then 3 x 3; rows of Fractions):

* a stochastic matrix: the rank-one uniform matrix (delta 0), the identity and a permutation
  (delta 1), a lower-triangular matrix of uniform rows, a mixed matrix (1/2 on the diagonal) and
  one with entries proportional to i + j + 1;
* a logits matrix: 0, the identity, rows constant (i on row i), the entries i - j and i j;
* a tokens matrix (d = 1, then 2): 0, the entries i, the entries i + k, constant 1;
* a parameter over [lo, hi]: lo, hi, (lo + hi)/2.

Every combination for the statement's symbols (at most :data:`MAX_COMBINATIONS` per size) is
filtered by the theorem's hypothesis check (:class:`theory.hypotheses.DerivedHypothesis`: kinds,
shapes, ``assume``); one where a ``where=`` relation is false or the statement undefined is skipped.

>>> from theory.expr import A, delta, logits, softmax, ptp, exp
>>> find_witness(delta(A**2) <= delta(A)**2)["A"]
[[Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 2), Fraction(1, 2)]]
>>> L = logits("L")
>>> find_witness(delta(softmax(L)) <= 1 - exp(-ptp(L)))["L"]
[[Fraction(0, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(0, 1)]]
"""
from __future__ import annotations

from fractions import Fraction as F
from itertools import islice, product
from typing import Any

from numerics.expr.certified import Undefined, instance, values_of
from numerics.expr.decide import settle
from numerics.expr.program import compile_statement
from theory.errors import InvalidInput

MAX_COMBINATIONS = 20_000      # per size: the candidates' product is cut there


def _candidates(n: int) -> list[list[list[F]]]:
    u = [[F(1, n)] * n for _ in range(n)]
    eye = [[F(int(i == j)) for j in range(n)] for i in range(n)]
    perm = [[F(int(j == (i + 1) % n)) for j in range(n)] for i in range(n)]
    low = [[F(1)] + [F(0)] * (n - 1)] + [[F(1, i + 1)] * (i + 1) + [F(0)] * (n - i - 1) for i in range(1, n)]
    mixed = [[F(1, 2) if j == i else F(1, 2 * (n - 1)) for j in range(n)] for i in range(n)]
    tri = [[F(i + j + 1, sum(i + k + 1 for k in range(n))) for j in range(n)] for i in range(n)]
    return [u, eye, perm, low, mixed, tri]


def _logits(n: int) -> list[list[list[F]]]:
    def mat(f: Any) -> list[list[F]]:
        return [[F(f(i, j)) for j in range(n)] for i in range(n)]
    return [mat(lambda i, j: 0), mat(lambda i, j: int(i == j)), mat(lambda i, j: i), mat(lambda i, j: i - j),
            mat(lambda i, j: i * j)]


def _tokens(n: int, d: int) -> list[list[list[F]]]:
    def mat(f: Any) -> list[list[F]]:
        return [[F(f(i, k)) for k in range(d)] for i in range(n)]
    return [mat(lambda i, k: 0), mat(lambda i, k: i), mat(lambda i, k: i + k), mat(lambda i, k: 1)]


def _pool(kind: str, n: int, d: int) -> list:
    return _candidates(n) if kind == "stochastic" else _logits(n) if kind == "logits" else _tokens(n, d)


def find_witness(statement: Any, assume: tuple = (), where: tuple = ()) -> dict[str, Any]:
    """``{"A": rows of Fractions, ..., "alpha": Fraction}`` on which ``statement`` is an equality,
    exactly, inside the hypotheses ``assume`` and ``where``; LookupError when no candidate is one."""
    from theory.hypotheses import DerivedHypothesis

    compiled = compile_statement(statement, assume, where)
    check = DerivedHypothesis(compiled.matrices, tuple(assume), compiled.roles, compiled.params)
    kinds = [compiled.role(m) or "stochastic" for m in compiled.matrices]
    params = [[lo, hi, (lo + hi) / 2] if lo != hi else [lo] for _, lo, hi in compiled.params]
    names = list(compiled.matrices) + [p for p, _, _ in compiled.params]
    for n in (2, 3):
        for d in ((1, 2) if "tokens" in kinds else (1,)):
            pools = [_pool(kind, n, d) for kind in kinds] + params
            for combo in islice(product(*pools), MAX_COMBINATIONS):
                inst = dict(zip(names, combo))
                if not check(inst):
                    continue
                try:
                    vals = values_of(compiled, instance(compiled, inst))
                except (InvalidInput, Undefined):       # undefined there (a denominator 0, a log of 0)
                    continue
                if settle(compiled, vals)[1]:             # lhs = rhs exactly, where the statement applies
                    return inst
    raise LookupError(f"no witness: {compiled.statement} is an equality on none of the small exact candidates "
                      "(numerics.expr.witness)")
