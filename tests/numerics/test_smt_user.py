"""numerics.smt.user: a user's theorem over theory.expr encoded for z3 and cvc5, decided for all
matrices of size n, its counterexamples re-checked exactly (independently of the encoding)."""
from fractions import Fraction

import pytest

from numerics.expr import compile_statement, exact_sides
from numerics.smt import solve
from numerics.smt.user import decide, recheck, statement_for
from theory.errors import InvalidInput
from theory.expr import A, B, I, Max, delta


def _refuted(statement, assume=(), n=2):
    st = statement_for("t.refuted", statement, assume)
    r = decide(st, (n,), timeout=60)
    assert r.status == "counterexample" and r.cvc5 == "counterexample", (r.status, r.cvc5, r.reason)
    assert r.confirmed is True and r.suite_agrees in (True, None)
    mats = solve.fractions(r.counterexample)
    assert sorted(mats) == list(st.matrices)
    for M in mats.values():                               # exactly row-stochastic, of size n
        assert len(M) == n and all(len(row) == n for row in M)
        assert all(sum(row) == 1 and all(v >= 0 for v in row) for row in M)
    lhs, rhs = exact_sides(compile_statement(statement), mats)   # the statement's own exact evaluator
    assert (lhs >= rhs) if st.strict else (lhs > rhs), (lhs, rhs)
    return st, mats


def test_a_true_bound_is_proved_by_both_solvers_at_n2():
    st = statement_for("t.square", delta(A**2) <= delta(A)**2)
    r = decide(st, (2,), timeout=60)
    assert (r.status, r.cvc5, r.queries) == ("proved", "proved", 1)
    assert [a[1] for a in r.answers] == ["unsat"] and [a[3] for a in r.answers] == ["unsat"]
    assert len(r.digest) == 64 and r.digest == solve.digest(st, (2,))


@pytest.mark.parametrize("statement", [delta(A * B) <= Max(delta(A), delta(B)) / 2, delta(A) <= delta(A**2)])
def test_a_false_bound_gets_an_exact_counterexample(statement):
    _, mats = _refuted(statement)
    assert mats


def test_strict_bounds_fail_where_equality_is_attained():
    # delta(A^2) = delta(A)^2 for every 2x2 stochastic A: the non-strict bound is proved, the strict one refuted
    _, mats = _refuted(delta(A**2) < delta(A)**2)
    lhs, rhs = exact_sides(compile_statement(delta(A**2) < delta(A)**2), mats)
    assert lhs == rhs


def test_hypotheses_causal_and_positive_restrict_the_matrices():
    mixed = (delta(A) + delta(B)) / 2 <= delta((A + B) / 2)        # fails for A = I, B = the swap
    _refuted(mixed)
    assert decide(statement_for("t.causal", mixed, ("causal",)), (2,), timeout=60).status == "proved"
    below_one = delta(A) < 1                                          # fails for A = I
    _refuted(below_one)
    st = statement_for("t.positive", below_one, ("positive",))
    assert decide(st, (2,), timeout=60).status == "proved" and st.assume == ("positive",)


def test_a_division_is_encoded_where_its_denominator_is_nonzero():
    st = statement_for("t.div", delta(A**2) / delta(A) <= delta(A))
    assert st.conditions and "denominator" in st.text
    assert decide(st, (2,), timeout=60).status == "proved"
    same_rows = [["1/2", "1/2"], ["1/2", "1/2"]]                  # delta(A) = 0: undefined, nothing claimed
    assert st.holds({"A": same_rows})
    _refuted(delta(A) / delta(A**2) <= 1 / (1 + delta(A)))


def test_the_recheck_is_independent_of_the_encoding():
    st = statement_for("t.wrong", delta(A) <= delta(A**2))
    eye = {"A": [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]]}
    assert recheck(st, eye) == (False, True)                    # equality at I: not a counterexample
    half = {"A": [[Fraction(1), Fraction(0)], [Fraction(1, 2), Fraction(1, 2)]]}
    assert recheck(st, half) == (True, True)                    # 1/2 > 1/4, and the float path agrees
    causal = statement_for("t.c", delta(A) <= delta(A**2), ("causal",))
    assert causal.holds({"A": [[Fraction(1, 2), Fraction(1, 2)], [Fraction(1), Fraction(0)]]})  # not causal


def test_the_query_text_is_deterministic_and_differs_per_statement():
    a, b = statement_for("t.a", delta(A**2) <= delta(A)**2), statement_for("t.b", delta(A**3) <= delta(A)**3)
    assert solve.digest(a, (2,)) == solve.digest(statement_for("t.a", delta(A**2) <= delta(A)**2), (2,))
    assert solve.digest(a, (2,)) != solve.digest(b, (2,)) and solve.digest(a, (2,)) != solve.digest(a, (3,))
    big = statement_for("t.big", delta(A**16) <= delta(A))       # powers by squaring, named products
    text = solve.queries(big, (2,))[0][1]
    assert len(text) < 20_000 and "P" in text


@pytest.mark.parametrize("bad, what", [(delta(A + B) <= 1, "rows sum to 2"), ("delta(A) <= 1", "string"),
                                       (delta(I) <= 1, "no matrix")])
def test_a_statement_outside_the_vocabulary_is_one_line(bad, what):
    with pytest.raises(InvalidInput, match=what) as exc:
        statement_for("t.bad", bad)
    assert len(str(exc.value).splitlines()) == 1
