"""The vocabulary of a user's statement about attention: what a theorem file writes.

A statement is one sympy relation (``<=``, ``<``, ``>=``, ``>`` or ``Eq``) between two scalar
expressions over

    A, B, C, stochastic("D")      row-stochastic n x n matrices (any number of them)
    logits("L")                   real n x n matrices; softmax(L), softmax(L / 2), softmax(L, mask="causal")
    tokens("X")                   real n x d matrices (token states)
    parameter("alpha", lo, hi)    a scalar over a closed rational interval
    I, n, d                       the identity and the sizes
    M * N, M**k, M + N, c * M, M.T   matrix terms (c rational or an expression in parameters)
    delta, spread, entry_min, entry_max, ptp, col_min_sum, slem, norm_inf, norm_1, norm_fro, trace
    exp, log, tanh, sqrt, Abs, Max, Min, + - * /, rational constants

(:mod:`theory.vocabulary` defines the names, :mod:`theory.forms` reads a statement into the normal
form numerics/ compiles). The argument of ``delta`` and ``slem`` must be row-stochastic by
construction: ``delta(A + B)`` is refused (its rows sum to 2), ``delta(alpha * I + (1 - alpha) * A)``
is accepted for alpha in [0, 1].

>>> statement = delta((I + A) / 2) <= (1 + delta(A)) / 2          # Theorem D1, restated
>>> matrices_of(statement), normal_form(statement).strict
(('A',), False)
>>> validate(delta(A * B) > delta(A) * delta(B))                  # read as <
delta(A)*delta(B) < delta(A*B)
>>> validate(delta(A.T) <= 1)
Traceback (most recent call last):
...
theory.errors.InvalidInput: statement: delta(A.T): delta is taken of a row-stochastic matrix and A.T is not one by construction (a transpose is row-stochastic only for a doubly stochastic matrix: assume=('doubly-stochastic',))
>>> L = logits("L"); alpha = parameter("alpha", 0, 1)
>>> matrices_of(delta(softmax(L)) <= 1 - exp(-ptp(L))), normal_form(Eq(norm_inf(alpha * I + (1 - alpha) * A), 1)).op
(('L',), '=')

A function named ``delta`` made by ``sympy.Function("delta")`` (the built-in theorems' statements,
:mod:`theory.dobrushin`) is read as this delta too, and plain sympy MatrixSymbols named A, B, C as
stochastic matrices, so a built-in statement over A compiles as is.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import sympy as sp
from sympy import Abs, Eq, Rational, S, exp, log, sqrt, tanh

from theory.errors import InvalidInput
from theory.forms import MAX_POWER, NormalForm, read, uses_vocabulary
from theory.vocabulary import (FUNCTIONALS, A, B, C, I, Max, Min, Parameter, col_min_sum, d, delta, entry_max,
                               entry_min, logits, n, norm_1, norm_fro, norm_inf, parameter, ptp, slem, softmax,
                               spread, stochastic, tokens, trace)

__all__ = ["A", "ASSUMPTIONS", "Abs", "B", "C", "Eq", "FUNCTIONALS", "I", "MATRICES", "MAX_POWER", "Max", "Min",
           "NormalForm", "Parameter", "Rational", "S", "as_written", "col_min_sum", "d", "delta", "entry_max",
           "entry_min", "exp", "hypotheses_tex", "is_statement", "latex", "log", "logits", "matrices_of", "n", "norm_1", "norm_fro", "norm_inf",
           "normal_form", "parameter", "ptp", "slem", "softmax", "spread", "sqrt", "stochastic", "tanh", "tokens",
           "trace", "validate", "written_relation"]

MATRICES = ("A", "B", "C")     # the predefined stochastic matrices


def normal_form(statement: Any, assume: Any = ()) -> NormalForm:
    """``statement`` as a :class:`~theory.forms.NormalForm` (``>=``/``>`` reversed), or InvalidInput
    naming the first thing outside the vocabulary. ``assume``: the theorem's hypotheses (a
    doubly-stochastic matrix's transpose is stochastic).

    >>> normal_form(delta(A) >= delta(A**2)).lhs
    ('delta', ('mpow', ('leaf', 'A'), 2))
    """
    return _cached_form(statement, tuple(assume))


@lru_cache(maxsize=256)
def _cached_form(statement: Any, assume: tuple) -> NormalForm:
    return read(statement, assume)


def validate(statement: Any, assume: Any = ()) -> Any:
    """The statement as an oriented sympy relation ``lhs <= rhs``, ``lhs < rhs`` or ``Eq(lhs, rhs)``
    (``>=`` and ``>`` reversed), or :class:`~theory.errors.InvalidInput` naming what is not in the
    vocabulary and what to write instead.

    >>> validate(delta(A) <= 1 / sp.Symbol("x"))
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: statement: free symbol x occurs in the bound; declare a scalar with x = parameter('x', lo, hi) (theory.expr), or use the sizes n and d
    >>> validate(delta(A + B) <= 1)
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: statement: delta(A + B): delta is taken of a row-stochastic matrix and A + B is not one by construction (its rows sum to 2, not 1; write a convex combination such as (A + B)/2)
    """
    return normal_form(statement, assume).relation


def matrices_of(statement: Any, assume: Any = ()) -> tuple[str, ...]:
    """The matrix symbols of the validated ``statement``: A, B, C first, then the others by name.

    >>> matrices_of(delta(C * A) <= delta(A) * delta(C))
    ('A', 'C')
    """
    return normal_form(statement, assume).matrices


def is_statement(statement: Any, assume: Any = ()) -> bool:
    """Whether ``statement`` is a bound in this vocabulary (everything about it can be derived).
    A statement written with this vocabulary's objects that is outside it is an error (InvalidInput
    naming what is wrong), never silently "not a statement"; one without them (the built-in theorems'
    symbols) that does not validate is simply not one.

    >>> is_statement(delta(A**2) <= delta(A)**2), is_statement(sp.Symbol("x") <= 1)
    (True, False)
    """
    try:
        return bool(normal_form(statement, assume).symbols)
    except InvalidInput:
        if uses_vocabulary(statement):
            raise
        return False
    except TypeError:                 # unhashable: not a sympy object
        return False


# -- what a theorem over this vocabulary derives (theory.registry.Theorem) ---------------------------
ASSUMPTIONS = {"causal": "lower triangular (token i attends to tokens j <= i)",
               "positive": "every entry strictly positive (a softmax)",
               "doubly-stochastic": "columns sum to 1 as well as rows",
               "symmetric": "symmetric (for a stochastic matrix: doubly stochastic too); a logits matrix symmetric"}
EXCLUSIVE = {frozenset({"causal", "positive"}): "a causal matrix of size n >= 2 has zeros above the diagonal",
             frozenset({"causal", "doubly-stochastic"}): "the only causal doubly stochastic matrix is I",
             frozenset({"causal", "symmetric"}): "the only causal symmetric stochastic matrix is I"}
# the evaluators of a statement over this vocabulary, as dotted paths (theory/ never imports numerics/)
EVALUATORS = {"float": "numerics.expr:evaluate", "exact": "numerics.expr:exact_sides",
              "decide": "numerics.expr:decide"}


def check_assumptions(assume: Any, theorem_id: str = "") -> None:
    """Refuse an assumption that is not in :data:`ASSUMPTIONS`, or two that exclude each other,
    naming the theorem."""
    for a in assume:
        if a not in ASSUMPTIONS:
            raise InvalidInput(f"theorem {theorem_id}: assume={a!r} is not one of {', '.join(ASSUMPTIONS)} "
                               "(every stochastic matrix is row-stochastic already)")
    for pair, why in EXCLUSIVE.items():
        if pair <= set(assume):
            raise InvalidInput(f"theorem {theorem_id}: assume= has {' and '.join(sorted(pair))}, which exclude "
                               f"each other ({why})")


KIND_TEX = {"stochastic": "row-stochastic $n \\times n$", "logits": "real $n \\times n$", "tokens": "real $n \\times d$"}


def hypotheses_tex(matrices: Any, assume: Any = (), roles: Any = None, params: Any = ()) -> str:
    r"""The hypotheses of a statement over this vocabulary in words with inline math (the form of
    :attr:`theory.registry.Theorem.hypotheses_tex`): what each matrix it names is (``roles``: name ->
    kind, stochastic by default), that they share the sizes, ``assume`` (:data:`ASSUMPTIONS`, on the
    stochastic matrices) and each parameter's interval (``params``: (name, lo, hi)).

    >>> hypotheses_tex(("A",))
    '$A$ is a row-stochastic $n \\times n$ matrix'
    >>> hypotheses_tex(("A", "B"), ("causal", "positive"))[16:]
    'lower-triangular (causal) row-stochastic $n \\times n$ matrices, of one size $n$, with every entry positive'
    >>> hypotheses_tex(("A", "L"), roles={"L": "logits"}, params=(("alpha", 0, 1),))
    '$A$ is a row-stochastic $n \\times n$ matrix, $L$ a real $n \\times n$ matrix, of one size $n$; $\\alpha \\in [0, 1]$'
    """
    roles = dict(roles or {})
    groups: dict[str, list] = {}
    for m in matrices:
        groups.setdefault(roles.get(m, "stochastic"), []).append(f"${sp.latex(sp.Symbol(m))}$")
    parts = []
    for kind, names in groups.items():
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        adj = KIND_TEX[kind]
        if kind == "stochastic":
            adj = ("lower-triangular (causal) " if "causal" in assume else "") + \
                  ("symmetric " if "symmetric" in assume else "doubly stochastic, " if "doubly-stochastic" in assume
                   else "") + adj
        one = len(names) == 1
        verb = ("is" if one else "are") if not parts else ""
        text = f"{who} {verb} a {adj} matrix" if one else f"{who} {verb} {adj} matrices"
        parts.append(" ".join(text.split()).replace(" ,", ","))
    text = ", ".join(parts)
    if len(matrices) > 1:
        text += ", of one size $n$"
    if groups.get("stochastic") and "positive" in assume:
        text += ", with every entry positive"
    for name, lo, hi in params:
        text += f"; ${sp.latex(sp.Symbol(name))} \\in [{lo}, {hi}]$"
    return text


_WRITTEN = {sp.LessThan: "<=", sp.StrictLessThan: "<", sp.GreaterThan: ">=", sp.StrictGreaterThan: ">",
            sp.Equality: "="}


def written_relation(statement: Any) -> str:
    """The relation of ``statement`` as it is written: ``<=``, ``<``, ``>=``, ``>`` or ``=`` (its normal
    form, :func:`normal_form`, reads ``>=`` and ``>`` the other way round).

    >>> written_relation(delta(A) >= delta(A**2)), written_relation(delta(A**2) < 1)
    ('>=', '<')
    """
    return _WRITTEN.get(type(statement), "<=")


def as_written(relation: str, lhs: Any, rhs: Any) -> dict:
    """The two sides of the normal form ``lhs <= rhs`` (or ``<``, ``=``) as the statement is written,
    with its ``relation`` as written (:func:`written_relation`): for ``>=`` and ``>`` the sides swap back.

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

