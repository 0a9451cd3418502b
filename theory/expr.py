"""The vocabulary of a user's statement (issue 50): bounds over row-stochastic matrices and delta.

A statement is one sympy relation between two scalar expressions built from

    A, B, C       symbolic n x n row-stochastic matrices (MatrixSymbol, one symbolic size :data:`n`)
    I             the n x n identity
    M * N, M**k   matrix products and positive integer powers (k <= :data:`MAX_POWER`)
    M + N, c * M  sums and rational multiples, e.g. ``(I + A)/2``, ``(A + B)/2``
    delta(M)      the Dobrushin coefficient 1/2 max_{i,j} ||M_i - M_j||_1 of a row-stochastic M
    + - * /       scalar arithmetic on deltas and rational constants, integer powers, ``Max``, ``Min``

with ``<=`` or ``<`` (``>=`` and ``>`` are read the other way round). The argument of ``delta`` must
be row-stochastic by construction: a convex combination (nonnegative rational coefficients summing
to 1) of products of A, B, C and I; ``delta(A + B)`` is refused (its rows sum to 2), so is
``delta(2*A - I)``. The size n never occurs in the bound itself.

:func:`normal_form` turns a statement into a small tree of tuples that numerics/ compiles
(:mod:`numerics.expr`), :func:`validate` says in one line (:class:`~theory.errors.InvalidInput`) what is
outside the vocabulary, :func:`matrices_of` which matrices occur, :func:`latex` typesets it.

>>> statement = delta((I + A) / 2) <= (1 + delta(A)) / 2          # Theorem D1, restated
>>> matrices_of(statement), normal_form(statement).strict
(('A',), False)
>>> validate(delta(A * B) > delta(A) * delta(B))                  # read as <
delta(A)*delta(B) < delta(A*B)
>>> validate(delta(A.T) <= 1)
Traceback (most recent call last):
...
theory.errors.InvalidInput: statement: A.T (Transpose) is not in the vocabulary (A, B, C, I, products, positive integer powers, sums and rational multiples inside delta(...))

A function named ``delta`` made by ``sympy.Function("delta")`` (the built-in theorems' statements,
:mod:`theory.dobrushin`) is read as this delta too, so a built-in statement over A compiles as is.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from theory.errors import InvalidInput

__all__ = ["A", "ASSUMPTIONS", "B", "C", "I", "MATRICES", "MAX_POWER", "Max", "Min", "NormalForm", "as_written",
           "delta", "hypotheses_tex", "is_statement", "latex", "matrices_of", "n", "normal_form", "validate",
           "written_relation"]

n = sp.Symbol("n", integer=True, positive=True)
A = sp.MatrixSymbol("A", n, n)
B = sp.MatrixSymbol("B", n, n)
C = sp.MatrixSymbol("C", n, n)
I = sp.Identity(n)
Max, Min = sp.Max, sp.Min
MATRICES = ("A", "B", "C")
MAX_POWER = 64          # largest |exponent| of a matrix or scalar power (each costs a product per instance)

VOCABULARY = "A, B, C, I, products, positive integer powers, sums and rational multiples inside delta(...)"


class delta(sp.Function):
    """The Dobrushin coefficient delta(M) = 1/2 max_{i,j} sum_k |M_ik - M_jk| of a row-stochastic
    matrix expression M, unevaluated (real, nonnegative, at most 1).

    >>> delta(A**2)
    delta(A**2)
    >>> delta(2)
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: delta: takes a matrix expression over A, B, C and I, got 2
    """

    nargs = 1
    is_real = True
    is_nonnegative = True

    @classmethod
    def eval(cls, M: Any) -> None:
        if not isinstance(M, sp.MatrixExpr):
            raise InvalidInput(f"delta: takes a matrix expression over A, B, C and I, got {M}")
        return None

    def _latex(self, printer: Any, exp: Any = None) -> str:
        body = r"\delta\left(%s\right)" % printer._print(self.args[0])
        return body if exp is None else r"%s^{%s}" % (body, exp)


@dataclass(frozen=True)
class NormalForm:
    """A validated statement as ``lhs < rhs`` (``strict``) or ``lhs <= rhs``, each side a tree of tuples:

    scalars   ("const", Fraction) | ("delta", matrix) | ("add", (s, ...)) | ("mul", (s, ...))
              | ("pow", s, k) with k a nonzero integer | ("max", (s, ...)) | ("min", (s, ...))
    matrices  ("leaf", "A") | ("eye",) | ("scale", Fraction, m) | ("madd", (m, ...))
              | ("mmul", (m, m, ...)) in order | ("mpow", m, k) with 1 <= k <= MAX_POWER
    """

    lhs: tuple
    rhs: tuple
    strict: bool
    relation: Any       # the sympy relation, oriented as lhs (<= or <) rhs


def _fail(what: str) -> InvalidInput:
    return InvalidInput(f"statement: {what}")


def _is_delta(e: Any) -> bool:
    return isinstance(e, delta) or (isinstance(e, sp.core.function.AppliedUndef) and e.func.__name__ == "delta")


def _rational(e: Any, where: str) -> Fraction:
    if isinstance(e, sp.Rational):
        return Fraction(int(e.p), int(e.q))
    if isinstance(e, sp.Float):
        raise _fail(f"float constant {e} in {where}; write constants exactly, e.g. Rational(1, 2) or S(1)/2")
    if getattr(e, "is_number", False):
        raise _fail(f"constant {e} in {where} is not rational; only rational constants are exact")
    free = sorted(str(s) for s in getattr(e, "free_symbols", ()))
    if free:
        raise _fail(f"free symbol {free[0]} occurs in {where}; a matrix's coefficient is a rational constant")
    raise _fail(f"{e} in {where} is not a rational constant")


def _exponent(k: Any, base: Any, matrix: bool) -> int:
    lo = 1 if matrix else -MAX_POWER
    ok = isinstance(k, sp.Integer) and lo <= int(k) <= MAX_POWER and int(k) != 0
    if not ok:
        kind = f"a matrix power must be a positive integer (at most {MAX_POWER})" if matrix else \
            f"a scalar power must be a nonzero integer (|k| <= {MAX_POWER})"
        raise _fail(f"power {base}**({k}) has exponent {k}; {kind}")
    return int(k)


def _matrix(e: Any) -> tuple:
    """The tuple tree of a matrix expression (see :class:`NormalForm`), or InvalidInput."""
    if isinstance(e, sp.MatrixSymbol):
        name = str(e.name)
        if name not in MATRICES:
            raise _fail(f"matrix {name} is not one of {', '.join(MATRICES)} (use theory.expr.A, B, C)")
        if e.shape != (n, n):
            raise _fail(f"matrix {name} is {e.shape[0]} x {e.shape[1]}; the vocabulary's matrices are n x n "
                        "with the symbolic size theory.expr.n")
        return ("leaf", name)
    if isinstance(e, sp.Identity):
        if e.shape != (n, n):
            raise _fail(f"identity {e} is {e.shape[0]} x {e.shape[1]}; use theory.expr.I (n x n)")
        return ("eye",)
    if isinstance(e, sp.MatAdd):
        return ("madd", tuple(_matrix(a) for a in e.args))
    if isinstance(e, sp.MatMul):
        scalars = [a for a in e.args if not isinstance(a, sp.MatrixExpr)]
        factors = [_matrix(a) for a in e.args if isinstance(a, sp.MatrixExpr)]
        c = Fraction(1)
        for s in scalars:
            c *= _rational(s, f"the matrix term {e}")
        body = factors[0] if len(factors) == 1 else ("mmul", tuple(factors))
        return body if c == 1 else ("scale", c, body)
    if isinstance(e, sp.MatPow):
        return ("mpow", _matrix(e.args[0]), _exponent(e.args[1], e.args[0], True))
    kind = type(e).__name__
    shown = {"Transpose": f"{e.args[0]}.T", "Inverse": f"{e.args[0]}**(-1)"}.get(kind, str(e)) if e.args else str(e)
    raise _fail(f"{shown} ({kind}) is not in the vocabulary ({VOCABULARY})")


def _rows(m: tuple) -> tuple[Fraction, bool]:
    """(row sum, entries certainly nonnegative) of every exact value of the matrix tree ``m``."""
    op = m[0]
    if op in ("leaf", "eye"):
        return Fraction(1), True
    if op == "scale":
        s, pos = _rows(m[2])
        return m[1] * s, pos and m[1] >= 0
    if op == "mpow":
        s, pos = _rows(m[1])
        return s ** m[2], pos
    parts = [_rows(a) for a in m[1]]
    total = Fraction(0) if op == "madd" else Fraction(1)
    for s, _ in parts:
        total = total + s if op == "madd" else total * s
    return total, all(p for _, p in parts)


def _scalar(e: Any) -> tuple:
    """The tuple tree of a scalar expression (see :class:`NormalForm`), or InvalidInput."""
    if isinstance(e, sp.MatrixExpr):
        raise _fail(f"the matrix {e} stands where a number is expected; take delta({e})")
    if _is_delta(e):
        if len(e.args) != 1:
            raise _fail(f"{e}: delta takes one matrix")
        if not isinstance(e.args[0], sp.MatrixExpr):
            raise _fail(f"{e}: delta takes a matrix expression over A, B, C and I")
        m = _matrix(e.args[0])
        total, pos = _rows(m)
        if not pos:
            raise _fail(f"{e}: its argument has a negative coefficient; delta is taken of row-stochastic "
                        "matrices: write a convex combination (nonnegative coefficients summing to 1) of "
                        "products of A, B, C and I")
        if total != 1:
            raise _fail(f"{e}: its argument's rows sum to {total}, not 1; delta is taken of row-stochastic "
                        "matrices: write a convex combination such as (A + B)/2")
        return ("delta", m)
    if isinstance(e, sp.Symbol):
        what = "the size n" if e == n else f"free symbol {e}"
        raise _fail(f"{what} occurs in the bound; only A, B, C, I, delta(...), Max, Min and rational "
                    "constants may occur")
    if e.is_number:
        return ("const", _rational(e, "the statement"))
    if isinstance(e, sp.Add):
        return ("add", tuple(_scalar(a) for a in e.args))
    if isinstance(e, sp.Mul):
        return ("mul", tuple(_scalar(a) for a in e.args))
    if isinstance(e, sp.Pow):
        return ("pow", _scalar(e.args[0]), _exponent(e.args[1], e.args[0], False))
    if isinstance(e, (sp.Max, sp.Min)):
        return ("max" if isinstance(e, sp.Max) else "min", tuple(_scalar(a) for a in e.args))
    name = getattr(e.func, "__name__", type(e).__name__)
    raise _fail(f"{e}: {name} is not in the vocabulary (delta, Max, Min, +, -, *, /, integer powers, "
                "rational constants)")


def normal_form(statement: Any) -> NormalForm:
    """``statement`` as a :class:`NormalForm` (``>=``/``>`` reversed), or InvalidInput naming the
    first thing outside the vocabulary.

    >>> normal_form(delta(A) >= delta(A**2)).lhs
    ('delta', ('mpow', ('leaf', 'A'), 2))
    """
    if isinstance(statement, str):
        raise _fail(f"a string ({statement!r}); build it from theory.expr's names, e.g. "
                    "delta(A**2) <= delta(A)**2")
    if isinstance(statement, (bool, sp.logic.boolalg.BooleanAtom)):
        raise _fail(f"sympy evaluated it to {statement} before it could be checked (e.g. delta(A) >= 0 "
                    "holds by definition); state a bound that is not decided by its form")
    if isinstance(statement, (sp.Eq, sp.Ne)):
        raise _fail(f"{statement} is not a bound; use <= or < (equality is what the tight verdicts of <= count)")
    if isinstance(statement, (sp.GreaterThan, sp.StrictGreaterThan)):
        statement = statement.reversed
    if not isinstance(statement, (sp.LessThan, sp.StrictLessThan)):
        raise _fail(f"expected one sympy relation such as delta(A**2) <= delta(A)**2, got "
                    f"{type(statement).__name__} {statement}")
    return NormalForm(lhs=_scalar(statement.lhs), rhs=_scalar(statement.rhs),
                      strict=isinstance(statement, sp.StrictLessThan), relation=statement)


def validate(statement: Any) -> Any:
    """The statement as a sympy relation ``lhs <= rhs`` or ``lhs < rhs`` (``>=`` and ``>`` reversed),
    or :class:`~theory.errors.InvalidInput` naming what is not in the vocabulary: a free symbol, a
    transpose, an inverse, a non-integer power, a float or irrational constant, an argument of delta
    that is not row-stochastic, a relation that is not <=, <, >=, >.

    >>> validate(delta(A) <= 1 / sp.Symbol("x"))
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: statement: free symbol x occurs in the bound; only A, B, C, I, delta(...), Max, Min and rational constants may occur
    >>> validate(delta(A + B) <= 1)
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: statement: delta(A + B): its argument's rows sum to 2, not 1; delta is taken of row-stochastic matrices: write a convex combination such as (A + B)/2
    """
    return normal_form(statement).relation


def _leaves(t: Any, out: set) -> set:
    if isinstance(t, tuple):
        if t and t[0] == "leaf":
            out.add(t[1])
        for a in t:
            _leaves(a, out)
    return out


def matrices_of(statement: Any) -> tuple[str, ...]:
    """The matrices (of A, B, C, in that order) that occur in the validated ``statement``.

    >>> matrices_of(delta(C * A) <= delta(A) * delta(C))
    ('A', 'C')
    """
    form = _cached_form(statement)
    names = _leaves(form.rhs, _leaves(form.lhs, set()))
    return tuple(m for m in MATRICES if m in names)


def is_statement(statement: Any) -> bool:
    """Whether ``statement`` is a bound in this vocabulary (everything about it can be derived).
    A statement that uses this module's :class:`delta` but is outside the vocabulary is an error
    (InvalidInput naming what is wrong), never silently "not a statement"; a statement without it
    (the built-in theorems' symbols) that does not validate is simply not one.

    >>> is_statement(delta(A**2) <= delta(A)**2), is_statement(sp.Symbol("x") <= 1)
    (True, False)
    """
    try:
        _cached_form(statement)
        return True
    except InvalidInput:
        if isinstance(statement, sp.Basic) and statement.atoms(delta):
            raise
        return False
    except TypeError:                 # unhashable: not a sympy object
        return False


from functools import lru_cache  # noqa: E402


@lru_cache(maxsize=256)
def _cached_form(statement: Any) -> NormalForm:
    return normal_form(statement)


# -- what a theorem over this vocabulary derives (theory.registry.Theorem) ---------------------------
ASSUMPTIONS = {"causal": "lower triangular (token i attends to tokens j <= i)",
               "positive": "every entry strictly positive (a softmax)"}
# the evaluators of a statement over this vocabulary, as dotted paths (theory/ never imports numerics/)
EVALUATORS = {"float": "numerics.expr:evaluate", "exact": "numerics.expr:exact_sides",
              "decide": "numerics.expr:decide"}


def check_assumptions(assume: Any, theorem_id: str = "") -> None:
    """Refuse an assumption that is not in :data:`ASSUMPTIONS`, naming the theorem."""
    for a in assume:
        if a not in ASSUMPTIONS:
            raise InvalidInput(f"theorem {theorem_id}: assume={a!r} is not one of {', '.join(ASSUMPTIONS)} "
                               "(every matrix is row-stochastic already)")


def hypotheses_tex(matrices: Any, assume: Any = ()) -> str:
    r"""The hypotheses of a statement over this vocabulary in words with inline math (the form of
    :attr:`theory.registry.Theorem.hypotheses_tex`): every matrix it names is row-stochastic, square,
    of one size n, and satisfies ``assume`` (:data:`ASSUMPTIONS`).

    >>> hypotheses_tex(("A",))
    '$A$ is a row-stochastic $n \\times n$ matrix'
    >>> hypotheses_tex(("A", "B"), ("causal", "positive"))[16:]
    'lower-triangular (causal) row-stochastic $n \\times n$ matrices, of one size $n$, with every entry positive'
    """
    names = [f"${m}$" for m in matrices]
    if not names:
        return ""
    who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    kind = "lower-triangular (causal) row-stochastic" if "causal" in assume else "row-stochastic"
    one = len(names) == 1
    text = (f"{who} is a {kind} $n \\times n$ matrix" if one else
            f"{who} are {kind} $n \\times n$ matrices, of one size $n$")
    return text + (", with every entry positive" if "positive" in assume else "")


_WRITTEN = {sp.LessThan: "<=", sp.StrictLessThan: "<", sp.GreaterThan: ">=", sp.StrictGreaterThan: ">"}


def written_relation(statement: Any) -> str:
    """The relation of ``statement`` as it is written: ``<=``, ``<``, ``>=`` or ``>`` (its normal form,
    :func:`normal_form`, reads ``>=`` and ``>`` the other way round).

    >>> written_relation(delta(A) >= delta(A**2)), written_relation(delta(A**2) < 1)
    ('>=', '<')
    """
    return _WRITTEN.get(type(statement), "<=")


def as_written(relation: str, lhs: Any, rhs: Any) -> dict:
    """The two sides of the normal form ``lhs <= rhs`` (or ``<``) as the statement is written, with its
    ``relation`` as written (:func:`written_relation`): for ``>=`` and ``>`` the sides swap back.

    >>> as_written(">=", "1/4", "1/2")         # delta(A**2) >= ... stored as 1/4 <= 1/2
    {'lhs': '1/2', 'relation': '>=', 'rhs': '1/4'}
    """
    if relation in (">=", ">"):
        return {"lhs": rhs, "relation": relation, "rhs": lhs}
    return {"lhs": lhs, "relation": relation, "rhs": rhs}


def latex(statement: Any) -> str:
    """The validated ``statement`` typeset by sympy, as written (a ``>=`` stays ``>=``).

    >>> latex(delta(A**2) <= delta(A)**2)
    '\\\\delta\\\\left(A^{2}\\\\right) \\\\leq \\\\delta\\\\left(A\\\\right)^{2}'
    """
    normal_form(statement)
    return sp.latex(statement)

