"""The causal D2 condition (numerics.smt.causal, docs/theory.md §1 "Corollary (causal D2)"): exact
agreement with delta(PQ) = delta(P) delta(Q) on random exact causal pairs full of ties and zeros and
on every small 3x3 pair, the first conjecture refuted, and both solvers at n = 2, 3."""
import itertools
import random
from fractions import Fraction

import numpy as np
import pytest

from numerics.smt import causal as C
from numerics.smt.solve import decide


def test_the_tie_example_is_an_equality_case_outside_the_first_conjecture():
    P, Q = C.TIE_EXAMPLE
    assert P[1][0] == P[2][0] and C.positive(P) and C.positive(Q)
    assert C.equality(P, Q) and C.condition(P, Q) and not C.conjectured(P, Q)
    assert C.holds({"P": P, "Q": Q}) and not C.holds_conjectured({"P": P, "Q": Q})


def test_ten_thousand_exact_random_causal_pairs_with_ties_and_zeros():
    out = C.exact_check(10_000, sizes=(3, 4, 5, 6), seed=1)
    assert out["pairs"] == 10_000 and out["disagree"] == []
    assert 500 < out["equality"] < 9_500                    # both outcomes are well represented
    assert out["conjecture_refuted"] > 0                    # ties: the first conjecture fails


def _all_causal(n: int, lo: int, hi: int) -> list:
    rows = []
    for l in range(n):
        opts = {tuple(Fraction(x, sum(w)) for x in w) + (Fraction(0),) * (n - 1 - l)
                for w in itertools.product(range(lo, hi + 1), repeat=l + 1) if sum(w)}
        rows.append(sorted(opts))
    return [list(m) for m in itertools.product(*rows)]


def test_every_small_3x3_pair_zeros_included():
    mats = _all_causal(3, 0, 2)
    assert len(mats) == 95
    bad = [(P, Q) for P in mats for Q in mats if C.equality(P, Q) != C.condition(P, Q)]
    assert bad == []


def _buggy(P, Q):                                           # only Q_l0 = q for the row l itself
    n = len(P)
    p, q = min(r[0] for r in P[1:]), min(r[0] for r in Q[1:])
    return p == 1 or q == 1 or any(P[l][0] == p and Q[l][0] == q for l in range(1, n))


def test_a_planted_bug_in_the_condition_is_caught(monkeypatch):
    monkeypatch.setattr(C, "condition", _buggy)
    assert C.exact_check(2_000, sizes=(3, 4), seed=1)["disagree"]


def test_registry_evaluators_agree_with_the_fraction_evaluators_on_dyadic_pairs():
    rng = random.Random(3)
    pairs = [C.sample_pair(4, rng, "dyadic") for _ in range(200)]
    P = np.array([[[float(v) for v in r] for r in a] for a, _ in pairs])
    Q = np.array([[[float(v) for v in r] for r in b] for _, b in pairs])
    got = C.causal_product_condition(P, Q)
    want = np.array([C.equality(a, b) for a, b in pairs])
    assert got.shape == (200,) and (got == want).all() and want.any() and not want.all()
    gap = C.causal_product_gap(P, Q)
    assert (gap >= -1e-12).all() and (np.abs(gap[want]) < 1e-12).all()
    with pytest.raises(ValueError, match="not causal"):
        C.causal_product_condition(np.full((3, 3), 1 / 3), np.eye(3))


def test_registered_theorem():
    import theory.dobrushin as D

    th = D.CAUSAL_PRODUCT
    assert th.category == "proved" and th.hypotheses(th.witness()).ok is True
    assert bool(th.evaluator("exact")(*th.witness()))
    assert th.hypotheses((np.full((3, 3), 1 / 3), np.eye(3))).ok is False


def test_z3_proves_the_condition_at_n3_and_refutes_the_first_conjecture():
    r = decide(C.STATEMENTS["causal.d2"], (3, 3, 3), timeout=60)
    assert r.status == "proved" and r.queries == 2, r
    st = C.STATEMENTS["causal.d2.conjectured"]
    w = decide(st, st.at, timeout=60)
    assert w.status == "counterexample" and w.confirmed is True and w.suite_agrees is not False, w


def test_z3_proves_the_condition_at_n4_with_the_causal_lemma():
    from numerics.smt.exhaustive import solver_status

    r = decide(C.STATEMENTS["causal.d2.lemma"], (4, 4, 4), timeout=60)
    assert solver_status(r)["z3"] == "proved", r


def test_cvc5_agrees_at_n2_and_refutes_the_first_conjecture():
    assert C.cvc5_decide(C.STATEMENTS["causal.d2"], (2, 2, 2), timeout=60)["status"] == "proved"
    st = C.STATEMENTS["causal.d2.conjectured"]
    w = C.cvc5_decide(st, st.at, timeout=60)
    assert w["status"] == "counterexample" and w["confirmed"] is True, w


def test_the_stress_search_on_causal_pairs_finds_no_counterexample_and_catches_a_planted_bug(monkeypatch):
    from verification.stress.checks import search as S
    from numerics.dobrushin.batch import VIOLATED

    res = S.search_chunk(S.CAUSAL, 3, 120, seed=0)
    verdicts = [r.verdict.value for r in res]
    assert verdicts and "violated" not in verdicts and "tight" in verdicts
    starts = S.causal_starts(4, 48, seed=0)
    assert (np.triu(starts, 1) == 0).all() and (starts.sum(-1) == 1).all()
    assert not (S.causal_score(starts)[0] == VIOLATED).any()
    monkeypatch.setattr(C, "condition", _buggy)
    assert (S.causal_score(starts)[0] == VIOLATED).any()


def test_the_predicted_share_is_the_share_of_exactly_tight_pairs():
    """On continuous causal pairs the condition's prediction (row 1 the first minimiser of both first
    columns) is the exact D2 verdict, pair by pair; pi_2 = 1; the predicted share's interval holds
    the share measured on independent pairs (a wrong prediction, pi_n instead of pi_n^2, does not)."""
    import numpy as np

    from numerics.dobrushin import check_batch, minimiser_count, predicted_share, predicted_tight
    from numerics.sources.random import generator, sample

    for n in (2, 3, 4):
        A = sample("causal", n, 4000, generator(7, "causal", n, 0))
        tight = check_batch("dobrushin.product", A)["verdict"] == 1          # code 1: tight
        assert np.array_equal(tight, predicted_tight(A[0::2], A[1::2])), n
    k, m = minimiser_count("causal", 2, 100, seed=1, offset=10)
    assert (k, m) == (100, 100) and predicted_share(k, m)[0] == 1.0
    k, m = minimiser_count("causal", 3, 20000, seed=1, offset=10)
    share, lo, hi = predicted_share(k, m)
    A = sample("causal", 3, 40000, generator(2, "causal", 3, 0))
    measured = float(np.mean(check_batch("dobrushin.product", A)["verdict"] == 1))
    assert lo - 0.01 < measured < hi + 0.01 and not (lo - 0.01 < k / m < hi + 0.01)
