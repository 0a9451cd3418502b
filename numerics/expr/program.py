"""A statement compiled once into a flat program of nodes (children before parents), the form every
evaluator of :mod:`numerics.expr` runs: no sympy is touched per instance.

Matrix nodes: ``leaf`` (a matrix symbol; ``role`` stochastic, logits or tokens), ``eye`` (the
identity, only where it is not folded into a ``lin``), ``lin`` (sum_i c_i X_i + c_I I, rational c),
``smul`` (a scalar node times a matrix node: a parameter-weighted term), ``mmul`` (a product of two
or more nodes, in order), ``mpow`` (a positive integer power), ``T`` (the transpose), ``softmax``
(row-wise; ``name`` "none" or "causal").
Scalar nodes: ``const``, ``param`` (``name``), ``size`` (``name`` "n" or "d"), ``delta`` (of a
matrix node), ``fn`` (another functional of :data:`theory.vocabulary.FUNCTIONALS`, ``name``), ``lin``
(c_0 + sum_i c_i s_i), ``mul`` (a product of two or more non-constant nodes), ``pow`` (nonzero
integer power), ``rpow`` (a rational non-integer power, the exponent in ``const``), ``exp``, ``log``,
``tanh``, ``abs``, ``max``, ``min``.
Identical subexpressions become one node (delta(A) used twice is computed once); sums and rational
multiples are flattened (``(I + A)/2`` is one ``lin`` node: A/2 + I/2), constants folded, identity
factors of products dropped.

Each node carries a static bound ``mag``: for a matrix the largest row sum of |entries| of its exact
value (1 for every stochastic one), for a scalar a bound on |value|; inf where no static bound
holds (logits, tokens, exp, a division): the float path then bounds magnitudes per instance.
``shape`` is a matrix node's (rows, cols) over the sizes "n" and "d".

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
SCALAR_FUNCTIONS = ("exp", "log", "tanh", "abs")


@dataclass(frozen=True)
class Node:
    """One step of a compiled statement (see the module docstring). ``args`` index earlier nodes;
    ``coefs`` pair with ``args`` in a ``lin``; ``const`` is a ``lin``'s constant term (scalar) or
    identity coefficient (matrix), a ``const`` node's value, or an ``rpow``'s exponent; ``name`` a
    leaf's, parameter's, size's or functional's name, or a softmax's mask; ``role`` a leaf's kind;
    ``affine`` (``delta`` only) is (identity coefficient, ((leaf, coefficient), ...)) when delta's
    argument is affine in stochastic leaves (no product), else None."""

    op: str
    matrix: bool
    args: tuple[int, ...] = ()
    coefs: tuple[Fraction, ...] = ()
    const: Fraction = ZERO
    name: str = ""
    power: int = 0
    mag: float = 1.0
    affine: Optional[tuple] = None
    role: str = ""
    shape: tuple = ()


@dataclass(frozen=True)
class Compiled:
    """A validated statement ``lhs REL rhs`` as a program: ``nodes`` in evaluation order, ``lhs``/``rhs``
    the indices of its two sides, REL ``<=``, ``<`` (``strict``) or ``=`` (``equal``); ``matrices`` the
    names of its matrix symbols (A, B, C first), ``roles`` each one's kind, ``params`` (name, lo, hi)
    of its parameters, ``sizes`` the sizes its matrices need ("n", and "d" with tokens); ``where``
    the hypotheses of ``where=`` as (lhs, rhs, REL) node triples; ``written`` the relation as the
    statement was written (``>=`` and ``>`` are compiled the other way round, ``reversed``:
    :meth:`as_written` turns the sides back)."""

    statement: Any
    strict: bool
    matrices: tuple[str, ...]
    nodes: tuple[Node, ...]
    lhs: int
    rhs: int
    equal: bool = False
    roles: tuple = ()
    params: tuple = ()
    sizes: tuple = ("n",)
    where: tuple = ()
    written: str = ""
    reversed: bool = False
    assume: tuple = ()

    @property
    def relation(self) -> str:
        return "=" if self.equal else "<" if self.strict else "<="

    def role(self, name: str) -> str:
        return dict(self.roles).get(name, "")

    def as_written(self, lhs: Any, rhs: Any) -> dict:
        """``{"lhs", "relation", "rhs"}``: this program's sides ``lhs`` (<=, < or =) ``rhs`` as the statement
        writes them (:func:`theory.expr.as_written`).

        >>> from theory.expr import A, delta
        >>> compile_statement(delta(A) >= delta(A**2)).as_written("1/4", "1/2")
        {'lhs': '1/2', 'relation': '>=', 'rhs': '1/4'}
        """
        from theory.expr import as_written

        return as_written(self.written or self.relation, lhs, rhs)

    @property
    def legacy(self) -> bool:
        """Every node is one the delta-only evaluators know (stochastic leaves, rational linear
        combinations, products, powers, delta, scalar arithmetic): the batched affine certificate and
        the integer rational evaluator apply."""
        return all(node.op in LEGACY_OPS and node.role in ("", "stochastic") for node in self.nodes)


LEGACY_OPS = frozenset({"leaf", "lin", "mmul", "mpow", "delta", "const", "mul", "pow", "max", "min"})


def up(x: Fraction) -> float:
    """A float >= the rational x (inf if it overflows)."""
    try:
        f = float(x)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _magnitude(x: Optional[Fraction]) -> float:
    return math.inf if x is None else up(x)


class _Builder:
    def __init__(self, roles: dict, params: dict) -> None:
        self.nodes: list[Node] = []
        self.memo: dict[tuple, int] = {}
        self.exact_mag: list[Optional[Fraction]] = []    # exact static bounds (None: unbounded)
        self.roles, self.params = roles, params

    def add(self, node: Node, mag: Optional[Fraction]) -> int:
        for c in (node.const,) + node.coefs:
            if abs(c) > BIGGEST:
                shown = str(c) if len(str(c)) <= 24 else f"{str(c)[:12]}... ({len(str(c))} characters)"
                raise InvalidInput(f"statement: constant {shown} is too large for the float evaluator (|c| > 2**1000)")
        key = (node.op, node.matrix, node.args, node.coefs, node.const, node.name, node.power)
        if key not in self.memo:
            self.memo[key] = len(self.nodes)
            self.nodes.append(Node(**{**node.__dict__, "mag": _magnitude(mag)}))
            self.exact_mag.append(mag)
        return self.memo[key]

    def shape(self, k: int) -> tuple:
        return self.nodes[k].shape

    # -- matrices: a tree -> (identity coefficient, {atom node: coefficient}) ---------------------
    def terms(self, t: tuple) -> tuple[Fraction, dict[int, Fraction]]:
        op = t[0]
        if op == "eye":
            return ONE, {}
        if op == "leaf":
            role = self.roles[t[1]]
            shape = ("n", "d") if role == "tokens" else ("n", "n")
            mag = ONE if role == "stochastic" else None
            return ZERO, {self.add(Node("leaf", True, name=t[1], role=role, shape=shape), mag): ONE}
        if op == "scale":
            e, d = self.terms(t[2])
            return t[1] * e, {k: t[1] * v for k, v in d.items()}
        if op == "pscale":
            c, dc = self.linear(t[1])
            e, d = self.terms(t[2])
            if not dc:                              # the coefficient folded to a constant
                return c * e, {k: c * v for k, v in d.items()}
            coef, body = self.scalar(t[1]), self.matrix(t[2])
            mag = self.product_mag([coef, body])
            return ZERO, {self.add(Node("smul", True, args=(coef, body), shape=self.shape(body)), mag): ONE}
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
            mag = self.product_mag(factors)
            shape = (self.shape(factors[0])[0], self.shape(factors[-1])[1])
            return ZERO, {self.add(Node("mmul", True, args=tuple(factors), shape=shape), mag): c}
        if op == "mpow":
            e, d = self.terms(t[1])
            if not d:
                return e ** t[2], {}
            base = self.matrix(t[1])
            m = self.exact_mag[base]
            mag = None if m is None else m ** t[2]
            return ZERO, {self.add(Node("mpow", True, args=(base,), power=t[2], shape=self.shape(base)), mag): ONE}
        if op == "T":
            e, d = self.terms(t[1])
            if not d:                           # c * I is its own transpose
                return e, {}
            inner = self.matrix(t[1])
            if self.nodes[inner].op == "T":
                return ZERO, {self.nodes[inner].args[0]: ONE}
            rows, cols = self.shape(inner)
            return ZERO, {self.add(Node("T", True, args=(inner,), shape=(cols, rows)), None): ONE}
        if op == "softmax":
            inner = self.matrix(t[1])
            return ZERO, {self.add(Node("softmax", True, args=(inner,), name=t[2], shape=self.shape(inner)), ONE): ONE}
        raise AssertionError(f"not a matrix term: {t!r}")   # theory.forms produced it

    def matrix(self, t: tuple) -> int:
        e, d = self.terms(t)
        if e == 0 and len(d) == 1 and next(iter(d.values())) == 1:
            return next(iter(d))
        if not d:
            if e == 1:
                return self.add(Node("eye", True, shape=("n", "n")), ONE)
            return self.add(Node("lin", True, const=e, shape=("n", "n")), abs(e))
        args = tuple(sorted(d))
        mags = [self.exact_mag[a] for a in args]
        mag = None if any(m is None for m in mags) else abs(e) + sum((abs(d[a]) * m for a, m in zip(args, mags)), ZERO)
        return self.add(Node("lin", True, args=args, coefs=tuple(d[a] for a in args), const=e,
                             shape=self.shape(args[0])), mag)

    def affine(self, t: tuple) -> Optional[tuple]:
        e, d = self.terms(t)
        if all(self.nodes[a].op == "leaf" and self.nodes[a].role == "stochastic" for a in d):
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
            return ZERO, {self.add(node, ONE): ONE}
        if op == "fn":
            arg = self.matrix(t[2])
            return ZERO, {self.add(Node("fn", False, args=(arg,), name=t[1]), self.fn_mag(t[1], arg)): ONE}
        if op == "param":
            lo, hi = self.params[t[1]]
            if lo == hi:
                return lo, {}
            return ZERO, {self.add(Node("param", False, name=t[1]), max(abs(lo), abs(hi))): ONE}
        if op == "size":
            return ZERO, {self.add(Node("size", False, name=t[1]), None): ONE}
        if op == "rpow":
            base = self.scalar(t[1])
            m = self.exact_mag[base]
            mag = None if (t[2] < 0 or m is None) else max(m, ONE)
            return ZERO, {self.add(Node("rpow", False, args=(base,), const=t[2]), mag): ONE}
        if op in SCALAR_FUNCTIONS:
            arg = self.scalar(t[1])
            m = self.exact_mag[arg]
            mag = {"tanh": ONE, "abs": m}.get(op)
            return ZERO, {self.add(Node(op, False, args=(arg,)), mag): ONE}
        raise AssertionError(f"not a scalar term: {t!r}")

    def fn_mag(self, name: str, arg: int) -> Optional[Fraction]:
        """A static bound on |functional| from its argument's (None: none)."""
        m = self.exact_mag[arg]
        if name == "slem":
            return ONE
        if m is None:
            return None
        return {"entry_min": m, "entry_max": m, "ptp": 2 * m, "spread": 2 * m, "norm_inf": m}.get(name)

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


def compile_statement(statement: Any, assume: Any = (), where: Any = ()) -> Compiled:
    """Validate ``statement`` (:func:`theory.expr.validate`: InvalidInput naming what is outside the
    vocabulary) and compile it once into a :class:`Compiled` program; ``where``: relations over the
    same vocabulary that an instance must satisfy (else it is not-applicable)."""
    form = normal_form(statement, assume)
    forms = [normal_form(w, assume) for w in where]
    roles, params = dict(form.symbols), {name: (lo, hi) for name, lo, hi in form.params}
    for w in forms:
        for name, role in w.symbols:
            if roles.setdefault(name, role) != role:
                raise InvalidInput(f"statement: {name} is a {roles[name]} matrix in the statement and a {role} one "
                                   "in where=")
        for name, lo, hi in w.params:
            if params.setdefault(name, (lo, hi)) != (lo, hi):
                raise InvalidInput(f"statement: parameter {name} has two intervals (the statement's and where='s)")
    b = _Builder(roles, params)
    lhs, rhs = b.scalar(form.lhs), b.scalar(form.rhs)
    hyps = tuple((b.scalar(w.lhs), b.scalar(w.rhs), w.op) for w in forms)
    names = {node.name for node in b.nodes if node.op == "leaf"}
    order = [name for name, _ in form.symbols] + sorted(set(roles) - {name for name, _ in form.symbols})
    matrices = tuple(m for m in order if m in names)
    if not matrices:
        raise InvalidInput(f"statement: {form.relation} uses no matrix (once simplified): there is no instance to "
                           "check it on")
    used = {node.name for node in b.nodes if node.op == "param"}
    sizes = ("n", "d") if any(roles[m] == "tokens" for m in matrices) else ("n",)
    return Compiled(statement=form.relation, strict=form.strict, matrices=matrices, nodes=tuple(b.nodes),
                    lhs=lhs, rhs=rhs, equal=form.equal, roles=tuple((m, roles[m]) for m in matrices),
                    params=tuple((k, *params[k]) for k in sorted(used)), sizes=sizes, where=hyps,
                    written=written_relation(statement), reversed=form.reversed, assume=tuple(assume))


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
