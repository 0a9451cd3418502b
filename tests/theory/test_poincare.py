"""Symbolic derivations of theory/poincare.py: Gaussian equality, Villani identities, Hessians."""
import sympy as sp

from theory import poincare as P
from theory.registry import get


def test_gaussian_bakry_emery_is_exact():
    r = P.gaussian_equality()
    assert r["gap_equals_kappa"]
    assert sp.simplify(r["variance"] - 1 / (P.beta * P.lam)) == 0
    assert sp.simplify(r["bakry_emery_bound"] - r["variance"]) == 0   # linear f attains the bound


def test_generator_on_quadratic_is_hermite():
    # L (theta^2 - 1/(beta lam)) = -2 beta lam (theta^2 - 1/(beta lam)): second eigenvalue 2 beta lam
    f = P.theta ** 2 - 1 / (P.beta * P.lam)
    Lf = P.generator(f, P.lam * P.theta ** 2 / 2, [P.theta])
    assert sp.simplify(Lf + 2 * P.beta * P.lam * f) == 0


def test_villani_attn1_grows_for_every_lambda():
    r = P.villani_attn1()
    assert sp.simplify(r["leading"] - P.beta * P.lam ** 2 / 2) == 0
    assert r["lambda_min"] == 0


def test_villani_lora2_identity_and_hessian():
    r = P.villani_lora2()
    assert r["identity"] is True
    b, c = sp.symbols("b c", real=True)
    Lp, Lpp = sp.symbols("Lp Lpp", real=True)
    H = r["hessian"]
    assert sp.simplify(H - sp.Matrix([[Lpp * c ** 2, Lpp * b * c + Lp], [Lpp * b * c + Lp, Lpp * b ** 2]])) == sp.zeros(2)
    # on b c = p fixed the trace grows like Lpp r^2: unbounded below where Lpp < 0
    assert sp.simplify(H.trace() - Lpp * (b ** 2 + c ** 2)) == 0


def test_villani_attn2_leading_coefficient():
    r = P.villani_attn2()
    A0, A2 = sp.symbols("A0 A2", real=True)
    expected = (P.beta * (P.lam + A0) ** 2 - A2) / 2
    assert sp.simplify(r["leading_min"] - expected) == 0
    # the failure threshold: leading coefficient vanishes at lambda = sqrt(A2/beta) - A0
    at = r["leading_min"].subs(P.lam, r["lambda_min"])
    assert sp.simplify(at.subs({A2: 4, A0: sp.Rational(1, 3), P.beta: 2})) == 0


def test_villani_quantity_gaussian():
    V = P.villani_quantity(P.lam * P.theta ** 2 / 2, [P.theta])
    assert sp.simplify(V - (P.beta * P.lam ** 2 * P.theta ** 2 / 2 - P.lam)) == 0


def test_registered_theorems_have_statements_and_witnesses():
    for tid in ("poincare.gibbs.bakry_emery", "poincare.gibbs.holley_stroock",
                "poincare.gibbs.test_function_lower", "poincare.gibbs.villani"):
        th = get(tid)
        assert isinstance(th.statement, sp.Basic)
        assert th.hypotheses(th.witness()).ok is True
        assert set(th.evaluators) >= {"fast", "exact"}
        assert callable(th.evaluator("fast")) and callable(th.evaluator("exact"))


def test_hypotheses_answer_false_and_undecided():
    be = get("poincare.gibbs.bakry_emery")
    assert be.hypotheses({"beta": 1, "lam": 1, "kappa": -0.5}).ok is False
    assert be.hypotheses({"beta": 1, "lam": 1, "kappa": None, "hessian_bounded": False}).ok is False
    assert be.hypotheses({"beta": 1, "lam": 1}).ok is None
    hs = get("poincare.gibbs.holley_stroock")
    assert hs.hypotheses({"beta": 1, "lam": 1, "osc": None}).ok is False
    assert hs.hypotheses({"beta": 0, "lam": 1, "osc": 1}).ok is False


def test_softmax_readout_cumulant_identities():
    # the identities behind the certified Hessian bound of the attention family
    assert P.softmax_readout_derivatives(2) == {"g1": True, "g2": True, "g3": True}
