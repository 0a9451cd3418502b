"""numerics.smt: the Dobrushin statements through z3. Proofs at small sizes, every deliberately wrong
variant refuted with a counterexample re-checked exactly, timeouts reported as undecided."""
import time
from fractions import Fraction

import pytest

from numerics import smt
from numerics.smt import SPLIT, STATEMENTS, decide, decide_split, fractions, recheck
from numerics.smt import exact as X
from numerics.smt import solve

from numerics.smt.causal import STATEMENTS as CAUSAL_D2
from numerics.smt.exhaustive import EXHAUSTIVE

ALL = {**STATEMENTS, **SPLIT, **EXHAUSTIVE, **CAUSAL_D2}
WRONG = sorted(k for k, s in ALL.items() if s.wrong)


@pytest.mark.parametrize("key", ["d1.bound", "d1.iff"])
def test_d1_and_its_equality_condition_are_proved_at_n3(key):
    r = decide(STATEMENTS[key], (3,), timeout=60)
    assert r.status == "proved", r
    assert r.queries == (1 if key == "d1.bound" else 2) and r.variables > 9 and r.size_chars > 0
    assert r.cvc5 == "proved" and r.cvc5_seconds > 0
    assert not r.counterexample


@pytest.mark.parametrize("key", WRONG)
def test_every_wrong_variant_comes_back_with_an_exactly_confirmed_counterexample(key):
    st = ALL[key]
    r = (decide_split if st.encoding == "split" else decide)(st, st.at, timeout=20)
    assert r.status == "counterexample", r
    mats = fractions(r.counterexample)
    assert r.confirmed is True and not st.holds(mats)
    assert r.suite_agrees is not False           # the suite's own exact evaluators agree (dyadic models)
    # the true statement it perturbs holds on the same matrices (the variant, not the theorem, fails)
    perturbs = {"d1.bound.strict": "d1.bound", "d1.iff.one-sided": "d1.iff", "d1.iff.any-pair": "d1.iff",
                "causal.any": "causal", "d2.bound.strict": "d2.bound", "d2.iff.always": "d2.iff",
                "d2.iff.any-pair": "d2.iff", "chain.always": "chain", "d1.bound.exhaustive.wrong": "d1.bound",
                "d2.bound.exhaustive.wrong": "d2.bound", "causal.d2.conjectured": "causal.d2"}
    true_key = key[:-len(".split.wrong")] if key.endswith(".split.wrong") else perturbs[key]
    assert ALL[true_key].holds(mats)


def test_split_encodings_prove_what_the_direct_ones_reach_more_slowly():
    assert decide_split(SPLIT["d2.bound.split"], (3, 3, 3), timeout=60).status == "proved"
    r = decide_split(SPLIT["d1.iff.split"], (4,), timeout=60)
    assert r.status == "proved" and r.queries == 2


def test_a_timeout_is_undecided_with_the_time_spent():
    t0 = time.perf_counter()
    r = decide(STATEMENTS["d2.bound"], (3, 3, 3), timeout=0.5)   # the direct nonlinear encoding: minutes
    assert r.status == "undecided" and r.reason
    assert 0 < r.seconds <= time.perf_counter() - t0 < 0.5 + solve.GRACE + 5


def test_a_solver_that_ignores_its_budget_is_killed(monkeypatch):
    monkeypatch.setattr(solve, "GRACE", 0.3)
    monkeypatch.setattr(solve, "run_z3", lambda *a: time.sleep(30))
    t0 = time.perf_counter()
    r = decide(STATEMENTS["d1.bound"], (2,), timeout=0.2)
    assert r.status == "undecided" and "hard timeout" in r.reason
    assert time.perf_counter() - t0 < 10


def test_cvc5_that_hangs_leaves_z3s_proof_undecided_and_keeps_its_earlier_answers(monkeypatch):
    monkeypatch.setattr(solve, "GRACE", 0.3)
    real = solve.run_cvc5
    monkeypatch.setattr(solve, "run_cvc5", lambda src, t, names: real(src, t, names) if "dA" not in src
                        else time.sleep(30))
    r = decide(STATEMENTS["causal"], (3,), timeout=1)     # "equality" uses delta_exact: dA; both queries do
    assert r.status == "undecided" and r.cvc5 == "undecided" and "z3 unsat, cvc5" in r.reason


def test_both_solvers_decide_the_same_text_and_a_disagreement_is_loud(monkeypatch):
    r = decide(STATEMENTS["d2.iff"], (2, 2, 2), timeout=60)
    assert r.status == r.cvc5 == "proved" and [a[1:4:2] for a in r.answers] == [["unsat", "unsat"]] * 2
    assert r.solver.startswith("z3 ") and r.solver2.startswith("cvc5 ") and len(r.digest) == 64
    monkeypatch.setattr(solve, "run_cvc5", lambda src, t, names: ("sat", 0.0, "", None))
    with pytest.raises(solve.SolverDisagreement, match="z3 unsat, cvc5 sat"):
        decide(STATEMENTS["d1.bound"], (2,), timeout=30)


def test_an_empty_list_of_queries_is_an_error_not_a_proof():
    with pytest.raises(ValueError, match="no queries"):
        decide(STATEMENTS["d1.bound"], (2,), timeout=30, build=lambda: [])
    with pytest.raises(ValueError, match="no queries"):
        decide_split(SPLIT["d2.bound.split"], (3, 3, 1), timeout=30)        # no set T of columns: no case


def test_the_query_text_and_its_hash_do_not_depend_on_what_was_built_before():
    from numerics.smt.solve import digest

    st = SPLIT["d2.iff.split"]
    a = digest(st, (2, 2, 2))
    decide(STATEMENTS["d2.bound"], (3, 3, 3), timeout=0.01)     # builds (and numbers) many other terms
    assert digest(st, (2, 2, 2)) == a
    assert digest(SPLIT["d2.iff.split.wrong"], (2, 2, 2)) != a


def test_recheck_refuses_a_model_on_which_the_statement_holds():
    A = [[Fraction(1), Fraction(0), Fraction(0)], [Fraction(1, 2), Fraction(1, 2), Fraction(0)],
         [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]]
    confirmed, suite = recheck(STATEMENTS["d1.iff"], {"A": A})
    assert confirmed is False and suite is True
    # one-sided self-dominance without "mutually": a real counterexample of the wrong variant
    B = [[Fraction(15, 16), Fraction(1, 16), Fraction(0)], [Fraction(7, 8), Fraction(0), Fraction(1, 8)],
         [Fraction(15, 16), Fraction(0), Fraction(1, 16)]]
    assert recheck(STATEMENTS["d1.iff.one-sided"], {"A": B})[0] is True
    assert X.d1_condition(B, mutual=False) and not X.d1_equality(B)


def test_exact_evaluator_rejects_a_non_stochastic_model():
    with pytest.raises(ValueError, match="row 1"):
        X.delta([[Fraction(1), Fraction(0)], [Fraction(1, 2), Fraction(1, 3)]])


def test_registry_sizes_are_honest_the_cheapest_recorded_sizes_are_proved_again():
    """Each recorded entry says: proved for every size from 2 up to dims. The entries recorded under a
    second are proved again at their dims, every other one at the bottom of its ladder."""
    from theory import theorems

    recorded = [(th.id, key, tuple(dims), secs) for th in theorems() for key, dims, secs in th.smt_checked]
    assert {"dobrushin.factor", "dobrushin.factor.causal", "dobrushin.product"} <= {r[0] for r in recorded}
    for tid, key, dims, secs in recorded:
        st = ALL[key]
        assert st.theorem == tid and not st.wrong and secs > 0 and dims == st.dims(max(dims)), (tid, key, dims)
        at = dims if secs < 1 else st.dims(2)
        r = (decide_split if st.encoding == "split" else decide)(st, at, timeout=60)
        assert r.status == "proved", (tid, key, at, r)


def test_public_api():
    assert set(smt.STATUSES) == {"proved", "counterexample", "undecided"}
    assert STATEMENTS["d2.iff"].shape((2, 3, 2)) == "2x3x2" and STATEMENTS["chain"].shape((3,)) == "2 layers of 3x3"
