"""numerics.expr's exact and certified per-instance evaluator (values, matrices, certified) and
decide on statements beyond delta: known answers (2 x 2 spectra, softmax, exponential-polynomial
identities, balls), ties that no method decides (undecided, never tight), the restated D1 and D2
against the built-in kernels, cross-checks against float computations, and one-line errors."""
import math
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from flint import arb, ctx

from numerics.dobrushin import factor_check
from numerics.dobrushin.batch import check_product
from numerics.expr import compare, compile_statement, decide, evaluate, exact_sides, sides
from numerics.expr import matrices as Mx
from numerics.expr import values as V
from numerics.expr.certified import batches, instance, values_of
from numerics.expr.decide import HOLDS, NOT_APPLICABLE, TIGHT, UNDECIDED, VIOLATED, settle
from numerics.sources.random import generator, sample
from theory.errors import InvalidInput
from theory.expr import (A, B, Eq, I, Rational, col_min_sum, delta, entry_max, entry_min, exp, log, logits, n,
                         norm_1, norm_fro, norm_inf, parameter, ptp, slem, softmax, spread, sqrt, tanh, tokens, trace)

L, X = logits("L"), tokens("X")
alpha = parameter("alpha", 0, 1)
SOFT = compile_statement(delta(softmax(L)) <= 1 - exp(-ptp(L)))
LOG_TIE = compile_statement(Eq((log(2) + log(3)) * delta(A), log(6) * delta(A)))     # sympy keeps log(2) + log(3)


def rational_stochastic(rng, n):
    rows = []
    for _ in range(n):
        w = rng.integers(0, 6, size=n)
        w[rng.integers(n)] += 1
        rows.append([F(int(v), int(w.sum())) for v in w])
    return rows


# ---- values: known answers -------------------------------------------------------------------------
def test_exponential_polynomials_are_exact():
    e = V.exp(F(1))
    assert compare(V.mul(V.exp(F(1, 3)), V.exp(F(2, 3))), e) == 0               # exp(1/3) exp(2/3) = e
    assert V.sign(V.sub(V.power(V.exp(F(1, 2)), 2), e)) == 0                     # (e^(1/2))^2 - e = 0
    t = V.tanh(F(1, 2))
    assert isinstance(t, V.Exp) and compare(t, V.div(V.sub(e, F(1)), V.add(e, F(1)))) == 0
    assert abs(V.approx(t)[0] - math.tanh(0.5)) < 1e-15 and V.tanh(F(0)) == 0
    assert V.log(V.exp(F(2, 3))) == F(2, 3) and V.log(F(1)) == 0 and V.exp(F(0)) == 1
    assert V.rpow(F(9, 4), F(1, 2)) == F(3, 2) and V.rpow(F(8), F(-2, 3)) == F(1, 4)
    assert compare(V.rpow(V.exp(F(1)), F(1, 2)), V.exp(F(1, 2))) == 0            # sqrt(e) = e^(1/2), exactly
    assert compare(V.sub(V.exp(F(1, 7)), V.exp(F(1, 7))), F(0)) == 0


def test_balls_decide_what_separates_and_never_say_equal():
    root2 = V.rpow(F(2), F(1, 2))
    assert isinstance(root2, V.Ball) and compare(root2, F(7, 5)) == 1 and compare(root2, F(3, 2)) == -1
    tie = V.add(V.log(F(2)), V.log(F(3)))
    assert compare(tie, V.log(F(6))) is None                     # equal, but not both exact: undecided
    assert compare(tie, V.log(F(7))) == -1
    big = V.vmax([tie, V.log(F(6))])                             # an undecided max is the ball of the max
    ctx.prec = 128
    try:
        assert big.arb(128).contains(arb(6).log())
    finally:
        ctx.prec = 53


@pytest.mark.parametrize("fn,arg,why", [
    (V.log, F(0), "log of a number <= 0"), (V.log, F(-1, 2), "log"),
    (lambda x: V.rpow(x, F(1, 2)), F(-2), "root of a negative"),
    (lambda x: V.div(F(1), x), F(0), "division by 0"), (lambda x: V.power(x, -2), F(0), "division by 0"),
])
def test_undefined_operations_say_so(fn, arg, why):
    with pytest.raises(V.Undefined, match=why):
        fn(arg)


def test_past_the_term_budget_values_become_balls_that_still_compare():
    p = V.vsum([V.exp(F(k, 31)) for k in range(30)])
    q = V.vsum([V.exp(F(k, 37)) for k in range(30)])
    assert isinstance(p, V.Exp) and isinstance(V.mul(p, q), V.Ball)      # 900 terms > MAX_TERMS
    assert compare(V.mul(p, q), V.mul(q, p)) is None                   # the same number, as balls
    assert compare(V.mul(p, q), V.add(V.mul(p, q), F(1, 10 ** 30))) == -1


# ---- matrices: known answers -------------------------------------------------------------------------
def test_two_by_two_delta_is_abs_det_is_slem():
    rng = np.random.default_rng(0)
    for _ in range(20):
        M = rational_stochastic(rng, 2)
        det = M[0][0] * M[1][1] - M[0][1] * M[1][0]
        assert Mx.delta(M) == abs(det) == Mx.slem(M)
    c = compile_statement(Eq(delta(A), slem(A)))
    d = decide(c, {"A": sample("dirichlet", 2, 50, generator(1, "dirichlet", 2, 0))})
    assert d.counts()["tight"] == 50


def test_slem_exact_where_it_can_be_and_certified_where_not():
    cycle = [[F(0), F(1), F(0)], [F(0), F(0), F(1)], [F(1), F(0), F(0)]]
    assert Mx.slem(cycle) == 1                                       # roots of x^2 + x + 1: modulus exactly 1
    low = [[F(1), F(0), F(0)], [F(1, 3), F(2, 3), F(0)], [F(1, 4), F(1, 4), F(1, 2)]]
    assert Mx.slem(low) == F(2, 3)                                   # triangular: the diagonal
    M = [[F(1, 2), F(1, 2), F(0)], [F(0), F(1, 2), F(1, 2)], [F(1, 3), F(1, 3), F(1, 3)]]
    got = Mx.slem(M)
    want = sorted(abs(np.linalg.eigvals(np.array(M, dtype=float))))[-2]
    assert isinstance(got, V.Ball) and abs(V.approx(got)[0] - want) < 1e-12
    Lr = [[F(0), F(1, 2), F(1, 3)], [F(1), F(1), F(2)], [F(0), F(0), F(-1, 7)]]
    P = np.array([[math.exp(float(v)) for v in row] for row in Lr])
    P /= P.sum(axis=1, keepdims=True)
    s = Mx.slem(Mx.softmax(Lr, "none"))                              # acb_mat.eig on exponential entries
    assert abs(V.approx(s)[0] - sorted(abs(np.linalg.eigvals(P)))[-2]) < 1e-12


def test_softmax_of_a_constant_row_is_uniform():
    S = Mx.softmax([[F(3, 7)] * 4, [F(0), F(1), F(2), F(3)], [F(-2)] * 4, [F(1)] * 4], "none")
    assert S[0] == S[2] == S[3] == [F(1, 4)] * 4 and isinstance(S[1][0], V.Exp)
    assert Mx.delta(Mx.softmax([[F(5)] * 3] * 3, "none")) == 0
    causal = Mx.softmax([[F(1)] * 3] * 3, "causal")
    assert causal == [[1, 0, 0], [F(1, 2), F(1, 2), 0], [F(1, 3)] * 3]


# ---- statements: decide on instances the float filter cannot separate -------------------------------
def test_softmax_bound_is_tight_at_constant_logits_and_holds_elsewhere():
    Ls = np.random.default_rng(2).normal(size=(12, 3, 3))
    Ls[0], Ls[5] = 0.75, -2.0
    d = decide(SOFT, {"L": Ls})
    assert d.codes[0] == d.codes[5] == TIGHT and d.equal[[0, 5]].all()
    assert (d.codes[[1, 2, 3, 4, 6, 7, 8, 9, 10, 11]] == HOLDS).all()
    assert exact_sides(SOFT, {"L": [["1/3"] * 2] * 2}) == (0, 0)


def test_an_identity_of_exponential_polynomials_is_tight():
    c = compile_statement(Eq(tanh(delta(A)) * (exp(2 * delta(A)) + 1), exp(2 * delta(A)) - 1))
    d = decide(c, {"A": sample("dirichlet", 3, 8, generator(6, "dirichlet", 3, 0))})
    assert d.counts()["tight"] == 8                              # zero only by cancellation of e^(2 delta)
    wrong = compile_statement(Eq(tanh(delta(A)) * (exp(2 * delta(A)) + 1), exp(2 * delta(A))))
    assert decide(wrong, {"A": np.array([[[0.5, 0.5], [0.25, 0.75]]])}).codes[0] == VIOLATED


def test_square_roots_against_rationals_are_decided_by_balls():
    c = compile_statement(sqrt(2 * delta(A)) <= Rational(7, 5) * delta(A))
    mats = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5], [0.0, 1.0]]])
    d = decide(c, {"A": mats})
    assert list(d.codes) == [VIOLATED, TIGHT, VIOLATED]          # sqrt(2) > 7/5; 0 = 0; 1 > 7/10


def test_a_tie_no_method_decides_is_undecided_not_tight():
    mats = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]]])
    d = decide(LOG_TIE, {"A": mats})
    assert list(d.codes) == [UNDECIDED, TIGHT] and not d.equal[0]
    assert d.counts() == {"holds": 0, "tight": 1, "violated": 0, "not-applicable": 0, "undecided": 1}


def test_undefined_and_where_are_not_applicable():
    mats = np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.0, 1.0]]])
    assert list(decide(compile_statement(log(delta(A)) <= 0), {"A": mats}).codes) == [NOT_APPLICABLE, TIGHT, HOLDS]
    legacy = compile_statement(delta(A) <= Rational(1, 2), where=[delta(A) <= Rational(1, 2)])
    assert list(decide(legacy, {"A": mats}).codes) == [HOLDS, NOT_APPLICABLE, TIGHT]
    c = compile_statement(entry_max(softmax(L)) < 1, where=[ptp(L) <= 2, Eq(trace(L), 0)])
    Ls = np.array([[[0.0, 1.0], [0.0, 0.0]], [[0.0, 3.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]]])
    assert list(decide(c, {"L": Ls}).codes) == [HOLDS, NOT_APPLICABLE, NOT_APPLICABLE]
    tie_where = compile_statement(delta(A) <= 1, where=[(log(2) + log(3)) * delta(A) <= log(6) * delta(A)])
    assert list(decide(tie_where, {"A": mats[:2]}).codes) == [HOLDS, UNDECIDED]


def test_parameters_tokens_and_sizes():
    rng = np.random.default_rng(4)
    mats = rng.dirichlet(np.ones(3), size=(6, 3))
    c = compile_statement(delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A))
    d = decide(c, {"A": mats, "alpha": ["0", "1/3", "1/2", "1", F(2, 7), 0.25]})
    assert list(d.codes[[0, 3]]) == [TIGHT, TIGHT] and d.counts()["violated"] == 0
    assert decide(compile_statement(Eq(norm_inf(alpha * I + (1 - alpha) * A), 1)),
                  {"A": mats, "alpha": np.linspace(0, 1, 6)}).counts()["tight"] == 6
    Ls, Xs = rng.normal(size=(5, 2, 2)), rng.normal(size=(5, 2, 3))
    two = compile_statement(Eq(spread(softmax(L) * X), delta(softmax(L)) * spread(X)))   # n = 2: always equal
    assert decide(two, {"L": Ls, "X": Xs}).counts()["tight"] == 5
    Ls, Xs = rng.normal(size=(5, 3, 3)), rng.normal(size=(5, 3, 2))
    contraction = compile_statement(spread(softmax(L) * X) <= delta(softmax(L)) * spread(X))
    assert decide(contraction, {"L": Ls, "X": Xs}).counts()["holds"] == 5
    sized = compile_statement(entry_min(A) <= 1 / n)
    assert list(decide(sized, {"A": np.array([[[0.5, 0.5], [0.5, 0.5]]])}).codes) == [TIGHT]


# ---- the restated D1 and D2: the built-in kernels' verdicts ------------------------------------------
@pytest.mark.parametrize("family", ["dirichlet", "sparse", "causal"])
def test_restated_d1_and_d2_give_the_builtin_verdicts(family):
    Xs = sample(family, 3, 40, generator(8, family, 3, 0))
    d1 = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
    p1 = compile_statement(delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A))
    want = np.where(np.asarray(factor_check(Xs).equality), TIGHT, HOLDS)
    np.testing.assert_array_equal(decide(d1, {"A": Xs}).codes, want)
    np.testing.assert_array_equal(decide(p1, {"A": Xs, "alpha": ["1/2"] * 40}).codes, want)
    batch = batches(d1, {"A": Xs})
    generic = [settle(d1, values_of(d1, batch.instance(b), generic=True))[0] for b in range(batch.size)]
    np.testing.assert_array_equal(generic, want)
    d2 = compile_statement(delta(A * B) <= delta(A) * delta(B))
    P, Q = Xs[0::2], Xs[1::2]
    want2 = check_product(Xs)["verdict"]
    np.testing.assert_array_equal(decide(d2, {"A": P, "B": Q}).codes, want2)
    batch = batches(d2, {"A": P, "B": Q})
    generic = [settle(d2, values_of(d2, batch.instance(b), generic=True))[0] for b in range(batch.size)]
    np.testing.assert_array_equal(generic, want2)


# ---- cross-checks against float computations ---------------------------------------------------------
def np_softmax(M):
    e = np.exp(M - M.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def second(M):
    return sorted(abs(np.linalg.eigvals(M)))[-2]


CROSS = [  # (statement, numpy lhs, numpy rhs) on (A, L, X, alpha)
    (delta(A ** 2) <= delta(A) ** 2, None, None),
    (delta((I + A) / 2) <= (1 + delta(A)) / 2, None, None),
    (delta(softmax(L)) <= 1 - exp(-ptp(L)),
     lambda a, l, x, t: 0.5 * max(abs(np_softmax(l)[i] - np_softmax(l)[j]).sum() for i in range(3) for j in range(3)),
     lambda a, l, x, t: 1 - math.exp(-(l.max() - l.min()))),
    (slem(softmax(L / 2)) <= col_min_sum(A) + norm_fro(X),
     lambda a, l, x, t: second(np_softmax(l / 2)),
     lambda a, l, x, t: a.min(axis=0).sum() + math.sqrt((x ** 2).sum())),
    (norm_1(softmax(L, mask="causal") * X) <= sqrt(alpha) + norm_inf(X.T) + log(1 + entry_max(A)),
     lambda a, l, x, t: abs(np.tril(np.exp(l)) / np.tril(np.exp(l)).sum(axis=1, keepdims=True) @ x).sum(axis=0).max(),
     lambda a, l, x, t: math.sqrt(t) + abs(x.T).sum(axis=1).max() + math.log(1 + a.max())),
    (tanh(entry_min(L)) * trace(A * A.T) <= spread(X) ** -1 + Rational(1, 3),
     lambda a, l, x, t: math.tanh(l.min()) * np.trace(a @ a.T),
     lambda a, l, x, t: 1 / (x.max(axis=0) - x.min(axis=0)).max() + 1 / 3),
]


def random_values(c, rng, B):
    out = {}
    for name in c.matrices:
        role = c.role(name)
        if role == "stochastic":
            out[name] = rng.dirichlet(np.ones(3), size=(B, 3))
        else:
            out[name] = rng.normal(size=(B, 3, 3 if role == "logits" else 2))
    for name, _, _ in c.params:
        out[name] = rng.uniform(size=B)
    return out


@pytest.mark.parametrize("k", range(len(CROSS)))
def test_exact_values_agree_with_float_computations(k):
    statement, np_lhs, np_rhs = CROSS[k]
    c = compile_statement(statement)
    rng = np.random.default_rng(10 + k)
    vals = random_values(c, rng, 6)
    batch = batches(c, vals)
    exact = [sides(c, batch.instance(b)) for b in range(6)]
    if True:                                  # the float path's bound encloses every exact value
        lhs, rhs, err = evaluate(c, vals)
        ctx.prec = 256
        try:
            for b, (le, re) in enumerate(exact):
                for v, f, e in ((le, lhs[b], err[b, 0]), (re, rhs[b], err[b, 1])):
                    if np.isfinite(e):
                        assert (V.to_arb(v, 256) - arb(f)).abs_lower() <= e
        finally:
            ctx.prec = 53
    if np_lhs is not None:                    # an independent float computation of the same sides
        for b, (le, re) in enumerate(exact):
            a, l, x, t = (vals.get("A", [None] * 6)[b], vals.get("L", [None] * 6)[b], vals.get("X", [None] * 6)[b],
                          vals.get("alpha", [None] * 6)[b])
            assert abs(V.approx(le)[0] - np_lhs(a, l, x, t)) < 1e-9
            assert abs(V.approx(re)[0] - np_rhs(a, l, x, t)) < 1e-9
    assert all(np.isfinite(err).any() for err in [evaluate(c, vals)[2]])


# ---- the stress sweep counts undecided and not-applicable apart --------------------------------------
def test_a_sweep_chunk_counts_undecided_apart_from_not_applicable(monkeypatch):
    from verification.stress.checks import expr as chunk

    mats = np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.0, 1.0]]])
    monkeypatch.setattr(chunk, "draw_values", lambda *a, **k: {"A": mats})
    c = compile_statement(Eq(log(delta(A)) * (log(2) + log(3)), log(delta(A)) * log(6)))
    spec = {"theorem": "x.tie", "family": "dirichlet", "n": 2, "seed": 0, "compiled": c, "category": "proved",
            "condition": False}
    got = chunk.run_chunk(spec, 0)
    counts = got.summaries["x.tie"]["counts"]
    assert counts == {"tight": 1, "undecided": 1, "not-applicable": 1}
    assert sorted(str(r.verdict) for r in got) == ["not-applicable", "undecided"]
    spec.update(theorem="x.spectral", compiled=compile_statement(Eq(slem(A), delta(A) ** 2)), category="conjecture")
    got = chunk.run_chunk(spec, 0)                   # 2 x 2: slem = delta, so equal only at delta 0 or 1
    assert got.summaries["x.spectral"]["counts"] == {"tight": 2, "violated": 1}
    (refuted,) = [r for r in got if str(r.verdict) == "refuted"]
    assert refuted.extra["counterexample"] == {"A": [["1/2", "1/2"], ["0", "1"]]}
    assert (refuted.extra["lhs"], refuted.extra["rhs"]) == ("1/2", "1/4")


# ---- one-line errors -----------------------------------------------------------------------------------
MIXED = compile_statement(norm_inf(softmax(L) * X) <= norm_inf(X) + alpha)
GOOD = {"L": np.zeros((2, 2, 2)), "X": np.ones((2, 2, 3)), "alpha": [0, 1]}


@pytest.mark.parametrize("change,message", [
    ({"alpha": None}, "values: the statement uses alpha but values has no 'alpha'"),
    ({"Z": np.zeros((2, 2, 2))}, "values: 'Z' does not occur in the statement"),
    ({"alpha": [0, "3/2"]}, r"alpha \(instance 1\): 3/2 is outside the parameter's interval \[0, 1\]"),
    ({"alpha": [0]}, "alpha: expected 2 values"),
    ({"alpha": [0, "x"]}, r"alpha \(instance 1\): 'x' is not a rational number"),
    ({"L": np.full((2, 2, 2), np.nan)}, r"L: matrix 0, entry \(0, 0\) is nan"),
    ({"L": np.zeros((2, 2))}, r"L: expected shape \(batch, rows, cols\), got \(2, 2\); pass X\[None\]"),
    ({"X": np.ones((2, 3, 3))}, "values: X is 3 x 3 but must be n x d with n = 2"),
    ({"X": np.ones((3, 2, 3))}, "values: X has 3 instances but L has 2"),
])
def test_bad_batches_are_one_line(change, message):
    vals = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(InvalidInput, match=message) as err:
        decide(MIXED, vals)
    assert "\n" not in str(err.value)
    assert list(decide(MIXED, GOOD).codes) == [TIGHT, HOLDS]             # the contrast


@pytest.mark.parametrize("vals,message", [
    ({"L": [[0, 1], [0, 0]], "X": [[1], [2]], "alpha": "2"}, r"alpha: 2 is outside the parameter's interval"),
    ({"L": [[0, 1], [0]], "X": [[1], [2]], "alpha": 0}, "L: must be a non-empty matrix with rows of one length"),
    ({"L": [[0, 1], [0, "1/0"]], "X": [[1], [2]], "alpha": 0}, r"L\[1, 1\]: '1/0' is not a rational number"),
    ({"L": [[0, 1], [0, 0]], "X": [[1], [2], [3]], "alpha": 0}, "X is 3 x 1 but must be n x d with n = 2"),
])
def test_bad_instances_are_one_line(vals, message):
    with pytest.raises(InvalidInput, match=message):
        instance(MIXED, vals)


def test_non_rational_and_undefined_sides_are_one_line():
    with pytest.raises(InvalidInput, match=r"the rhs of .* is not a rational number on this instance \(about "
                                           r"0\.632.*numerics\.expr\.sides gives it"):
        exact_sides(SOFT, {"L": [[0, 1], [0, 1]]})
    with pytest.raises(InvalidInput, match=r"is undefined on this instance \(a log of a number <= 0\)"):
        sides(compile_statement(log(delta(A)) <= 0), {"A": [[1, 0], [1, 0]]})
    assert exact_sides(compile_statement(delta(alpha * I + (1 - alpha) * A) <= 1),
                       {"A": [[1, 0], [0, 1]], "alpha": "1/3"}) == (F(1), F(1))


# ---- exact algebra against mpmath at 60 digits -----------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.fractions(-2, 2, max_denominator=6)), min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(1, 3), st.fractions(-2, 2, max_denominator=6)), min_size=1, max_size=3),
       st.fractions(-1, 1, max_denominator=5))
def test_exponential_quotients_and_their_signs_agree_with_mpmath(num, den, shift):
    import mpmath

    def build(terms):
        return V.vsum([V.mul(F(c), V.exp(r)) for c, r in terms])

    x = V.div(build(num), build(den))                 # den has positive coefficients: never 0
    y = V.add(V.mul(x, V.exp(shift)), V.tanh(shift))
    with mpmath.workdps(60):
        def mp(terms):
            return mpmath.fsum(c * mpmath.exp(mpmath.mpf(r.numerator) / r.denominator) for c, r in terms)
        mx = mp(num) / mp(den)
        my = mx * mpmath.exp(mpmath.mpf(shift.numerator) / shift.denominator) + \
            mpmath.tanh(mpmath.mpf(shift.numerator) / shift.denominator)
        for v, m in ((x, mx), (y, my), (V.sub(y, x), my - mx)):
            s = V.sign(v)
            assert s is not None
            assert (s == 0 and abs(m) < mpmath.mpf(10) ** -50) or (s != 0 and m * s > 0)
            assert abs(V.approx(v)[0] - float(m)) <= 1e-12 * max(1.0, abs(float(m)))
