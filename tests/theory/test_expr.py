"""theory.expr: the vocabulary of a user's statement; what it accepts, how it normalises, and a
one-line refusal naming whatever is outside it."""
from fractions import Fraction

import pytest
import sympy as sp

from theory.errors import InvalidInput
from theory.expr import A, B, C, I, Max, Min, delta, latex, matrices_of, n, normal_form, validate

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
    with pytest.raises(InvalidInput, match="matrix P is not one of A, B, C"):   # D2 is stated over P, Q
        from theory.dobrushin import PRODUCT
        validate(PRODUCT.statement)


def _mat(name, rows=None, cols=None):
    return sp.MatrixSymbol(name, rows if rows is not None else n, cols if cols is not None else n)


REFUSED = [
    (delta(A) <= x, "free symbol x occurs in the bound"),
    (delta(x * A) <= 1, "free symbol x occurs in the matrix term"),
    (delta(A) <= 1 / n, "the size n occurs in the bound"),
    (delta(A.T) <= 1, r"A.T \(Transpose\) is not in the vocabulary"),
    (delta(A.I) <= 1, r"power A\*\*\(-1\) has exponent -1; a matrix power must be a positive integer"),
    (delta(A**R(1, 2)) <= 1, r"exponent 1/2; a matrix power must be a positive integer"),
    (delta(A**65) <= 1, "exponent 65; a matrix power must be a positive integer \\(at most 64\\)"),
    (sp.sqrt(delta(A)) <= 1, r"exponent 1/2; a scalar power must be a nonzero integer"),
    (delta(A) <= 0.5, "float constant 0.5"),
    (delta(A) <= sp.pi / 4, "constant pi/4 in the statement is not rational"),
    (sp.Eq(delta(A), 1), "is not a bound; use <= or <"),
    (sp.Ne(delta(A), 1), "is not a bound; use <= or <"),
    (delta(A) >= 0, "sympy evaluated it to True"),
    (sp.And(delta(A) < 1, delta(B) < 1), "expected one sympy relation"),
    ("delta(A) <= 1", "a string"),
    (delta(A + B) <= 1, "its argument's rows sum to 2, not 1"),
    (delta(2 * A - I) <= 1, "its argument has a negative coefficient"),
    (delta(_mat("D")) <= 1, "matrix D is not one of A, B, C"),
    (delta(_mat("A", 2, 2)) <= 1, "matrix A is 2 x 2"),
    (delta(sp.Identity(3)) <= 1, "identity I is 3 x 3"),
    (delta(A) <= sp.Abs(delta(B) - 1), "Abs is not in the vocabulary"),
    (delta(sp.HadamardProduct(A, B)) <= 1, r"\(HadamardProduct\) is not in the vocabulary"),
]


@pytest.mark.parametrize("statement,message", REFUSED, ids=[m for _, m in REFUSED])
def test_outside_the_vocabulary_is_one_line(statement, message):
    for fn in (validate, matrices_of, latex, normal_form):
        with pytest.raises(InvalidInput, match=message) as info:
            fn(statement)
        assert "\n" not in str(info.value) and str(info.value).startswith("statement: ")


def test_delta_of_a_number_is_refused_when_written():
    with pytest.raises(InvalidInput, match="delta: takes a matrix expression over A, B, C and I, got 2"):
        delta(2)
    with pytest.raises(InvalidInput, match="delta: takes a matrix expression"):
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
