"""A user's theorem over :mod:`theory.expr` (issue 50) as SMT queries: proved for all matrices of size n.

:func:`statement_for` turns a statement (its :func:`theory.expr.normal_form`) into a
:class:`numerics.smt.Statement` of kind ``"expr"`` (dims ``(n,)``) with one query, ``"bound"``:
*there exist* n x n matrices (each of A, B, C that occurs: real variables, entries >= 0, rows summing
to 1; ``assume`` adds "causal", every entry above the diagonal 0, and "positive", every entry > 0)
with ``lhs > rhs`` (the theorem says ``<=``) or ``lhs >= rhs`` (it says ``<``). ``unsat`` from z3 and
cvc5 proves the bound for every such matrix of size n; a ``sat`` model is a counterexample, re-checked
by ``holds``, which evaluates the statement exactly (:func:`numerics.expr.exact_sides`) on the
model's rationals, independently of this encoding.

The encoding is exact (every auxiliary variable is pinned to the value it names, so the query is
satisfiable iff a counterexample exists; nonlinear real arithmetic, ``QF_NRA``):

* products and powers of matrices are polynomials in the entries; a product of degree above
  :data:`INLINE_DEGREE` is named by fresh variables ``P == X Y`` (with the implied facts: entries
  in [0, 1], rows summing to 1), so ``A**k`` stays small text (powers by squaring);
* |x| is ``If(x >= 0, x, -x)``; delta(M) is a variable ``D`` with ``D >= tv(M_i, M_j)`` for every
  pair i < j and ``D == tv(M_i, M_j)`` for one of them (0 for n = 1); Max and Min likewise;
* a scalar power k < 0 (a division) is a variable ``r`` with ``r * s**|k| == 1``: that also says
  ``s != 0``, so the query ranges over the matrices where every denominator is nonzero, the only
  ones where the statement is defined (:attr:`UserStatement.conditions` says so; the result's
  text carries it).

>>> from theory.expr import A, B, Max, delta
>>> st = statement_for("mine.square", delta(A**2) <= delta(A)**2)
>>> st.kind, st.dims(3), st.matrices, [label for label, _, _ in st.build((2,))]
('expr', (3,), ('A',), ['bound'])
>>> st.holds({"A": [["1/2", "1/2"], ["1/4", "3/4"]]}), st.holds({"A": [[1, 0], [0, 1]]})
(True, True)
>>> statement_for("mine.wrong", delta(A * B) <= Max(delta(A), delta(B)) / 2).holds({"A": [[1, 0], [0, 1]],
...                                                                                 "B": [[1, 0], [0, 1]]})
False
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import count
from typing import Any, Optional

import z3

from numerics.smt import encode as E
from numerics.smt.statements import Statement
from theory.errors import InvalidInput

INLINE_DEGREE = 4       # a matrix product whose entries would have a higher degree is named by fresh variables
MAX_ENTRIES = 200_000   # named product entries in one query (n^2 per named product): more is refused
KIND = "expr"


@dataclass(frozen=True)
class UserStatement(Statement):
    """A :class:`~numerics.smt.Statement` of a theorem over :mod:`theory.expr`: ``matrices`` (of A,
    B, C), ``assume`` (of "causal", "positive"), ``strict`` (the theorem says ``<``),
    ``conditions`` (side conditions of the encoding, in words: "every denominator nonzero") and
    ``relation`` (the sympy statement, for the re-checks)."""

    matrices: tuple = ()
    assume: tuple = ()
    strict: bool = False
    conditions: tuple = ()
    relation: Any = None

    def recheck(self, mats: dict) -> tuple[bool, Optional[bool]]:
        """:func:`recheck` (what :func:`numerics.smt.solve.recheck` asks a statement of its own)."""
        return recheck(self, mats)


def _q(c: Fraction) -> z3.ArithRef:
    return z3.RealVal(c.numerator) if c.denominator == 1 else z3.Q(c.numerator, c.denominator)


class _Encoder:
    """One query's constraints: matrix and scalar trees of a normal form -> z3 terms (see the module
    docstring); ``out`` collects the constraints, ``fresh`` numbers the auxiliary variables."""

    def __init__(self, n: int, leaves: dict, out: list):
        self.n, self.leaves, self.out = n, leaves, out
        self.fresh = count()
        self.named = 0

    # -- matrices: (entries, degree) --------------------------------------------------------------
    def matrix(self, m: tuple) -> tuple[list, int]:
        op, n = m[0], self.n
        if op == "leaf":
            return self.leaves[m[1]], 1
        if op == "eye":
            return [[z3.RealVal(int(i == k)) for k in range(n)] for i in range(n)], 0
        if op == "scale":
            M, d = self.matrix(m[2])
            return [[_q(m[1]) * x for x in row] for row in M], d
        if op == "madd":
            parts = [self.matrix(a) for a in m[1]]
            return ([[z3.Sum([P[i][k] for P, _ in parts]) for k in range(n)] for i in range(n)],
                    max(d for _, d in parts))
        if op == "mmul":
            out = self.matrix(m[1][0])
            for a in m[1][1:]:
                out = self.product(out, self.matrix(a))
            return out
        if op == "mpow":
            return self.power(self.matrix(m[1]), m[2])
        raise InvalidInput(f"statement: the matrix node {op!r} has no SMT encoding")   # not in theory.expr's forms

    def product(self, X: tuple, Y: tuple) -> tuple[list, int]:
        P, d = E.matmul(X[0], Y[0]), X[1] + Y[1]
        if d <= INLINE_DEGREE:
            return P, d
        return self.name(P), 1

    def power(self, X: tuple, k: int) -> tuple[list, int]:
        """X**k by squaring (k >= 1)."""
        out: Optional[tuple] = None
        base = X
        while True:
            if k & 1:
                out = base if out is None else self.product(out, base)
            k >>= 1
            if not k:
                return out
            base = self.product(base, base)

    def name(self, P: list) -> list:
        """Fresh variables equal to the entries of ``P`` (a product of row-stochastic matrices, so
        the implied facts, entries in [0, 1] and rows summing to 1, are added too)."""
        self.named += self.n * self.n
        if self.named > MAX_ENTRIES:
            raise InvalidInput(f"statement: its products need more than {MAX_ENTRIES} auxiliary entries at "
                               f"n = {self.n}; too large to encode (use a smaller --max-n or lower powers)")
        k = next(self.fresh)
        V = [[z3.Real(f"P{k}_{i}_{j}!0") for j in range(self.n)] for i in range(self.n)]
        for i in range(self.n):
            self.out += [V[i][j] == P[i][j] for j in range(self.n)]
            self.out += [V[i][j] >= 0 for j in range(self.n)]
            self.out.append(z3.Sum(V[i]) == 1)
        return V

    # -- scalars --------------------------------------------------------------------------------
    def var(self, prefix: str) -> z3.ArithRef:
        return z3.Real(f"{prefix}!{next(self.fresh)}")

    def scalar(self, s: tuple) -> z3.ArithRef:
        op = s[0]
        if op == "const":
            return _q(s[1])
        if op == "delta":
            M, _ = self.matrix(s[1])
            D, _ = E.delta_exact(M, "d", self.out)
            return D
        if op == "add":
            return z3.Sum([self.scalar(a) for a in s[1]])
        if op == "mul":
            return z3.Product([self.scalar(a) for a in s[1]])
        if op == "pow":
            base, k = self.atom(self.scalar(s[1])), s[2]
            p = z3.Product([base] * abs(k)) if abs(k) > 1 else base
            if k > 0:
                return p
            r = self.var("r")
            self.out.append(r * p == 1)          # r = 1 / base**|k|, and base != 0
            return r
        if op in ("max", "min"):
            args = [self.scalar(a) for a in s[1]]
            v = self.var("m")
            self.out += [v >= a if op == "max" else v <= a for a in args]
            self.out.append(z3.Or([v == a for a in args]))
            return v
        raise InvalidInput(f"statement: the scalar node {op!r} has no SMT encoding")

    def atom(self, t: z3.ArithRef) -> z3.ArithRef:
        """``t`` itself if it is a variable or a constant, else a fresh variable equal to it."""
        if z3.is_const(t) or z3.is_rational_value(t):
            return t
        v = self.var("s")
        self.out.append(v == t)
        return v


def _divides(t: Any) -> bool:
    if isinstance(t, tuple):
        if t and t[0] == "pow" and t[2] < 0:
            return True
        return any(_divides(a) for a in t)
    return False


def statement_for(theorem_id: str, statement: Any, assume: tuple = (), theorem: Optional[str] = None) -> UserStatement:
    """The :class:`UserStatement` of ``statement`` (a relation over :mod:`theory.expr`; InvalidInput if
    outside its vocabulary), keyed ``theorem_id``, with the hypotheses ``assume`` ("causal",
    "positive"); ``theorem``: the registry id it belongs to (default ``theorem_id``)."""
    from numerics.expr import compile_statement, exact_sides
    from theory.expr import check_assumptions, matrices_of, normal_form

    form = normal_form(statement)
    check_assumptions(tuple(assume), theorem_id)
    names = matrices_of(statement)
    if not names:
        raise InvalidInput(f"theorem {theorem_id}: its statement has no matrix (A, B or C); nothing to prove")
    assume = tuple(a for a in ("causal", "positive") if a in assume)
    compiled = compile_statement(statement)
    conditions = ("every denominator nonzero (the statement is undefined elsewhere)",) if (
        _divides(form.lhs) or _divides(form.rhs)) else ()

    def build(dims: tuple) -> list:
        n = dims[0]
        c: list = []
        mats = {}
        for name in names:
            M = E.stochastic(name, n, n, c)
            if "causal" in assume:
                E.lower_triangular(M, c)
            if "positive" in assume:
                c += [x > 0 for row in M for x in row]
            mats[name] = M
        enc = _Encoder(n, mats, c)
        lhs, rhs = enc.scalar(form.lhs), enc.scalar(form.rhs)
        c.append(lhs >= rhs if form.strict else lhs > rhs)
        return [("bound", c, mats)]

    def holds(m: dict) -> bool:
        rows = {k: [[Fraction(v) for v in row] for row in M] for k, M in m.items() if k in names}
        if not _assumed(rows, assume):
            return True                           # a hypothesis fails: nothing is claimed there
        try:
            lhs, rhs = exact_sides(compiled, rows)
        except InvalidInput:                      # undefined there (a denominator 0), or not stochastic
            return True
        return lhs < rhs if form.strict else lhs <= rhs

    text = str(statement) + "".join(f" [{a}]" for a in assume) + "".join(f" (where {w})" for w in conditions)
    return UserStatement(theorem_id, theorem or theorem_id, text, KIND, build, holds, matrices=names, assume=assume,
                         strict=form.strict, conditions=conditions, relation=statement)


def _assumed(rows: dict, assume: tuple) -> bool:
    for M in rows.values():
        if "causal" in assume and any(M[i][k] != 0 for i in range(len(M)) for k in range(i + 1, len(M))):
            return False
        if "positive" in assume and any(v <= 0 for row in M for v in row):
            return False
    return True


def sides(st: UserStatement, counterexample: dict) -> tuple[Fraction, Fraction]:
    """Both sides of the statement exactly on a stored counterexample (rows of "p/q" strings)."""
    from numerics.expr import compile_statement, exact_sides

    return exact_sides(compile_statement(st.relation), {k: counterexample[k] for k in st.matrices})


def recheck(st: UserStatement, mats: dict) -> tuple[bool, Optional[bool]]:
    """(the statement fails on ``mats`` exactly (``st.holds``); the suite's certified float path,
    :func:`numerics.expr.decide`, agrees, or None where an entry is not exactly a float)."""
    import numpy as np

    from numerics.expr import compile_statement
    from numerics.expr import decide as decide_floats

    confirmed = not st.holds(mats)
    rows = {k: mats[k] for k in st.matrices}
    if not all(Fraction(float(v)) == v for M in rows.values() for row in M for v in row):
        return confirmed, None
    if not _assumed(rows, st.assume):
        return confirmed, None
    arrays = {k: np.array([[float(v) for v in row] for row in M], dtype=np.float64)[None] for k, M in rows.items()}
    code = int(decide_floats(compile_statement(st.relation), arrays).codes[0])
    return confirmed, (code == 2) == confirmed


def decide(st: UserStatement, dims: tuple, timeout: float = 60.0, isolate: bool = True) -> Any:
    """:func:`numerics.smt.solve.decide` (z3, then cvc5 on the same SMT-LIB texts; a counterexample
    re-checked by the statement's own :meth:`UserStatement.recheck`)."""
    from numerics.smt import solve as S

    return S.decide(st, dims, timeout, isolate=isolate)
