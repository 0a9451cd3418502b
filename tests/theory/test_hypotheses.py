"""Hypothesis checks say which condition failed: the Hypotheses result, check / hyp_all, and the
reason each family's hypothesis function gives (row and sum, shapes, parameter names)."""
import re

import numpy as np
import pytest
import sympy as sp

import theory.dobrushin as D
import theory.poincare as Pc
import theory.rank as T
from theory import theorems
from theory.hypotheses import HOLDS, Hypotheses, check, hyp_all
from theory.registry import get


# -- the result object and its helpers -------------------------------------------------------------

def test_truthiness_is_ok_is_true():
    assert bool(Hypotheses(True)) is True
    assert bool(Hypotheses(False, "x")) is False
    assert bool(Hypotheses(None, "x")) is False          # undecided is not "holds"


@pytest.mark.parametrize("ok,reason,err", [(False, "", ValueError), (None, "", ValueError),
                                           (True, "why", ValueError), (np.bool_(True), "", TypeError),
                                           (1, "", TypeError), (False, None, TypeError)])
def test_a_reason_is_required_exactly_when_not_ok(ok, reason, err):
    with pytest.raises(err):
        Hypotheses(ok, reason)


@pytest.mark.parametrize("cond,ok", [(True, True), (False, False), (None, None), (np.bool_(False), False),
                                     (np.float64(2.0) > 1, True), (sp.Symbol("x") > 0, None),
                                     (sp.Symbol("x", positive=True) > 0, True),
                                     (sp.Symbol("x", negative=True) > 0, False)])
def test_check_maps_conditions_to_ok(cond, ok):
    h = check(cond, "the reason")
    assert h.ok is ok
    assert h.reason == ("" if ok is True else "the reason")


def test_hyp_all_false_dominates_and_is_lazy_after_it():
    def boom():
        raise AssertionError("evaluated after a failed condition")

    und, f1, f2 = Hypotheses(None, "u"), Hypotheses(False, "first"), Hypotheses(False, "second")
    assert hyp_all(und, f1, boom, f2) == f1
    assert hyp_all(HOLDS, lambda: und, lambda: f2) == f2    # a callable after "undecided" still runs
    assert hyp_all(HOLDS, und, Hypotheses(None, "v")) == und
    assert hyp_all() == HOLDS and hyp_all(HOLDS, lambda: HOLDS).ok is True
    with pytest.raises(TypeError, match="Hypotheses"):
        hyp_all(HOLDS, True)


@pytest.mark.parametrize("th", theorems(), ids=lambda t: t.id)
def test_every_hypothesis_function_returns_the_result_object(th):
    h = th.hypotheses(th.witness())
    assert type(h) is Hypotheses and h == HOLDS


# -- Dobrushin ---------------------------------------------------------------------------------------

def _has_row(reason: str, i: int) -> bool:
    return re.search(rf"\brow {i}\b", reason) is not None


@pytest.mark.parametrize("row,scale", [(1, 0.9), (2, 1.2), (0, 0.5)])
def test_non_stochastic_names_the_row_and_its_sum(row, scale):
    A = D.factor_witness()
    A[row] *= scale
    h = D.FACTOR.hypotheses(A)
    assert h.ok is False and _has_row(h.reason, row), h
    assert repr(float(A[row].sum())) in h.reason
    assert not any(_has_row(h.reason, i) for i in range(3) if i != row)


def test_negative_and_non_finite_entries_are_located():
    A = D.factor_witness()
    A[2, 0], A[2, 2] = -A[2, 0], A[2, 2] + 2 * A[2, 0]     # row sum still 1
    h = D.FACTOR.hypotheses(A)
    assert h.ok is False and "negative" in h.reason and "row 2, column 0" in h.reason
    A[1, 1] = np.nan
    h = D.FACTOR.hypotheses(A)
    assert h.ok is False and "non-finite" in h.reason and "row 1, column 1" in h.reason


@pytest.mark.parametrize("n,m", [(2, 3), (3, 2), (1, 4)])
def test_non_square_says_so(n, m):
    h = D.FACTOR.hypotheses(np.full((n, m), 1 / m))
    assert h.ok is False and "square" in h.reason and str((n, m)) in h.reason


def test_too_small_and_not_a_matrix():
    h = D.FACTOR.hypotheses(np.eye(1))
    assert h.ok is False and "n >= 2" in h.reason
    h = D.FACTOR.hypotheses(np.full(3, 1 / 3))
    assert h.ok is False and str((3,)) in h.reason


@pytest.mark.parametrize("p,q", [((2, 2), (3, 3)), ((3, 4), (3, 4)), ((2, 3), (2, 2))])
def test_product_with_mismatched_shapes_names_both_shapes(p, q):
    P, Q = np.full(p, 1 / p[1]), np.full(q, 1 / q[1])
    h = D.PRODUCT.hypotheses((P, Q))
    assert h.ok is False and str(p) in h.reason and str(q) in h.reason and "Q's rows" in h.reason


def test_product_names_which_factor_is_not_stochastic():
    P, Q = D.product_witness()
    Q = Q.copy()
    Q[1, 0] += 0.25
    h = D.PRODUCT.hypotheses((P, Q))
    assert h.ok is False and h.reason.startswith("Q:") and _has_row(h.reason, 1)
    assert D.PRODUCT.hypotheses(P).ok is False               # one matrix is not a pair


def test_causal_names_the_entry_above_the_diagonal():
    A = D.factor_witness()
    A[1] = [0.5, 0.25, 0.25]
    h = D.CAUSAL.hypotheses(A)
    assert h.ok is False and "causal" in h.reason and "row 1, column 2" in h.reason


# -- rank ----------------------------------------------------------------------------------------------

def test_linear_reasons():
    w = T._witness()
    m, n = len(w["M_star"].tolist()), len(w["K"].tolist())
    h = T.linear_hypotheses({**w, "K": [[1, 0], [0, 1]]})
    assert h.ok is False and f"{m} x {n}" in h.reason and "2 x 2" in h.reason
    h = T.linear_hypotheses({"M_star": [[1, 0]], "K": [[1, 2], [2, 1]], "r": 1})
    assert h.ok is False and "positive definite" in h.reason
    h = T.linear_hypotheses({"M_star": [[1, 0]], "K": [[1, 2], [3, 1]], "r": 1})
    assert h.ok is False and "symmetric" in h.reason and "K[1][0]" in h.reason
    for r in (-1, 1.5):
        h = T.linear_hypotheses({**w, "r": r})
        assert h.ok is False and f"got {r!r}" in h.reason and h.reason.startswith("r ")


@pytest.mark.parametrize("fn,inst,key", [(T.linear_hypotheses, {"M_star": [[1]]}, "K"),
                                         (T.linear_hypotheses, {"K": [[1]]}, "M_star"),
                                         (T.attention_hypotheses, {"W": [[1]]}, "X"),
                                         (T.weights_hypotheses, {"A": [[1]]}, "B")])
def test_missing_data_is_undecided_and_names_the_key(fn, inst, key):
    h = fn(inst)
    assert h.ok is None and key in h.reason and not h


def test_attention_and_weights_shapes():
    w = T._attention_witness()
    X = [list(x) for x in w["X"]]
    X[1] = X[1][:2] + [[1, 0]]
    h = T.attention_hypotheses({**w, "X": X})
    assert h.ok is False and "X[1][2]" in h.reason and "length 2" in h.reason
    h = T.weights_hypotheses({"A": [[1, 0], [0, 1], [0, 0]], "B": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]})
    assert h.ok is False and "3 x 2" in h.reason and "3 x 3" in h.reason
    h = T.weights_hypotheses({"A": [[1, 0, 0], [0, 1, 0]], "B": [[1, 0, 0], [0, 1, 0]]})
    assert h.ok is False and "D >= dh" in h.reason


# -- Poincare ------------------------------------------------------------------------------------------

_POINCARE = [th for th in theorems() if th.id.startswith("poincare.")]


def test_the_poincare_parametrisations_below_are_not_empty():
    assert len(_POINCARE) >= 4, [th.id for th in _POINCARE]      # an empty list would skip them silently


@pytest.mark.parametrize("th", _POINCARE, ids=lambda t: t.id)
@pytest.mark.parametrize("name", ["beta", "lam"])
@pytest.mark.parametrize("value", [0, -1, sp.Rational(-1, 2)])
def test_nonpositive_parameter_is_named(th, name, value):
    h = th.hypotheses({**th.witness(), name: value})
    assert h.ok is False and h.reason == f"{name} must be > 0, got {value}"


@pytest.mark.parametrize("th", _POINCARE, ids=lambda t: t.id)
def test_symbolic_parameter_is_undecided_unless_another_fails(th):
    b = sp.Symbol("b")
    h = th.hypotheses({**th.witness(), "beta": b})
    assert h.ok is None and "beta" in h.reason and "undecided" in h.reason
    h = th.hypotheses({**th.witness(), "beta": b, "lam": -1})
    assert h.ok is False and "lam" in h.reason


def test_bakry_emery_kappa_reasons():
    be = Pc.BAKRY_EMERY
    base = {"beta": 1, "lam": 1}
    h = be.hypotheses(base)
    assert h.ok is None and "kappa" in h.reason
    h = be.hypotheses({**base, "hessian_bounded": False})
    assert h.ok is False and "kappa" in h.reason and "hessian_bounded" in h.reason
    h = be.hypotheses({**base, "kappa": -0.5})
    assert h.ok is False and "kappa" in h.reason and "-0.5" in h.reason
    h = get("poincare.gibbs.holley_stroock").hypotheses({**base, "osc": None})
    assert h.ok is False and "osc" in h.reason
