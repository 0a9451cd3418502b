"""Rank lower bounds, stated: symbolic derivations and exact rational checks (docs/theory.md §3)."""
from verification.paper.typeset import statement_latex
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from theory import rank as T
from theory.verdicts import Verdict  # noqa: F401


@pytest.mark.parametrize("n,d,m", [(1, 1, 1), (2, 2, 2), (3, 2, 3), (2, 3, 1), (3, 1, 2)])
def test_excess_risk_identity_is_derived_for_general_symmetric_K(n, d, m):
    assert T.derive_excess_risk_identity(n, d, m) == 0


def test_excess_risk_derivation_detects_a_wrong_factor():
    # the derivation is not vacuous: with a wrong factor c it returns exactly (d - c) tr(D K D^T)
    n = d = 2
    D = sp.Matrix(n, n, lambda a, i: sp.Symbol(f"D_{a}_{i}"))
    K = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"k_{min(i, j)}_{max(i, j)}"))
    trace = sp.expand((D * K * D.T).trace())
    assert T.derive_excess_risk_identity(n, d) == 0
    for wrong in (d - 1, d + 1, 2 * d):
        got = T.derive_excess_risk_identity(n, d, factor=wrong)
        assert got != 0 and sp.expand(got - (d - wrong) * trace) == 0, wrong
    # known answer, n = m = d = 1: E (D x)^2 = D^2 k, so factor 0 leaves the expectation itself
    assert sp.expand(T.derive_excess_risk_identity(1, 1, factor=0)
                     - sp.Symbol("D_0_0") ** 2 * sp.Symbol("k_0_0")) == 0
    # d = 3 columns, n = 1: E ||D x||^2 = 3 D^2 k (independent columns add up)
    assert sp.expand(T.derive_excess_risk_identity(1, 3, factor=0)
                     - 3 * sp.Symbol("D_0_0") ** 2 * sp.Symbol("k_0_0")) == 0


def test_weighted_norm_identities_are_symbolic_zeros():
    out = T.derive_weighted_norm(3)
    assert out["trace_vs_frobenius"] == 0
    assert out["gram"] == sp.zeros(3, 3)


def test_bad_sizes_raise():
    with pytest.raises(ValueError, match="n, d >= 1"):
        T.derive_excess_risk_identity(0, 2)
    with pytest.raises(ValueError, match="n\\(n-1\\)/2"):
        T.cayley_orthogonal([1, 2])
    with pytest.raises(ValueError, match="c_i"):
        T.rational_witness([1, 1], [1, 0], [1], [2])


def test_cayley_is_rational_orthogonal():
    Q = T.cayley_orthogonal([sp.Rational(1, 2), 3, -1])
    assert Q.T * Q == sp.eye(3)
    assert all(isinstance(x, sp.Rational) for x in Q)


def test_witness_known_answers():
    w = T._witness()
    assert w["sigma"] == [3, 2, 1, 0]
    assert T.exact_rank(w["M_star"]) == 3 and T.is_positive_definite(w["K"])
    assert [T.exact_eym_check(w, r) for r in range(5)] == [(14, 14), (5, 5), (1, 1), (0, 0), (0, 0)]


rationals = st.fractions(min_value=-3, max_value=3, max_denominator=5)
positive = st.fractions(min_value=sp.Rational(1, 4), max_value=3, max_denominator=4)


@settings(max_examples=30)
@given(st.integers(2, 3).flatmap(lambda n: st.tuples(
    st.lists(rationals, min_size=n, max_size=n), st.lists(positive, min_size=n, max_size=n),
    st.lists(rationals, min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2),
    st.lists(rationals, min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2),
    st.integers(0, n), st.lists(rationals, min_size=n * n, max_size=n * n))))
def test_eym_exact_on_rational_witnesses(args):
    s, c, su, sq, r, other = args
    w = T.rational_witness(s, c, su, sq)
    risk, tail = T.exact_eym_check(w, r)
    assert risk == tail                                # the explicit minimizer attains the tail sum
    n = len(s)
    # any other student of rank <= r does no better than the tail sum
    B = sp.Matrix(n, n, [sp.Rational(x) for x in other])
    M = B[:, :r] * B[:r, :] if r > 0 else sp.zeros(n, n)
    D = w["M_star"] - M
    assert (D * w["K"] * D.T).trace() >= tail
    r_star = T.exact_rank(w["M_star"])
    assert r_star == sum(1 for x in w["sigma"] if x != 0)
    if r_star > 0:                                     # the deficiency is tight at r* - 1, on every draw
        assert T.exact_eym_check(w, r_star - 1) == (w["sigma"][r_star - 1] ** 2,) * 2
    assert T.exact_eym_check(w, r_star) == (0, 0)      # and vanishes from r* on


def test_exact_rank_and_definiteness_known_cases():
    assert T.exact_rank([[1, 2], [2, 4]]) == 1
    assert T.exact_rank([[0.1, 0.2], [0.2, 0.4]]) == 1   # 0.2 = 2 * 0.1 exactly in binary
    assert T.exact_rank([[0.1, 0.3], [0.3, 0.9]]) == 2   # but 0.1 * 0.9 != 0.3^2 as rationals
    assert T.is_positive_definite([[2, 1], [1, 2]])
    assert not T.is_positive_definite([[1, 2], [2, 1]])
    assert not T.is_positive_definite([[1, 0.5], [0.4, 1]])
    with pytest.raises(ValueError, match="rectangular"):
        T.exact_rank([[1, 2], [3]])


def test_rank_theorems_registered_with_witnesses():
    from theory import REGISTRY, load_all

    load_all()
    ours = [th for th in REGISTRY.values() if th.id.startswith("rank.")]
    assert {"rank.linear.excess_risk_identity", "rank.linear.deficiency", "rank.linear.achievability",
            "rank.linear.gd_recovery", "rank.attention.linear.recovery",
            "rank.attention.softmax.recovery"} <= {th.id for th in ours}
    for th in ours:
        assert th.statement is not None and statement_latex(th)
        assert th.hypotheses(th.witness()).ok is True, (th.id, th.hypotheses(th.witness()))
        assert {"fast", "exact"} <= set(th.evaluators), th.id
        assert callable(th.evaluator("fast")) and callable(th.evaluator("exact")), th.id
    assert T.linear_hypotheses({"M_star": [[1, 0]], "K": [[1, 2], [2, 1]], "r": 1}).ok is False
    assert T.linear_hypotheses({"M_star": [[1, 0]], "K": [[1, 0], [0, 1]], "r": -1}).ok is False
