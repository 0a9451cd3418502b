"""A statement over :mod:`theory.vocabulary` read into its normal form: typed trees of tuples that
numerics/ compiles (:mod:`numerics.expr`), or one line (:class:`~theory.errors.InvalidInput`)
naming what is outside the vocabulary and what to write instead.

Matrix trees (each has a shape (rows, cols) over the sizes "n" and "d"):

    ("leaf", name)            a matrix symbol (its kind in :attr:`NormalForm.symbols`)
    ("eye",)                  the identity
    ("scale", c, m)           a rational multiple (c a Fraction)
    ("pscale", s, m)          a multiple by a scalar tree s over parameters, n, d and rationals
    ("madd", (m, ...))        a sum
    ("mmul", (m, ...))        a product, in order
    ("mpow", m, k)            a positive integer power, 1 <= k <= MAX_POWER
    ("T", m)                  the transpose
    ("softmax", m, mask)      row-wise softmax, mask "none" or "causal"

Scalar trees:

    ("const", Fraction) | ("param", name) | ("size", "n" or "d")
    ("delta", m) | ("fn", name, m)      a functional of :data:`theory.vocabulary.FUNCTIONALS`
    ("add", (s, ...)) | ("mul", (s, ...)) | ("max", (s, ...)) | ("min", (s, ...))
    ("pow", s, k) with k a nonzero integer | ("rpow", s, q) with q a non-integer Fraction (sqrt: 1/2)
    ("exp", s) | ("log", s) | ("tanh", s) | ("abs", s)

Which arguments a functional takes is checked here: ``delta`` and ``slem`` a matrix that is
row-stochastic *by construction* (stochastic symbols, the identity, softmax, products and powers of
such, convex combinations whose coefficients sum to 1 identically and are nonnegative over the
parameters' intervals, the transpose of a doubly stochastic one), ``trace`` a square one, the rest
any real matrix.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement

from theory import vocabulary as V
from theory.errors import InvalidInput

MAX_POWER = 64           # largest |exponent| of a matrix or scalar power (each costs a product per instance)
MAX_ROOT = 64            # largest denominator of a rational power (x**(1/2) is sqrt)
LEGACY = ("A", "B", "C")  # plain sympy MatrixSymbols of these names (n x n) are stochastic
WHAT = ("A, B, C and stochastic('D') (row-stochastic), logits('L') (real n x n), tokens('X') (real n x d), I, "
        "parameter('alpha', lo, hi), n, d; products, positive powers, sums, scalar multiples, M.T, softmax(M); "
        "delta, spread, entry_min, entry_max, ptp, col_min_sum, slem, norm_inf, norm_1, norm_fro, trace; exp, log, "
        "tanh, sqrt, Abs, Max, Min, rational constants")


def fail(what: str) -> InvalidInput:
    return InvalidInput(f"statement: {what}")


@dataclass(frozen=True)
class Shape:
    """What a matrix tree is: its size (rows, cols) over "n" and "d"; ``rowsum`` and ``colsum``, the
    common row and column sums of every exact value where they are known by construction (sympy
    expressions over the parameters, None where not); ``nonneg``, every entry nonnegative by
    construction."""

    rows: str
    cols: str
    rowsum: Any = None
    colsum: Any = None
    nonneg: bool = False

    @property
    def square(self) -> bool:
        return self.rows == self.cols

    @property
    def stochastic(self) -> bool:
        return self.square and self.nonneg and _is_one(self.rowsum)

    @property
    def doubly(self) -> bool:
        return self.stochastic and _is_one(self.colsum)


def _is_one(x: Any) -> bool:
    return x is not None and sp.simplify(x - 1) == 0


def _times(x: Any, y: Any) -> Any:
    return None if x is None or y is None else x * y


@dataclass(frozen=True)
class NormalForm:
    """A validated statement as ``lhs REL rhs``, REL ``<=``, ``<`` (``strict``) or ``=`` (``equal``);
    ``>=`` and ``>`` are read the other way round (``reversed``; ``written`` is the relation as the
    user wrote it, ``relation`` the oriented one). ``symbols``: (name, kind) of every matrix symbol,
    A, B, C first; ``params``: (name, lo, hi); ``sizes``: which of "n", "d" the matrices need."""

    lhs: tuple
    rhs: tuple
    strict: bool
    relation: Any
    equal: bool = False
    written: Any = None
    reversed: bool = False
    symbols: tuple = ()
    params: tuple = ()
    sizes: tuple = ("n",)
    assume: tuple = ()

    @property
    def op(self) -> str:
        return "=" if self.equal else "<" if self.strict else "<="

    @property
    def matrices(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.symbols)


@dataclass
class _Reader:
    assume: tuple = ()
    symbols: dict = field(default_factory=dict)   # name -> kind
    params: dict = field(default_factory=dict)    # name -> (lo, hi)

    # -- matrices -------------------------------------------------------------------------------
    def matrix(self, e: Any) -> tuple[tuple, Shape]:
        if isinstance(e, sp.MatrixSymbol):
            return self.leaf(e)
        if isinstance(e, sp.Identity):
            if e.shape != (V.n, V.n):
                raise fail(f"identity {e} is {e.shape[0]} x {e.shape[1]}; use theory.expr.I (n x n)")
            return ("eye",), Shape("n", "n", sp.Integer(1), sp.Integer(1), True)
        if isinstance(e, V.softmax):
            t, s = self.matrix(e.args[0])
            if e.mask == "causal" and not s.square:
                raise fail(f"{e}: a causal mask needs a square argument, {e.args[0]} is {s.rows} x {s.cols}")
            return ("softmax", t, e.mask), Shape(s.rows, s.cols, sp.Integer(1), None, True)
        if isinstance(e, sp.Transpose):
            t, s = self.matrix(e.args[0])
            return ("T", t), Shape(s.cols, s.rows, s.colsum, s.rowsum, s.nonneg)
        if isinstance(e, sp.MatAdd):
            return self.combination(e)
        if isinstance(e, sp.MatMul):
            coef, factors = self.split(e)
            trees = [self.matrix(a) for a in factors]
            for (_, s1), (_, s2), a, b in zip(trees, trees[1:], factors, factors[1:]):
                if s1.cols != s2.rows:
                    raise fail(f"{e}: {a} is {s1.rows} x {s1.cols} and {b} is {s2.rows} x {s2.cols}; "
                               "the product is not defined")
            shapes = [s for _, s in trees]
            body = trees[0][0] if len(trees) == 1 else ("mmul", tuple(t for t, _ in trees))
            rowsum, colsum = sp.Integer(1), sp.Integer(1)
            for sh in shapes:
                rowsum, colsum = _times(rowsum, sh.rowsum), _times(colsum, sh.colsum)
            shape = Shape(shapes[0].rows, shapes[-1].cols, rowsum, colsum, all(sh.nonneg for sh in shapes))
            if coef == 1:
                return body, shape
            return self.scaled(coef, body, e), self.times(coef, shape)
        if isinstance(e, sp.MatPow):
            t, s = self.matrix(e.args[0])
            if not s.square:
                raise fail(f"{e}: a power needs a square matrix, {e.args[0]} is {s.rows} x {s.cols}")
            k = exponent(e.args[1], e.args[0], True)
            power = (lambda x: None if x is None else x ** k)
            return ("mpow", t, k), Shape(s.rows, s.cols, power(s.rowsum), power(s.colsum), s.nonneg)
        kind = type(e).__name__
        shown = {"Inverse": f"{e.args[0]}**(-1)"}.get(kind, str(e)) if e.args else str(e)
        hint = {"Inverse": "; the inverse is not in the vocabulary",
                "Determinant": "; the determinant is not in the vocabulary"}.get(kind, "")
        raise fail(f"{shown} ({kind}) is not a matrix term of the vocabulary{hint} ({WHAT})")

    def leaf(self, e: sp.MatrixSymbol) -> tuple[tuple, Shape]:
        name = str(e.name)
        if isinstance(e, (V.Stochastic, V.Logits, V.Tokens)):
            kind = e.role
        elif name in LEGACY:
            kind = "stochastic"
        else:
            raise fail(f"matrix {name} is a plain sympy MatrixSymbol; declare what it is: {name} = "
                       f"stochastic({name!r}), logits({name!r}) or tokens({name!r}) (theory.expr)")
        want = (V.n, V.d) if kind == "tokens" else (V.n, V.n)
        if e.shape != want:
            raise fail(f"matrix {name} is {e.shape[0]} x {e.shape[1]}; a {kind} matrix is {want[0]} x {want[1]} with "
                       "the sizes theory.expr.n and d")
        if self.symbols.setdefault(name, kind) != kind:
            raise fail(f"{name} is used as a {self.symbols[name]} matrix and as a {kind} one; give them two names")
        if kind != "stochastic":
            return ("leaf", name), Shape("n", "d" if kind == "tokens" else "n")
        doubly = bool({"doubly-stochastic", "symmetric"} & set(self.assume))
        return ("leaf", name), Shape("n", "n", sp.Integer(1), sp.Integer(1) if doubly else None, True)

    def split(self, e: sp.MatMul) -> tuple[Any, list]:
        scalars = [a for a in e.args if not isinstance(a, sp.MatrixExpr)]
        return sp.Mul(*scalars), [a for a in e.args if isinstance(a, sp.MatrixExpr)]

    def coefficient(self, c: Any, where: Any) -> tuple:
        if c.has(*FUNCTION_CLASSES) or any(isinstance(a, sp.MatrixExpr) for a in sp.preorder_traversal(c)):
            raise fail(f"the coefficient {c} of {where} depends on a matrix; a matrix's coefficient is a "
                       "rational, a parameter or an expression in them (e.g. alpha * I + (1 - alpha) * A)")
        return self.scalar(c)

    def scaled(self, c: Any, body: tuple, where: Any) -> tuple:
        t = self.coefficient(c, where)
        if t[0] == "const":
            return ("scale", t[1], body)
        return ("pscale", t, body)

    def times(self, c: Any, s: Shape) -> Shape:
        """The shape of c * M for a scalar coefficient c (over parameters and sizes)."""
        return Shape(s.rows, s.cols, _times(c, s.rowsum), _times(c, s.colsum), s.nonneg and nonnegative(c, self.params))

    def combination(self, e: sp.MatAdd) -> tuple[tuple, Shape]:
        terms = []
        for a in e.args:
            if isinstance(a, sp.MatMul):
                c, factors = self.split(a)
                body = factors[0] if len(factors) == 1 else sp.MatMul(*factors)
            else:
                c, body = sp.Integer(1), a
            t, s = self.matrix(body)
            terms.append((c, t, s if c == 1 else self.times(c, s), a))
        first = terms[0][2]
        for c, t, s, a in terms[1:]:
            if (s.rows, s.cols) != (first.rows, first.cols):
                raise fail(f"{e}: {terms[0][3]} is {first.rows} x {first.cols} and {a} is {s.rows} x {s.cols}; "
                           "a sum needs one shape")
        trees = tuple(t if c == 1 else self.scaled(c, t, e) for c, t, _, _ in terms)
        sums = [s.rowsum for _, _, s, _ in terms]
        cols = [s.colsum for _, _, s, _ in terms]
        return ("madd", trees), Shape(first.rows, first.cols, None if None in sums else sp.Add(*sums),
                                      None if None in cols else sp.Add(*cols), all(s.nonneg for _, _, s, _ in terms))

    # -- scalars --------------------------------------------------------------------------------
    def scalar(self, e: Any) -> tuple:
        if isinstance(e, sp.MatrixExpr):
            raise fail(f"the matrix {e} stands where a number is expected; take a functional of it, e.g. "
                       f"delta({e}) or norm_inf({e})")
        if isinstance(e, V.Parameter):
            lo, hi = e.interval
            if self.params.setdefault(e.name, (lo, hi)) != (lo, hi):
                raise fail(f"parameter {e.name} is declared over two intervals")
            return ("param", e.name)
        if isinstance(e, MatrixElement):
            raise fail(f"{e}: an entry by index is not in the vocabulary (the size n varies); write "
                       f"entry_min({e.args[0]}), entry_max({e.args[0]}) or trace({e.args[0]})")
        if e == V.n or e == V.d:
            return ("size", str(e))
        if isinstance(e, sp.Symbol):
            raise fail(f"free symbol {e} occurs in the bound; declare a scalar with {e} = parameter({str(e)!r}, lo, hi) "
                       "(theory.expr), or use the sizes n and d")
        if is_delta(e) or isinstance(e, FUNCTION_CLASSES) or isinstance(e, sp.Trace):
            return self.functional(e)
        if e is sp.E:
            return ("exp", ("const", Fraction(1)))
        if isinstance(e, sp.Rational):
            return ("const", Fraction(int(e.p), int(e.q)))
        if isinstance(e, sp.Float):
            raise fail(f"float constant {e}; write constants exactly, e.g. Rational(1, 2) or S(1)/2")
        if isinstance(e, sp.Add):
            return ("add", tuple(self.scalar(a) for a in e.args))
        if isinstance(e, sp.Mul):
            return ("mul", tuple(self.scalar(a) for a in e.args))
        if isinstance(e, sp.Pow):
            k = e.args[1]
            if isinstance(k, sp.Integer):
                return ("pow", self.scalar(e.args[0]), exponent(k, e.args[0], False))
            if isinstance(k, sp.Rational) and abs(k.p) <= MAX_POWER and k.q <= MAX_ROOT:
                return ("rpow", self.scalar(e.args[0]), Fraction(int(k.p), int(k.q)))
            raise fail(f"power {e.args[0]}**({k}): the exponent must be an integer or a rational p/q with "
                       f"|p| <= {MAX_POWER}, q <= {MAX_ROOT} (e.g. sqrt(x))")
        for cls, op in ((sp.exp, "exp"), (sp.log, "log"), (sp.tanh, "tanh"), (sp.Abs, "abs")):
            if isinstance(e, cls):
                if len(e.args) != 1:
                    raise fail(f"{e}: {op} takes one argument")
                return (op, self.scalar(e.args[0]))
        if isinstance(e, (sp.Max, sp.Min)):
            return ("max" if isinstance(e, sp.Max) else "min", tuple(self.scalar(a) for a in e.args))
        if getattr(e, "is_number", False):
            raise fail(f"constant {e} is not in the vocabulary; exact constants are rationals and what exp, log, "
                       "tanh, sqrt make of them")
        name = getattr(e.func, "__name__", type(e).__name__)
        raise fail(f"{e}: {name} is not in the vocabulary ({WHAT})")

    def functional(self, e: Any) -> tuple:
        name = "trace" if isinstance(e, sp.Trace) else "delta" if is_delta(e) else type(e).__name__
        if len(e.args) != 1 or not isinstance(e.args[0], sp.MatrixExpr):
            raise fail(f"{e}: {name} takes one matrix term")
        t, s = self.matrix(e.args[0])
        need = V.FUNCTIONALS[name][1]
        if need == "square" and not s.square:
            raise fail(f"{e}: {name} needs a square matrix, {e.args[0]} is {s.rows} x {s.cols}")
        if need == "stochastic" and not s.stochastic:
            raise fail(f"{e}: {name} is taken of a row-stochastic matrix and {e.args[0]} is not one by "
                       f"construction ({why_not_stochastic(e.args[0], s)})")
        return ("delta", t) if name == "delta" else ("fn", name, t)


FUNCTION_CLASSES = tuple(f for f, _ in V.FUNCTIONALS.values())


def why_not_stochastic(m: Any, s: Shape) -> str:
    if not s.square:
        return f"it is {s.rows} x {s.cols}"
    if isinstance(m, sp.Transpose):
        return "a transpose is row-stochastic only for a doubly stochastic matrix: assume=('doubly-stochastic',)"
    if isinstance(m, sp.MatrixSymbol):
        return f"{m} is not declared stochastic"
    if s.rowsum is not None and not _is_one(s.rowsum):
        return f"its rows sum to {s.rowsum}, not 1; write a convex combination such as (A + B)/2"
    if s.rowsum is not None:
        return ("a coefficient may be negative: write a convex combination (coefficients nonnegative over the "
                "parameters' intervals), e.g. alpha * I + (1 - alpha) * A")
    return ("it is not built from stochastic matrices, I and softmax(...) by products, powers and convex "
            "combinations")


def is_delta(e: Any) -> bool:
    return isinstance(e, V.delta) or (isinstance(e, sp.core.function.AppliedUndef) and e.func.__name__ == "delta")


def exponent(k: Any, base: Any, matrix: bool) -> int:
    lo = 1 if matrix else -MAX_POWER
    ok = isinstance(k, sp.Integer) and lo <= int(k) <= MAX_POWER and int(k) != 0
    if not ok:
        kind = f"a matrix power must be a positive integer (at most {MAX_POWER})" if matrix else \
            f"a scalar power must be a nonzero integer (|k| <= {MAX_POWER})"
        raise fail(f"power {base}**({k}) has exponent {k}; {kind}")
    return int(k)


def nonnegative(c: Any, params: dict) -> bool:
    """Whether ``c`` (an expression in parameters, the sizes and rationals) is >= 0 for every value of
    each parameter in its interval and every size >= 1: exact for constants, for polynomials of
    degree at most 1 in each parameter (checked at the corners of the box), for one parameter
    (the minimum over its interval), and where sympy's assumptions decide it."""
    if c.is_number:
        return bool(c >= 0)
    syms = [s for s in c.free_symbols if isinstance(s, V.Parameter)]
    if c.free_symbols - set(syms):                   # the sizes: sympy's assumptions (n, d positive integers)
        return bool(c.is_nonnegative) if not syms else False
    try:
        poly = sp.Poly(c, *syms)
    except sp.PolynomialError:
        poly = None
    if poly is not None and all(d <= 1 for d in poly.degree_list()):
        from itertools import product

        corners = product(*[[sp.Rational(*_pq(v)) for v in s.interval] for s in syms])
        return all(c.subs(dict(zip(syms, pt))) >= 0 for pt in corners)
    if len(syms) == 1:
        lo, hi = syms[0].interval
        low = sp.calculus.util.minimum(c, syms[0], sp.Interval(sp.Rational(*_pq(lo)), sp.Rational(*_pq(hi))))
        return bool(low >= 0)
    return False


def _pq(x: Fraction) -> tuple[int, int]:
    return x.numerator, x.denominator


def orient(statement: Any) -> tuple[Any, Any, str, bool]:
    """(lhs, rhs, op, reversed) of a relation: ``>=``/``>`` read the other way round; InvalidInput
    for anything that is not one relation."""
    if isinstance(statement, str):
        raise fail(f"a string ({statement!r}); build it from theory.expr's names, e.g. delta(A**2) <= delta(A)**2")
    if isinstance(statement, (bool, sp.logic.boolalg.BooleanAtom)):
        raise fail(f"sympy evaluated it to {statement} before it could be checked (e.g. delta(A) >= 0 holds by "
                   "definition); state a bound that is not decided by its form")
    if isinstance(statement, sp.Ne):
        raise fail(f"{statement} is not a bound; use <=, <, >=, > or Eq")
    if isinstance(statement, sp.Eq):
        return statement.lhs, statement.rhs, "=", False
    if isinstance(statement, (sp.GreaterThan, sp.StrictGreaterThan)):
        return statement.rhs, statement.lhs, "<" if isinstance(statement, sp.StrictGreaterThan) else "<=", True
    if isinstance(statement, (sp.LessThan, sp.StrictLessThan)):
        return statement.lhs, statement.rhs, "<" if isinstance(statement, sp.StrictLessThan) else "<=", False
    raise fail(f"expected one sympy relation such as delta(A**2) <= delta(A)**2, got {type(statement).__name__} "
               f"{statement}")


def read(statement: Any, assume: tuple = (), reader: Optional[_Reader] = None) -> NormalForm:
    """``statement`` as a :class:`NormalForm` (see the module docstring), or InvalidInput naming the
    first thing outside the vocabulary and what to write instead."""
    lhs, rhs, op, rev = orient(statement)
    r = reader or _Reader(tuple(assume))
    left, right = r.scalar(lhs), r.scalar(rhs)
    relation = {"=": sp.Eq, "<": sp.StrictLessThan, "<=": sp.LessThan}[op](lhs, rhs, evaluate=False)
    symbols = sorted(r.symbols.items(), key=lambda kv: (kv[0] not in LEGACY, kv[0]))
    sizes = ("n", "d") if "tokens" in r.symbols.values() else ("n",)
    if "d" not in sizes and ("size", "d") in _subtrees((left, right)):
        raise fail("the size d occurs but no tokens(...) matrix does: d is the width of the token states")
    return NormalForm(lhs=left, rhs=right, strict=op == "<", relation=relation, equal=op == "=", written=statement,
                      reversed=rev, symbols=tuple(symbols), params=tuple((k, *v) for k, v in sorted(r.params.items())),
                      sizes=sizes, assume=tuple(assume))


def _subtrees(t: Any, out: Optional[set] = None) -> set:
    out = set() if out is None else out
    if isinstance(t, tuple):
        out.add(t)
        for a in t:
            _subtrees(a, out)
    return out


def uses_vocabulary(statement: Any) -> bool:
    """Whether ``statement`` is written with this vocabulary's own objects (then a statement that
    does not validate is an error, never "not a statement")."""
    if not isinstance(statement, sp.Basic):
        return False
    ours = (V.Stochastic, V.Logits, V.Tokens, V.Parameter, V.softmax) + FUNCTION_CLASSES
    return any(isinstance(a, ours) for a in sp.preorder_traversal(statement))
