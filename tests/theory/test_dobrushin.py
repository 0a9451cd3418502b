"""Theorem objects: derivations check out symbolically; every registered theorem is complete."""
from verification.paper.typeset import statement_latex
import numpy as np
import pytest
import sympy as sp

from hypothesis import given, strategies as st

import theory.dobrushin as D
from verification.testing import reference as ref
from verification.testing import strategies as S
from theory import theorems
from theory.registry import HOLDS, Hypotheses, Theorem, register


def test_factor_closed_form_holds_in_every_sign_case():
    cases = D.derive_factor_closed_form()
    assert set(cases) == {"x+y+", "x+y-", "x-y+", "x-y-"}
    assert all(sp.simplify(v) == 0 for v in cases.values())


def test_slack_formula():
    dl, d, xm, ym = sp.symbols("delta d x^- y^-", nonnegative=True)
    assert sp.simplify(D.factor_slack_formula() - ((dl - d) + xm + ym) / 2) == 0


def test_two_by_two_delta_is_abs_det_and_d2_always_tight():
    out = D.derive_two_by_two()
    assert all(sp.simplify(v) == 0 for v in out.values())


def test_causal_corollary():
    A = np.tril(np.random.default_rng(0).random((6, 6)))
    A /= A.sum(1, keepdims=True)
    assert D.causal_first_pair_self_dominant(A)
    A[0] = [0.5, 0.5, 0, 0, 0, 0]                           # first row no longer one-hot
    A[1] = [0.9, 0.1, 0, 0, 0, 0]
    assert not D.causal_first_pair_self_dominant(A)


@pytest.mark.parametrize("th", theorems(), ids=lambda t: t.id)
def test_every_registered_theorem_is_complete(th):
    assert isinstance(th.statement, sp.Basic) and statement_latex(th)
    assert th.equality and th.references
    w = th.witness()
    h = th.hypotheses(w)
    assert isinstance(h, Hypotheses) and h.ok is True and h.reason == "", (th.id, h)
    # registered without evaluators (Proposition D1a), a statement over theory.expr has numerics.expr's
    fast = th.evaluator("fast" if "fast" in th.evaluators else "float")
    exact = th.evaluator("exact")
    assert callable(fast) and callable(exact)
    assert "fast" in th.evaluators or th.evaluators["float"] == "numerics.expr:evaluate"


def test_dobrushin_witnesses_are_tight_by_the_exact_evaluators():
    fac = D.FACTOR.evaluator("exact")
    assert bool(fac(D.factor_witness()))
    prod = D.PRODUCT.evaluator("exact")
    assert bool(prod(*D.product_witness()))
    assert D.FACTOR.hypotheses(np.eye(1)).ok is False       # n >= 2 required
    assert D.FACTOR.hypotheses(np.array([[0.5, 0.6], [0.5, 0.5]])).ok is False


def test_registry_rejects_duplicates_and_bad_categories():
    with pytest.raises(ValueError, match="registered twice"):
        register(Theorem(id="dobrushin.factor", title="x", category="proved", statement=sp.Eq(1, 1),
                         equality="", hypotheses=lambda _: HOLDS, witness=lambda: None))
    with pytest.raises(ValueError, match="category"):
        Theorem(id="a.b", title="x", category="folklore", statement=sp.Eq(1, 1), equality="",
                hypotheses=lambda _: HOLDS, witness=lambda: None)


@given(st.integers(2, 6).flatmap(lambda n: S.causal(n=n)))       # n >= 2: a 1 x 1 matrix has no pair
def test_causal_attention_is_always_tight_through_token_zero(A):
    from numerics.dobrushin import factor_check

    assert D.CAUSAL.hypotheses(A).ok is True
    assert D.causal_lemma_bound(A)                          # delta attained by a pair (0, j), exactly
    fc = factor_check(A)
    assert bool(fc.equality) and bool(fc.through_first)
    assert ref.factor_equality(A)                           # and by the brute-force definitions


def test_causal_hypotheses_reject_non_causal():
    h = D.CAUSAL.hypotheses(np.full((3, 3), 1 / 3))
    assert h.ok is False and "not causal" in h.reason and "row 0, column 1" in h.reason
