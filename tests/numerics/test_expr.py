"""numerics.expr: a user's statement compiled once and decided, against the built-in D1 check, the
brute-force definitions (verification.testing.reference) and exact rationals; the error bound
against exact values on random and adversarial inputs; bad input."""
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from numerics.dobrushin import factor_check
from numerics.expr import compile_statement, decide, evaluate, exact_matrix, exact_sides
from numerics.sources.random import generator, sample
from theory.errors import InvalidInput
from theory.expr import A, B, C, I, Max, Min, delta
from theory.verdicts import Verdict
from verification.testing import reference as ref
from verification.testing import strategies as S

D1 = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
SQUARE = compile_statement(delta(A**2) <= delta(A)**2)                     # a corollary of D2
R = sp.Rational
# statements covering every node kind: lin, products, powers, division, Max/Min, 1/3 (not dyadic)
STATEMENTS = [
    delta((I + A) / 2) <= (1 + delta(A)) / 2,
    delta(A**2) <= delta(A)**2,
    delta(A * B) <= Min(delta(A), delta(B))**2,
    delta((A + 2 * B) / 3) <= R(1, 3) * delta(A) + R(2, 3) * delta(B),
    delta((A + B) / 2) < Max(delta(A), delta(B)),
    delta(((I + A) / 2)**2) <= ((1 + delta(A)) / 2)**2,
    delta(A**3) / delta(A) <= delta(A)**2,
    delta(A * B * C) <= delta(A) * delta(B) * delta(C),
    delta(A) + delta(B) <= 1 + delta(A * B),
]
COMPILED = [compile_statement(s) for s in STATEMENTS]


def draw(c, family, n, count, seed=0):
    return {m: sample(family, n, count, generator(seed, family + m, n, 0)) for m in c.matrices}


def exact_verdict(c, mats, b):
    """The verdict by Fractions from the definitions (reference.delta, matmul), independent of numerics.expr."""
    rows = {m: ref.exact_rows(mats[m][b]) for m in c.matrices}
    env = {"A": rows.get("A"), "B": rows.get("B"), "C": rows.get("C")}
    lhs, rhs = reference_sides(c.statement, env)
    if lhs is None:
        return Verdict.NOT_APPLICABLE
    if lhs == rhs:
        return Verdict.VIOLATED if c.strict else Verdict.TIGHT
    return Verdict.HOLDS if lhs < rhs else Verdict.VIOLATED


def reference_sides(statement, env):
    n = len(next(v for v in env.values() if v is not None))
    eye = [[Fraction(int(i == k)) for k in range(n)] for i in range(n)]

    def mat(e):
        if isinstance(e, sp.MatrixSymbol):
            return env[str(e.name)]
        if isinstance(e, sp.Identity):
            return eye
        if isinstance(e, sp.MatAdd):
            parts = [mat(a) for a in e.args]
            return [[sum(p[i][k] for p in parts) for k in range(n)] for i in range(n)]
        if isinstance(e, sp.MatMul):
            c, out = Fraction(1), None
            for a in e.args:
                if isinstance(a, sp.MatrixExpr):
                    out = mat(a) if out is None else ref.matmul(out, mat(a))
                else:
                    c *= Fraction(int(a.p), int(a.q))
            return [[c * v for v in row] for row in out]
        out = mat(e.args[0])
        for _ in range(int(e.args[1]) - 1):
            out = ref.matmul(out, mat(e.args[0]))
        return out

    def val(e):
        if isinstance(e, sp.Rational):
            return Fraction(int(e.p), int(e.q))
        if isinstance(e, delta):
            return ref.delta(mat(e.args[0]))
        args = [val(a) for a in e.args[:1 if isinstance(e, sp.Pow) else None]]
        if isinstance(e, sp.Add):
            return sum(args)
        if isinstance(e, sp.Mul):
            out = Fraction(1)
            for a in args:
                out *= a
            return out
        if isinstance(e, sp.Pow):
            return args[0] ** int(e.args[1])
        return max(args) if isinstance(e, sp.Max) else min(args)

    try:
        return val(statement.lhs), val(statement.rhs)
    except ZeroDivisionError:
        return None, None


# ---- D1 restated: the built-in's verdicts, instance for instance ----------------------------------
@pytest.mark.parametrize("family", ["dirichlet", "sparse", "hard", "softmax-T1", "causal"])
@pytest.mark.parametrize("n", [2, 3, 4, 16])
def test_restated_d1_gives_the_builtin_verdicts(family, n):
    X = sample(family, n, 2000, generator(3, family, n, 0))
    d = decide(D1, {"A": X})
    np.testing.assert_array_equal(d.equal, factor_check(X).equality)
    np.testing.assert_array_equal(d.verdicts, np.where(d.equal, Verdict.TIGHT, Verdict.HOLDS))
    assert d.counts()["violated"] == 0 and sum(d.counts().values()) == len(X)


def test_the_builtin_d1_statement_compiles_as_is():
    from theory.dobrushin import FACTOR                           # sympy.Function("delta"), (1/2)(I + A)

    X = sample("dirichlet", 5, 500, generator(4, "dirichlet", 5, 0))
    mine = decide(compile_statement(FACTOR.statement), {"A": X})
    np.testing.assert_array_equal(mine.codes, decide(D1, {"A": X}).codes)


def test_ties_go_to_exact_arithmetic_and_the_certificate_spares_the_rationals():
    X = sample("dirichlet", 16, 4000, generator(5, "dirichlet", 16, 0))
    d = decide(D1, {"A": X})
    tight = d.verdicts == Verdict.TIGHT
    assert 0.15 < tight.mean() < 0.4                            # D1 is tight on about a quarter
    assert d.exact[tight].all() and d.exact_count == tight.sum()   # every tie, and only the ties, went exact
    assert d.rational_count == 0                               # all certified by the affine forms, batched


# ---- true and false statements ----------------------------------------------------------------------
@pytest.mark.parametrize("family", ["dirichlet", "sparse", "hard", "softmax-T0.25", "causal"])
@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_a_corollary_of_d2_is_never_violated(family, n):
    mats = draw(SQUARE, family, n, 400, seed=n)
    d = decide(SQUARE, mats)
    assert d.counts()["violated"] == 0 and d.counts()["not-applicable"] == 0
    for b in np.flatnonzero(d.verdicts == Verdict.TIGHT)[:15]:  # tight is exact, checked by the definitions
        assert exact_verdict(SQUARE, mats, b) == Verdict.TIGHT


@pytest.mark.parametrize("statement", [delta(A) <= delta(A)**2, delta(A * B) <= Min(delta(A), delta(B))**2])
def test_a_false_statement_has_violations_each_confirmed_exactly(statement):
    c = compile_statement(statement)
    mats = draw(c, "dirichlet", 3, 300, seed=1)
    d = decide(c, mats)
    bad = np.flatnonzero(d.verdicts == Verdict.VIOLATED)
    assert len(bad) > 50
    for b in bad[:40]:
        lhs, rhs = exact_sides(c, {m: mats[m][b] for m in c.matrices})
        assert lhs > rhs
        rows = {m: [[str(v) for v in r] for r in exact_matrix(mats[m][b], m).rows()] for m in c.matrices}
        assert exact_sides(c, rows) == (lhs, rhs)               # the counterexample as exact rationals


def test_an_equality_violates_a_strict_bound():
    c = compile_statement(delta((A + B) / 2) < Max(delta(A), delta(B)))
    mats = draw(c, "hard", 4, 300)
    d = decide(c, mats)
    assert d.equal.any() and (d.verdicts[d.equal] == Verdict.VIOLATED).all()
    assert Verdict.TIGHT not in set(d.verdicts)
    assert (d.verdicts[~d.equal] == Verdict.HOLDS).all()         # delta is convex: strict where not equal


def test_division_by_an_exact_zero_is_not_applicable():
    c = compile_statement(delta(A**2) / delta(A) <= delta(A))
    X = np.stack([np.full((3, 3), 1 / 4) + np.diag([1 / 4] * 3), np.full((3, 3), 1 / 3)])   # delta 1/4 (A^2: 1/16), then 0
    d = decide(c, {"A": X})
    assert [str(v) for v in d.verdicts] == ["tight", "not-applicable"]    # 1/16 / 1/4 = 1/4
    with pytest.raises(InvalidInput, match="undefined on these matrices"):
        exact_sides(c, {"A": X[1]})


def test_instances_outside_the_hypotheses_are_not_applicable():
    """assume=("causal",) / ("positive",): decide calls an instance outside them not-applicable (nothing
    is claimed there), whatever its sides; inside them the verdicts are those without hypotheses."""
    from numerics.expr import assumed

    c = compile_statement(delta(A) < 1)                                  # true for positive A only
    swap, lower, soft = [[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.5, 0.5]], [[0.25, 0.75], [0.5, 0.5]]
    X = np.array([swap, lower, soft])
    assert [str(v) for v in decide(c, {"A": X}).verdicts] == ["violated", "holds", "holds"]
    assert [str(v) for v in decide(c, {"A": X}, ("positive",)).verdicts] == ["not-applicable", "not-applicable",
                                                                             "holds"]
    half = compile_statement(delta((I + A) / 2) >= sp.Rational(1, 2))  # true for causal A only
    d = decide(half, {"A": X}, ("causal",))
    assert [str(v) for v in d.verdicts] == ["not-applicable", "holds", "not-applicable"]
    assert not d.exact[[0, 2]].any()
    assert assumed({"A": X}, ("causal", "positive")).tolist() == [False, False, False]
    assert assumed({"A": X, "B": X[::-1]}, ("causal",)).tolist() == [False, True, False]


# ---- every verdict and every error bound against the definitions ------------------------------------
@pytest.mark.parametrize("k", range(len(COMPILED)), ids=[str(s) for s in STATEMENTS])
def test_verdicts_and_bounds_against_the_definitions_on_random_families(k):
    c = COMPILED[k]
    for family in ("dirichlet", "sparse", "hard", "causal"):
        for n in (1, 2, 4):
            mats = draw(c, family, n, 25, seed=k)
            d = decide(c, mats)
            lhs, rhs, err = evaluate(c, mats)
            for b in range(25):
                want = exact_verdict(c, mats, b)
                assert d.verdicts[b] == want, (family, n, b)
                if want != Verdict.NOT_APPLICABLE:
                    le, re = exact_sides(c, {m: mats[m][b] for m in c.matrices})
                    assert abs(Fraction(lhs[b]) - le) <= Fraction(err[b, 0])
                    assert abs(Fraction(rhs[b]) - re) <= Fraction(err[b, 1])


def batches(names, max_n=5, size=3):
    """{name: (size, n, n)} from the adversarial strategies: near ties at 2^-50, rows off 1 by up
    to 6e-11, twins, one-hot, dyadic, plain floats."""
    family = st.sampled_from([S.any_stochastic, S.near_tie, S.unnormalised, S.stochastic])
    def one(n):
        mats = st.lists(family.flatmap(lambda f: f(n=n)), min_size=size, max_size=size).map(np.stack)
        return st.fixed_dictionaries({m: mats for m in names})
    return st.integers(1, max_n).flatmap(one)


@given(st.data())
def test_the_error_bound_is_never_below_the_true_error(data):
    k = data.draw(st.integers(0, len(COMPILED) - 1))
    c = COMPILED[k]
    mats = data.draw(batches(c.matrices))
    lhs, rhs, err = evaluate(c, mats)
    d = decide(c, mats)
    for b in range(len(lhs)):
        try:
            le, re = exact_sides(c, {m: mats[m][b] for m in c.matrices})
        except InvalidInput:
            assert d.verdicts[b] == Verdict.NOT_APPLICABLE
            continue
        assert abs(Fraction(lhs[b]) - le) <= Fraction(err[b, 0]), (STATEMENTS[k], b)
        assert abs(Fraction(rhs[b]) - re) <= Fraction(err[b, 1]), (STATEMENTS[k], b)
        want = (Verdict.VIOLATED if c.strict else Verdict.TIGHT) if le == re else \
            Verdict.HOLDS if le < re else Verdict.VIOLATED
        assert d.verdicts[b] == want, (STATEMENTS[k], b)


def test_the_bound_check_can_fail():
    """Planted: with no error bound at all, floats disagree with the exact value (so the property
    above has something to catch), and a near tie at 2^-50 holds, strictly: no tolerance made it tight."""
    X = sample("dirichlet", 6, 50, generator(0, "dirichlet", 6, 0))
    lhs, rhs, err = evaluate(D1, {"A": X})
    off = [abs(Fraction(lhs[b]) - exact_sides(D1, {"A": X[b]})[0]) for b in range(50)]
    assert max(off) > 0 and (err[:, 0] > 0).all()
    eps = 2.0 ** -50
    near = np.array([[[0.5 - eps, 0.5 + eps], [0.5, 0.5]]])           # D1 strict by exactly 2^-50
    lhs, rhs = exact_sides(D1, {"A": near[0]})
    assert rhs - lhs == Fraction(eps)
    d = decide(D1, {"A": near})                                      # dyadic: the floats are exact
    assert str(d.verdicts[0]) == "holds" and (d.err == 0).all() and not d.equal[0]
    off = near * np.array([1 + 2.0 ** -40, 1.0])[:, None]             # row 0 off 1: rounding, renormalised
    lhs, rhs = exact_sides(D1, {"A": off[0]})
    assert 0 < rhs - lhs < 1e-14
    d = decide(D1, {"A": off})
    assert str(d.verdicts[0]) == "holds" and d.exact[0] and not d.equal[0]


def test_exact_grid_inputs_need_no_bound():
    X = sample("hard", 5, 200, generator(1, "hard", 5, 0))
    lhs, rhs, err = evaluate(D1, {"A": X})
    assert (err == 0).all()
    d = decide(D1, {"A": X})
    assert d.rational_count == 0 and (d.equal == factor_check(X).equality).all()


# ---- the exact evaluator ------------------------------------------------------------------------
@given(st.floats(0, 1), st.floats(0, 1))
def test_two_by_two_delta_is_abs_det(a, b):
    c = compile_statement(delta(A) <= 1)
    lhs, _ = exact_sides(c, {"A": np.array([[a, 1 - a], [b, 1 - b]])})
    rows = ref.exact_rows(np.array([[a, 1 - a], [b, 1 - b]]))
    assert lhs == abs(rows[0][0] * rows[1][1] - rows[0][1] * rows[1][0])


@given(S.chained_pair(max_n=4).filter(lambda pq: pq[0].shape == pq[1].shape == pq[0].shape[::-1]))
def test_exact_products_match_the_definitions(pq):
    P, Q = pq
    c = compile_statement(delta(A * B * A) <= delta(A) ** 2 * delta(B))
    lhs, rhs = exact_sides(c, {"A": P, "B": Q})
    a, b = ref.exact_rows(P), ref.exact_rows(Q)
    assert lhs == ref.delta(ref.matmul(ref.matmul(a, b), a)) and rhs == ref.delta(a) ** 2 * ref.delta(b)


# ---- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mats,message", [
    ([1], "mats: expected a mapping"),
    ({}, "mats: the statement uses A but mats has no 'A'"),
    ({"A": np.eye(2)[None], "B": np.eye(2)[None]}, "'B' does not occur in the statement"),
    ({"A": np.eye(2)}, r"A: expected shape \(batch, n, n\), got \(2, 2\); pass X\[None\]"),
    ({"A": np.ones((1, 2, 3)) / 3}, "A: must be square"),
    ({"A": np.array([[[0.5, 0.6], [0.5, 0.5]]])}, "A: row 0 sums to 1.1"),
    ({"A": np.array([[[1.5, -0.5], [0.5, 0.5]]])}, "A: negative entry"),
])
def test_bad_batches_are_one_line(mats, message):
    for fn in (evaluate, decide):
        with pytest.raises(InvalidInput, match=message):
            fn(D1, mats)


def test_matrices_of_one_statement_share_a_shape():
    c = compile_statement(delta(A * B) <= delta(A) * delta(B))
    with pytest.raises(InvalidInput, match=r"B has shape \(1, 3, 3\) but A has \(1, 2, 2\)"):
        decide(c, {"A": np.eye(2)[None], "B": np.eye(3)[None]})
    with pytest.raises(InvalidInput, match="different sizes"):
        exact_sides(c, {"A": np.eye(2), "B": np.eye(3)})


@pytest.mark.parametrize("x,message", [
    ([["1/3", "1/3"], [1, 0]], "row 0 sums to 2/3, not exactly 1"),
    ([["1/2", "1/2"], [2, -1]], "row 1 has a negative entry"),
    ([["1/2", "x"], [1, 0]], "not a matrix of rationals"),
    ([[1, 0]], "non-empty square matrix"),
    (np.ones((2, 2, 2)) / 2, r"expected one \(n, n\) matrix"),
])
def test_bad_exact_matrices_are_one_line(x, message):
    with pytest.raises(InvalidInput, match=message):
        exact_sides(D1, {"A": x})
    assert exact_sides(D1, {"A": [["1/2", "1/2"], [0, 1]]}) == (Fraction(3, 4), Fraction(3, 4))   # the contrast


@pytest.mark.parametrize("statement,message", [
    (delta(A) <= sp.Integer(10) ** 400, r"constant 100000000000\.\.\. \(401 characters\) is too large"),
    (delta(I) <= 1, "uses no matrix"),
    (delta(A.T) <= 1, "a transpose is row-stochastic only for a doubly stochastic matrix"),
])
def test_what_cannot_be_compiled_is_one_line(statement, message):
    with pytest.raises(InvalidInput, match=message):
        compile_statement(statement)


def test_the_public_api_resolves():
    import numerics.expr as E

    assert E.__all__ and all(hasattr(E, name) for name in E.__all__)
    assert D1.relation == "<=" and D1.matrices == ("A",) and COMPILED[4].relation == "<"
