"""A compiled statement (:class:`numerics.expr.program.Compiled`) as z3 constraints at one size.

:class:`Encoder` walks the program's nodes in order (children first, each shared node encoded once)
and gives every node a z3 term over exact reals; the constraints it needs go to ``out``. The
encoding is exact: every auxiliary variable is pinned to the value it names, so the constraints have
a solution exactly where the statement's symbols take values on which every node is defined
(nonlinear real arithmetic, ``QF_NRA``):

* the symbols: a stochastic matrix's entries are real variables, nonnegative, rows summing to 1
  (``causal``: 0 above the diagonal; ``positive``: every entry > 0; ``doubly-stochastic``: columns
  summing to 1; ``symmetric``: symmetric, so doubly stochastic too); a logits matrix's (n x n) and a
  tokens matrix's (n x d) entries are free real variables (``symmetric`` makes a logits matrix
  symmetric); a parameter is a real variable in its closed interval; the sizes n and d are the
  constants of the query;
* matrix terms: combinations, parameter-weighted ones (the weight named by a variable), products,
  powers (by squaring) and the transpose are polynomials in the entries; a product whose entries
  would have degree above :data:`INLINE_DEGREE` is named by fresh variables ``P == X Y`` (with
  entries in [0, 1] and rows summing to 1 where every factor is row-stochastic);
* |x| is ``If(x >= 0, x, -x)``; a maximum (delta over pairs of rows, spread over pairs of entries of
  a column, entry_max, norm_inf over rows, norm_1 over columns, Max) is a variable ``v`` with
  ``v >= t`` for every term and ``v == t`` for one of them; a minimum (entry_min, the column minima of
  col_min_sum, Min) likewise; ptp is entry_max - entry_min, trace the diagonal's sum;
* a division ``s**-k`` is a variable ``r`` with ``r * s**k == 1`` (so s != 0); a root ``x**(p/q)``
  (sqrt, norm_fro) is ``y**p`` (``1/y**|p|`` for p < 0) with ``y >= 0`` and ``y**q == x`` (so x >= 0,
  and x != 0 for p < 0): the statement is undefined where a denominator is 0 or a root is taken of
  a negative number, and the query ranges over the rest, as the evaluators' not-applicable does;
* exp, log, tanh, softmax (transcendental) and slem (eigenvalues) have no encoding here: the caller
  (:func:`numerics.smt.user.statement_for`) refuses them first.

>>> from numerics.expr import compile_statement
>>> from theory.expr import A, I, delta, parameter
>>> alpha = parameter("alpha", 0, 1)
>>> c = compile_statement(delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A))
>>> out = []
>>> enc = Encoder(c, 2, None, (), out)
>>> sorted(enc.symbols), len(out) > 0
(['A', 'alpha'], True)
"""
from __future__ import annotations

from fractions import Fraction
from itertools import count
from typing import Any, Optional

import z3

from numerics.smt import encode as E
from theory.errors import InvalidInput

INLINE_DEGREE = 4       # a matrix product whose entries would have a higher degree is named by fresh variables
MAX_ENTRIES = 200_000   # named product entries in one query: more is refused
STOCHASTIC = ("", "stochastic")
ONE_Q = z3.RealVal(1)


def rational(c: Fraction) -> z3.ArithRef:
    return z3.RealVal(c.numerator) if c.denominator == 1 else z3.Q(c.numerator, c.denominator)


def known(t: Any) -> Optional[Fraction]:
    """The rational value of a z3 numeral, else None."""
    return t.as_fraction() if z3.is_rational_value(t) else None


def times(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    """a * b, with the products by a numeral 0 or 1 folded (smaller text, the same value)."""
    for x, y in ((a, b), (b, a)):
        v = known(x)
        if v == 0:
            return z3.RealVal(0)
        if v == 1:
            return y
    return a * b


def plus(terms: list) -> z3.ArithRef:
    """The sum of ``terms`` without its numeral zeros."""
    terms = [t for t in terms if known(t) != 0]
    if not terms:
        return z3.RealVal(0)
    return terms[0] if len(terms) == 1 else z3.Sum(terms)


def var_name(name: str, taken: set) -> str:
    """An SMT-LIB simple symbol for the symbol ``name`` (itself when plain ASCII and not taken)."""
    base = name if name.isascii() else "sym"
    out, k = base, 0
    while out in taken:
        k += 1
        out = f"{base}{k}"
    taken.add(out)
    return out


class Encoder:
    """The z3 terms of every node of ``compiled`` at size ``n`` (tokens of width ``d``) under the
    hypotheses ``assume``; constraints appended to ``out``. ``symbols``: name -> the symbol's
    variables (a matrix's rows, a parameter's variable), the model's names to read back;
    ``value``: the terms by node index."""

    def __init__(self, compiled: Any, n: int, d: Optional[int], assume: tuple, out: list):
        self.c, self.n, self.d, self.assume, self.out = compiled, n, d, tuple(assume), out
        self.fresh = count()
        self.named = 0
        self.symbols: dict = {}
        taken: set = set()
        for name in compiled.matrices:
            self.symbols[name] = self.leaf(name, compiled.role(name), var_name(name, taken))
        for name in compiled.matrices:
            M = self.symbols[name]
            taken |= {str(x) for row in M for x in row}
        for name, lo, hi in compiled.params:
            p = z3.Real(var_name(name, taken))
            out += [p >= rational(lo), p <= rational(hi)]
            self.symbols[name] = p
        self.value: list = []
        self.degree: list = []
        self.stochastic: list = []
        for node in compiled.nodes:
            v, deg, st = self.matrix(node) if node.matrix else (self.scalar(node), 0, False)
            self.value.append(v)
            self.degree.append(deg)
            self.stochastic.append(st)

    # -- the symbols ------------------------------------------------------------------------------
    def leaf(self, name: str, role: str, var: str) -> list:
        n, out = self.n, self.out
        if role in STOCHASTIC:
            M = E.stochastic(var, n, n, out)
            if "causal" in self.assume:
                E.lower_triangular(M, out)
            if "positive" in self.assume:
                out += [x > 0 for row in M for x in row]
            if {"doubly-stochastic", "symmetric"} & set(self.assume):
                out += [z3.Sum([M[i][k] for i in range(n)]) == 1 for k in range(n)]
            if "symmetric" in self.assume:
                out += [M[i][k] == M[k][i] for i in range(n) for k in range(i)]
            return M
        cols = self.d if role == "tokens" else n
        M = [[z3.Real(f"{var}_{i}_{k}") for k in range(cols)] for i in range(n)]
        if role == "logits" and "symmetric" in self.assume:
            out += [M[i][k] == M[k][i] for i in range(n) for k in range(i)]
        return M

    # -- matrices: (entries, degree of the entries, row-stochastic by construction) ---------------
    def matrix(self, node: Any) -> tuple[list, int, bool]:
        op, args, val, n = node.op, node.args, self.value, self.n
        if op == "leaf":
            return self.symbols[node.name], 1, self.c.role(node.name) in STOCHASTIC
        if op == "eye":
            return self.eye(ONE_Q), 0, True
        if op == "lin":
            if not args:
                return self.eye(rational(node.const)), 0, node.const == 1
            rows, cols = len(val[args[0]]), len(val[args[0]][0])
            M = [[plus(([rational(node.const)] if i == k else [])
                       + [times(rational(c), val[a][i][k]) for a, c in zip(args, node.coefs)])
                  for k in range(cols)] for i in range(rows)]
            convex = (all(self.stochastic[a] for a in args) and node.const >= 0 and all(c >= 0 for c in node.coefs)
                      and node.const + sum(node.coefs) == 1)
            return M, max(self.degree[a] for a in args), convex
        if op == "smul":
            s, (a,) = self.atom(val[args[0]]), args[1:]
            return [[times(s, x) for x in row] for row in val[a]], self.degree[a] + 1, False
        if op == "mmul":
            out = (val[args[0]], self.degree[args[0]], self.stochastic[args[0]])
            for a in args[1:]:
                out = self.product(out, (val[a], self.degree[a], self.stochastic[a]))
            return out
        if op == "mpow":
            return self.power((val[args[0]], self.degree[args[0]], self.stochastic[args[0]]), node.power)
        if op == "T":
            X = val[args[0]]
            return [[X[i][k] for i in range(len(X))] for k in range(len(X[0]))], self.degree[args[0]], False
        raise InvalidInput(f"statement: the matrix term {op!r} has no SMT encoding")   # refused by statement_for

    def eye(self, c: z3.ArithRef) -> list:
        return [[c if i == k else z3.RealVal(0) for k in range(self.n)] for i in range(self.n)]

    def product(self, X: tuple, Y: tuple) -> tuple[list, int, bool]:
        P, deg, st = E.matmul(X[0], Y[0]), X[1] + Y[1], X[2] and Y[2]
        if deg <= INLINE_DEGREE:
            return P, deg, st
        return self.name(P, st), 1, st

    def power(self, X: tuple, k: int) -> tuple[list, int, bool]:
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

    def name(self, P: list, stochastic: bool) -> list:
        """Fresh variables equal to the entries of ``P`` (a row-stochastic product: entries >= 0 and
        rows summing to 1 too, facts implied by the factors)."""
        rows, cols = len(P), len(P[0])
        self.named += rows * cols
        if self.named > MAX_ENTRIES:
            raise InvalidInput(f"statement: its products need more than {MAX_ENTRIES} auxiliary entries at "
                               f"n = {self.n}; too large to encode (use a smaller --max-n or lower powers)")
        k = next(self.fresh)
        V = [[z3.Real(f"P{k}_{i}_{j}!0") for j in range(cols)] for i in range(rows)]
        for i in range(rows):
            self.out += [V[i][j] == P[i][j] for j in range(cols)]
            if stochastic:
                self.out += [V[i][j] >= 0 for j in range(cols)]
                self.out.append(z3.Sum(V[i]) == 1)
        return V

    # -- scalars ----------------------------------------------------------------------------------
    def var(self, prefix: str) -> z3.ArithRef:
        return z3.Real(f"{prefix}!{next(self.fresh)}")

    def atom(self, t: z3.ArithRef) -> z3.ArithRef:
        """``t`` itself if it is a variable or a constant, else a fresh variable equal to it."""
        if z3.is_const(t) or z3.is_rational_value(t):
            return t
        v = self.var("s")
        self.out.append(v == t)
        return v

    def absolute(self, t: z3.ArithRef) -> z3.ArithRef:
        v = known(t)
        if v is not None:
            return rational(abs(v))
        t = self.atom(t)
        return z3.If(t >= 0, t, -t)

    def extreme(self, terms: list, largest: bool) -> z3.ArithRef:
        """A variable equal to the largest (``largest``) or smallest of ``terms``."""
        unique: list = []
        for t in terms:                           # the same term once (z3's structural equality)
            if not any(t.eq(u) for u in unique):
                unique.append(t)
        terms = unique
        if len(terms) == 1:
            return terms[0]
        terms = [self.atom(t) for t in terms]
        v = self.var("m")
        self.out += [v >= t if largest else v <= t for t in terms]
        self.out.append(z3.Or([v == t for t in terms]))
        return v

    def root(self, x: z3.ArithRef, q: int) -> z3.ArithRef:
        """The variable y >= 0 with y**q == x (x >= 0 too)."""
        y = self.var("y")
        self.out += [y >= 0, x >= 0, z3.Product([y] * q) == x if q > 1 else y == x]
        return y

    def inverse_power(self, base: z3.ArithRef, k: int) -> z3.ArithRef:
        """1 / base**k (k >= 1): a variable r with r * base**k == 1 (so base != 0)."""
        r = self.var("r")
        self.out.append(r * (z3.Product([base] * k) if k > 1 else base) == 1)
        return r

    def scalar(self, node: Any) -> z3.ArithRef:
        op, args, val = node.op, node.args, self.value
        if op == "const":
            return rational(node.const)
        if op == "param":
            return self.symbols[node.name]
        if op == "size":
            return z3.RealVal(self.n if node.name == "n" else self.d)
        if op == "delta":                      # max over pairs of rows of half their l1 distance
            M = val[args[0]]
            pairs = [z3.Sum([self.absolute(x - y) for x, y in zip(M[i], M[j])]) / 2 for i, j in E.pairs(len(M))]
            return self.extreme(pairs, True) if pairs else z3.RealVal(0)
        if op == "fn":
            return self.functional(node.name, val[args[0]])
        if op == "lin":
            return plus([rational(node.const)] + [times(rational(c), val[a]) for a, c in zip(args, node.coefs)])
        if op == "mul":
            return z3.Product([val[a] for a in args])
        if op == "pow":
            base, k = self.atom(val[args[0]]), node.power
            if known(base) is not None:        # a size's power: a rational (never 0)
                return rational(known(base) ** k)
            if k < 0:
                return self.inverse_power(base, -k)
            return z3.Product([base] * k) if k > 1 else base
        if op == "rpow":
            e = node.const
            y = self.root(self.atom(val[args[0]]), e.denominator)
            if e.numerator < 0:
                return self.inverse_power(y, -e.numerator)
            return z3.Product([y] * e.numerator) if e.numerator > 1 else y
        if op == "abs":
            return self.absolute(val[args[0]])
        if op in ("max", "min"):
            return self.extreme([val[a] for a in args], op == "max")
        raise InvalidInput(f"statement: {op} has no SMT encoding")     # refused by statement_for

    def functional(self, name: str, M: list) -> z3.ArithRef:
        rows, cols = len(M), len(M[0])
        entries = [x for row in M for x in row]
        columns = [[M[i][k] for i in range(rows)] for k in range(cols)]
        if name == "spread":
            terms = [self.absolute(col[i] - col[j]) for col in columns for i in range(rows) for j in range(i + 1, rows)]
            return self.extreme(terms, True) if terms else z3.RealVal(0)
        if name == "entry_max":
            return self.extreme(entries, True)
        if name == "entry_min":
            return self.extreme(entries, False)
        if name == "ptp":
            return self.extreme(entries, True) - self.extreme(entries, False)
        if name == "col_min_sum":
            return z3.Sum([self.extreme(col, False) for col in columns])
        if name == "norm_inf":
            return self.extreme([plus([self.absolute(x) for x in row]) for row in M], True)
        if name == "norm_1":
            return self.extreme([plus([self.absolute(x) for x in col]) for col in columns], True)
        if name == "trace":
            return plus([M[i][i] for i in range(rows)])
        if name == "norm_fro":
            return self.root(plus([x * x for x in entries]), 2)
        raise InvalidInput(f"statement: {name} has no SMT encoding")     # refused by statement_for

