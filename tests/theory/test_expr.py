"""theory.expr: the vocabulary of a user's statement; what it accepts, how it normalises, and a
one-line refusal naming whatever is outside it."""
from fractions import Fraction

import pytest
import sympy as sp

from theory.errors import InvalidInput
from theory.expr import (A, B, C, I, Eq, Max, Min, d, delta, exp, latex, log, logits, matrices_of, n, norm_fro,
                         norm_inf, normal_form, parameter, ptp, slem, softmax, spread, sqrt, stochastic, tanh, tokens,
                         trace, validate)

x = sp.Symbol("x")
R = sp.Rational

ACCEPTED = [
    (delta((I + A) / 2) <= (1 + delta(A)) / 2, ("A",)),
    (delta(A**2) <= delta(A)**2, ("A",)),
    (delta(C * A) <= delta(A) * delta(C), ("A", "C")),
    (delta((A + B) / 2) < Max(delta(A), delta(B)), ("A", "B")),
    (delta((A + 2 * B) / 3) <= R(1, 3) * delta(A) + R(2, 3) * delta(B), ("A", "B")),
    (delta(A**3) / delta(A) <= Min(1, 2 * delta(A)**2), ("A",)),
    (delta(((I + A * B * C) / 2)**2) <= 1 - delta(B) / 7, ("A", "B", "C")),
]


@pytest.mark.parametrize("statement,names", ACCEPTED, ids=[str(s) for s, _ in ACCEPTED])
def test_the_vocabulary_is_accepted(statement, names):
    assert validate(statement) == statement
    assert matrices_of(statement) == names
    assert r"\delta\left(" in latex(statement)


def test_greater_than_is_read_the_other_way_round():
    assert validate(delta(A) >= delta(A**2)) == (delta(A**2) <= delta(A))
    assert validate(delta(A * B) > delta(A) * delta(B)) == (delta(A) * delta(B) < delta(A * B))
    assert normal_form(delta(A * B) > delta(A)).strict and not normal_form(delta(A) >= delta(A * B)).strict
    assert latex(delta(A) >= delta(A**2)).count(r"\geq") == 1          # typeset as written


def test_normal_form_of_d1():
    form = normal_form(delta((I + A) / 2) <= (1 + delta(A)) / 2)
    half = Fraction(1, 2)
    assert form.lhs == ("delta", ("madd", (("scale", half, ("eye",)), ("scale", half, ("leaf", "A")))))
    assert form.rhs == ("add", (("const", half), ("mul", (("const", half), ("delta", ("leaf", "A"))))))


def test_the_builtin_statements_delta_is_this_delta():
    from theory.dobrushin import FACTOR, delta as builtin_delta

    assert builtin_delta is not delta
    assert matrices_of(FACTOR.statement) == ("A",)
    with pytest.raises(InvalidInput, match="matrix P is a plain sympy MatrixSymbol; declare what it is"):
        from theory.dobrushin import PRODUCT          # D2 is stated over P, Q
        validate(PRODUCT.statement)


def _mat(name, rows=None, cols=None):
    return sp.MatrixSymbol(name, rows if rows is not None else n, cols if cols is not None else n)


L, X, D = logits("L"), tokens("X"), stochastic("D")
alpha = parameter("alpha", 0, 1)

REFUSED = [
    (delta(A) <= x, "free symbol x occurs in the bound; declare a scalar with x = parameter"),
    (delta(x * A) <= 1, "free symbol x occurs in the bound"),
    (delta(A.T) <= 1, r"A.T is not one by construction \(a transpose is row-stochastic only for a doubly"),
    (delta(A.I) <= 1, r"power A\*\*\(-1\) has exponent -1; a matrix power must be a positive integer"),
    (delta(A**R(1, 2)) <= 1, r"exponent 1/2; a matrix power must be a positive integer"),
    (delta(A**65) <= 1, "exponent 65; a matrix power must be a positive integer \\(at most 64\\)"),
    (delta(A)**R(1, 65) <= 1, r"the exponent must be an integer or a rational p/q"),
    (delta(A) <= 0.5, "float constant 0.5"),
    (delta(A) <= sp.pi / 4, "constant pi is not in the vocabulary"),
    (sp.Ne(delta(A), 1), "is not a bound; use <=, <, >=, > or Eq"),
    (delta(A) >= 0, "sympy evaluated it to True"),
    (sp.And(delta(A) < 1, delta(B) < 1), "expected one sympy relation"),
    ("delta(A) <= 1", "a string"),
    (delta(A + B) <= 1, r"A \+ B is not one by construction"),
    (delta(2 * A - I) <= 1, r"a coefficient may be negative"),
    (delta(2 * alpha * I + (1 - 2 * alpha) * A) <= 1, "is not one by construction"),
    (delta(L) <= 1, "L is not declared stochastic"),
    (slem(softmax(L) + A) <= 1, "slem is taken of a row-stochastic matrix"),
    (delta(_mat("D")) <= 1, "matrix D is a plain sympy MatrixSymbol; declare what it is: D = stochastic"),
    (delta(_mat("A", 2, 2)) <= 1, "matrix A is 2 x 2"),
    (delta(sp.Identity(3)) <= 1, "identity I is 3 x 3"),
    (A[0, 0] <= R(1, 2), r"an entry by index is not in the vocabulary .* write entry_min\(A\)"),
    (norm_inf(X * A) <= 1, "X is n x d and A is n x n; the product is not defined"),
    (trace(X) <= 1, "trace needs a square matrix, X is n x d"),
    (norm_inf(softmax(X, mask="causal")) <= 1, "a causal mask needs a square argument"),
    (delta(A) <= d, "the size d occurs but no tokens"),
    (delta(A) <= sp.sin(delta(B)), "sin is not in the vocabulary"),
    (delta(sp.HadamardProduct(A, B)) <= 1, r"\(HadamardProduct\) is not a matrix term of the vocabulary"),
    (norm_inf(delta(A) * B + L) <= 1, "the coefficient delta\\(A\\) of .* depends on a matrix"),
]


@pytest.mark.parametrize("statement,message", REFUSED, ids=[m for _, m in REFUSED])
def test_outside_the_vocabulary_is_one_line(statement, message):
    for fn in (validate, matrices_of, latex, normal_form):
        with pytest.raises(InvalidInput, match=message) as info:
            fn(statement)
        assert "\n" not in str(info.value) and str(info.value).startswith("statement: ")


def test_a_symbol_is_declared_with_a_name_and_a_parameter_with_an_interval():
    for bad, message in ((lambda: stochastic("I"), "reserved"), (lambda: logits("2x"), "an identifier"),
                         (lambda: parameter("a", 1, 0), "the interval is empty"),
                         (lambda: parameter("a", 0, 0.5), "the float 0.5")):
        with pytest.raises(InvalidInput, match=message):
            bad()
    assert parameter("a", 0, 1) != parameter("a", 0, 2)
    with pytest.raises(InvalidInput, match="parameter a is declared over two intervals"):
        validate(delta(A) <= parameter("a", 0, 1) + parameter("a", 0, 2))
    with pytest.raises(InvalidInput, match="used as a stochastic matrix and as a logits one"):
        validate(delta(stochastic("Z")) <= ptp(logits("Z")))


def test_delta_of_a_number_is_refused_when_written():
    with pytest.raises(InvalidInput, match=r"delta: takes a matrix term \(e.g. delta\(A\)\), got 2"):
        delta(2)
    with pytest.raises(InvalidInput, match="delta: takes a matrix term"):
        delta(x)


def test_the_refusal_checks_can_fail():
    """Planted: the nearest accepted neighbours of refused statements pass, so a refusal test fails
    if validation refuses too much (and pytest.raises fails if it refuses too little)."""
    for ok in (delta((A + B) / 2) <= 1 - delta(A) / 2, delta(A**64) <= 1, delta(A) <= R(1, 2),
               delta(A)**-2 >= 1 + delta(A)):
        validate(ok)
    with pytest.raises(pytest.fail.Exception):
        with pytest.raises(InvalidInput):
            validate(delta(A) <= R(1, 2))
