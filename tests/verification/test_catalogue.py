"""Known-answer catalogue: every instance through every backend, one comparison (verification.testing.catalogue)."""
import dataclasses
from fractions import Fraction

import pytest

from theory.registry import get
from theory.verdicts import Verdict
from verification.testing import catalogue as cat

INSTANCES = cat.instances()
PAIRS = [pytest.param(inst, b, id=f"{inst.name}-{b}") for inst in INSTANCES for b in cat.backends_for(inst.theorem)]
DOBRUSHIN_BACKENDS = {"float64", "float32", "torch-cpu", "cuda", "exact"}


@pytest.mark.parametrize("inst,backend", PAIRS)
def test_known_answer(inst, backend):
    if not cat.available(backend):
        pytest.skip("needs a GPU: no CUDA device here")
    ev = cat.evaluate(inst, backend)
    assert isinstance(ev, cat.Evaluation)
    assert ev.verdict is inst.expected_verdict(backend)          # exact, never by tolerance
    if cat.TOLERANCE[backend] is None:
        assert isinstance(ev.slack, Fraction) and ev.slack == inst.slack
    assert cat.mismatches(inst, backend, ev) == []


def test_catalogue_names_theorems_and_exact_answers():
    names = [inst.name for inst in INSTANCES]
    assert len(names) == len(set(names))
    for inst in INSTANCES:
        assert get(inst.theorem).id == inst.theorem
        assert inst.slack is None or isinstance(inst.slack, Fraction)
        assert inst.value is None or isinstance(inst.value, Fraction)
        assert set(inst.backend_verdicts) <= set(cat.backends_for(inst.theorem))
    assert {i.theorem for i in INSTANCES} >= {"dobrushin.factor", "dobrushin.product", "rank.linear.eckart_young",
                                              "poincare.gibbs.bakry_emery"}


def test_every_dobrushin_instance_covers_every_backend():
    dob = [i for i in INSTANCES if i.theorem.startswith("dobrushin.")]
    assert len(dob) >= 10
    for inst in dob:
        assert set(cat.backends_for(inst.theorem)) == DOBRUSHIN_BACKENDS
        got = cat.evaluations(inst)
        assert set(got) == DOBRUSHIN_BACKENDS - (set() if cat.available("cuda") else {"cuda"})


def test_expected_answers_spot_values():
    by = {i.name: i for i in INSTANCES}
    assert (by["d1-cyclic-shift"].verdict, by["d1-cyclic-shift"].slack) == (Verdict.HOLDS, Fraction(1, 2))
    assert (by["d1-2x2-antidiagonal"].slack, by["d1-identity"].slack) == (Fraction(1, 2), 0)
    assert by["d2-strict"].slack == Fraction(3, 32) and by["d2-2x2"].verdict is Verdict.TIGHT
    assert by["rank-eckart-young-r1"].value == 5 and by["rank-deficiency-r1"].slack == 4
    assert by["poincare-bakry-emery-gauss1"].value == Fraction(1, 2)


def test_closed_form_matches_brute_force_definition():
    for inst in INSTANCES:
        if inst.theorem.startswith("dobrushin.factor"):
            assert cat.d1_closed_form(inst.data) == cat.evaluate(inst, "exact").slack


def test_harness_detects_wrong_answers():
    inst = cat.d2_strict()
    ev = cat.evaluate(inst, "float64")
    assert cat.mismatches(inst, "float64", ev) == []
    wrong_verdict = dataclasses.replace(inst, verdict=Verdict.TIGHT)
    assert any("verdict" in m for m in cat.mismatches(wrong_verdict, "float64", ev))
    wrong_slack = dataclasses.replace(inst, slack=inst.slack + Fraction(1, 2 ** 20))
    assert any("slack" in m for m in cat.mismatches(wrong_slack, "float64", ev))
    # exact backends compare exactly: a float equal in value is not accepted
    exact = cat.evaluate(inst, "exact")
    assert cat.mismatches(inst, "exact", dataclasses.replace(exact, slack=float(exact.slack)))
    # a float backend claiming tightness where the theorem is strict is caught
    assert cat.mismatches(inst, "float32", dataclasses.replace(ev, verdict=Verdict.TIGHT))
    # and an undecided backend may not claim the true verdict
    ey = cat.eckart_young_r1()
    assert cat.mismatches(ey, "fast", cat.Evaluation(Verdict.TIGHT, 0.0, 5.0))
