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


# -- the vocabulary beyond delta: parameters, tokens, logits, functionals, Eq, where=, assumptions ----------------
from theory.expr import (Abs, Eq, Min, Rational, col_min_sum, entry_max, entry_min, exp, log, logits, n,  # noqa: E402
                         norm_1, norm_fro, norm_inf, parameter, ptp, slem, softmax, spread, sqrt, stochastic, tanh,
                         tokens, trace)
from numerics.expr import compare, sides  # noqa: E402

alpha = parameter("alpha", 0, 1)
X, L, D = tokens("X"), logits("L"), stochastic("D")


def _violated_exactly(statement, values, assume=(), where=()):
    """The statement fails on ``values`` by the suite's exact or certified evaluator (numerics.expr.sides
    and compare), every where= relation holding there: independently of the SMT encoding."""
    def relation(s):
        c = compile_statement(s, assume)
        lhs, rhs = sides(c, {k: values[k] for k in list(c.matrices) + [p for p, _, _ in c.params]})
        got = compare(lhs, rhs)
        assert got is not None, (s, lhs, rhs)
        return c, got

    for w in where:
        c, got = relation(w)
        assert got == 0 if c.equal else got < 0 if c.strict else got <= 0, w
    c, got = relation(statement)
    return got != 0 if c.equal else got >= 0 if c.strict else got > 0


def _refuted_with(statement, assume=(), where=(), n=2):
    st = statement_for("t.refuted", statement, assume, where=where)
    r = decide(st, (n,), timeout=30)
    assert (r.status, r.cvc5, r.confirmed) == ("counterexample", "counterexample", True), (r.status, r.cvc5, r.reason)
    assert r.suite_agrees in (True, None)
    values = solve.fractions(r.counterexample)
    assert _violated_exactly(statement, values, assume, where)
    return st, r, values


def _proved(statement, assume=(), where=(), n=2):
    st = statement_for("t.proved", statement, assume, where=where)
    r = decide(st, (n,), timeout=30)
    assert (r.status, r.cvc5) == ("proved", "proved"), (r.status, r.cvc5, r.reason)
    return st, r


def test_a_parameter_is_a_variable_over_its_interval_and_the_statement_is_proved_for_every_value():
    st, r = _proved(delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A))
    text = solve.queries(st, (2,))[0][1]
    assert "(declare-fun alpha () Real)" in text and "(<= 0.0 alpha)" in text and "(>= 1.0 alpha)" in text
    assert st.params == (("alpha", Fraction(0), Fraction(1)),) and "alpha in [0, 1]" in st.scope(2)


def test_a_false_parameter_statement_gets_the_parameters_exact_value():
    st, r, values = _refuted_with(delta(alpha * I + (1 - alpha) * A) <= alpha * delta(A))
    assert isinstance(r.counterexample["alpha"], str) and 0 <= values["alpha"] <= 1
    assert sorted(r.counterexample) == ["A", "alpha"]
    narrow = parameter("alpha", Rational(1, 4), Rational(1, 2))        # the interval bounds the model's value
    _, _, values = _refuted_with(delta(narrow * I + (1 - narrow) * A) <= narrow * delta(A))
    assert Fraction(1, 4) <= values["alpha"] <= Fraction(1, 2)


def test_tokens_are_queried_at_each_width_and_the_result_says_so():
    st, r = _proved(spread(A * X) <= delta(A) * spread(X))
    assert st.widths == (1, 2) and [a[0] for a in r.answers] == ["bound d=1", "bound d=2"]
    assert "d = 1, 2 (these widths only)" in st.scope(2) and "d = 1, 2" in st.text
    _, r, values = _refuted_with(spread(A * X) <= spread(X) / 2)
    assert len(values["X"]) == 2 and len(values["X"][0]) in (1, 2)


def test_the_size_n_is_a_constant_per_size():
    _proved(entry_min(A) <= 1 / n)
    _proved(entry_min(A) <= 1 / n, n=3)
    _, _, values = _refuted_with(entry_min(A) < 1 / n)               # equality at the constant matrix
    assert all(v == Fraction(1, 2) for row in values["A"] for v in row)


@pytest.mark.parametrize("statement", [
    ptp(A) <= 1, entry_max(A) >= 1 / n, col_min_sum(A) <= 1, trace(A) <= n, norm_fro(A) <= sqrt(n),
    Eq(ptp(L), Abs(entry_max(L) - entry_min(L))), delta(A * B) <= Min(delta(A), delta(B)),
    Eq(norm_1(A.T), norm_inf(A)), delta(A * B) <= Max(delta(A), delta(B)), col_min_sum(A * D) >= col_min_sum(D)])
def test_true_statements_over_the_functionals_are_proved(statement):
    _proved(statement)


@pytest.mark.parametrize("statement", [ptp(A) < 1, col_min_sum(A) >= Rational(1, 2), norm_1(A) <= 1,
                                       norm_fro(A) <= 1, trace(A * D) >= Rational(1, 2), spread(L) <= entry_max(L)])
def test_false_statements_over_the_functionals_are_refuted_exactly(statement):
    _refuted_with(statement)


def test_a_root_with_an_irrational_side_is_rechecked_by_a_certified_enclosure():
    from numerics.smt.user import sides as user_sides, value_text

    st, r, values = _refuted_with(norm_fro(A) <= 1)
    assert compare(*user_sides(st, r.counterexample)) == 1
    ones = {"A": [[Fraction(1), Fraction(0)], [Fraction(1), Fraction(0)]]}      # norm_fro = sqrt(2) > 1
    assert st.recheck(ones) == (True, True)
    lhs, rhs = user_sides(st, {"A": [["1", "0"], ["1", "0"]]})
    assert not isinstance(lhs, Fraction) and value_text(lhs).startswith("1.41421356237309") and "+/-" in value_text(lhs)
    tie = statement_for("t.tie", norm_fro(A) < sqrt(2))         # fails only where sqrt(2) = sqrt(2)
    assert tie.recheck(ones) == (None, None)                    # a tie of irrationals: not decided, never a verdict
    r = decide(tie, (2,), timeout=30)
    assert r.status == "undecided" and "cannot decide" in r.reason and r.confirmed is None


def test_an_equality_is_proved_or_refuted_by_a_model_where_the_sides_differ():
    st, r = _proved(Eq(norm_inf(A), 1))
    assert st.equal and r.answers[0][0] == "equality"
    _, _, values = _refuted_with(Eq(trace(A), 1))
    lhs, rhs = exact_sides(compile_statement(Eq(trace(A), 1)), values)
    assert lhs != rhs


def test_where_relations_are_constraints_of_the_query():
    bound, hyp = delta(A) <= Rational(1, 2), [entry_min(A) >= Rational(1, 4)]
    _refuted_with(bound)
    st, _ = _proved(bound, where=hyp)
    assert "where entry_min(A) >= 1/4" in st.scope(2)
    _, _, values = _refuted_with(delta(A) <= Rational(1, 4), where=hyp)   # a counterexample inside the relation
    assert min(v for row in values["A"] for v in row) >= Fraction(1, 4)
    assert statement_for("t.w", bound, where=hyp).holds({"A": [[1, 0], [0, 1]]})   # outside where=: nothing claimed


def test_every_assumption_restricts_the_symbols():
    columns = Eq(norm_1(A), 1)                                  # columns summing to 1
    _refuted_with(columns)
    _proved(columns, ("doubly-stochastic",))
    _proved(columns, ("symmetric",), n=3)
    _, _, values = _refuted_with(delta(A) < 1, ("doubly-stochastic",))     # a counterexample inside the hypothesis
    assert all(sum(col) == 1 for col in zip(*values["A"]))
    _, _, values = _refuted_with(delta(A) < 1, ("symmetric",), n=3)
    M = values["A"]
    assert all(M[i][k] == M[k][i] for i in range(3) for k in range(3))
    sym = Eq(norm_1(L), norm_inf(L))                            # logits: symmetric
    _refuted_with(sym)
    _proved(sym, ("symmetric",))
    st = statement_for("t.sym", columns, ("symmetric",))
    assert st.holds({"A": [["1/2", "1/2"], [1, 0]]})           # not symmetric: nothing claimed there


@pytest.mark.parametrize("statement, what", [
    (delta(softmax(L)) <= 1 - exp(-ptp(L)), "softmax"), (ptp(L) <= exp(ptp(L)), "exp"),
    (delta(A) <= log(2 + delta(A)), "log"), (delta(A) <= tanh(1 + delta(A)), "tanh"),
    (slem(A) <= delta(A), "slem")])
def test_what_smt_cannot_decide_exactly_is_refused_in_one_line(statement, what):
    with pytest.raises(InvalidInput, match=f"prove cannot take {what}") as exc:
        statement_for("t.no", statement)
    assert len(str(exc.value).splitlines()) == 1 and "attnbounds stress t.no" in str(exc.value)
    assert ("eigenvalue" if what == "slem" else "transcendental") in str(exc.value)


def test_a_model_outside_the_statement_is_not_a_counterexample():
    st = statement_for("t.p", delta(alpha * I + (1 - alpha) * A) <= alpha * delta(A))
    ones = [[Fraction(1), Fraction(0)], [Fraction(1), Fraction(0)]]        # delta(ones) = 0
    assert st.recheck({"A": ones, "alpha": Fraction(1)}) == (True, True)   # delta(I) = 1 > 0: fails, floats agree
    assert st.recheck({"A": ones, "alpha": Fraction(0)})[0] is False       # 0 <= 0: holds
    assert st.recheck({"A": ones, "alpha": Fraction(2)})[0] is False       # outside [0, 1]: not an instance
