"""The float tests of D1 at every tolerance and the verdicts within rounding of a tie
(numerics.dobrushin.float_tests: values, at_tolerance, near_tie), the floats the records keep beside
each float verdict (verification.measure.attention.float_values_key), the sweep's findings
(verification.trained.findings.sweep), its tables (verification.trained.report.tables.sweep_rows,
ties_rows) and its paper part (verification.trained.paper.sweep)."""
import re
from pathlib import Path

import numpy as np
import pytest

from numerics.dobrushin import factor_check
from numerics.dobrushin.float_tests import (CONDITION_VALUES, DTYPES, IMPLEMENTATIONS, SIDES, at_tolerance, near_tie,
                                            rounding, values, verdicts)
from verification.trained.findings.sweep import KINDS, TOLERANCES

SECTIONS = Path(__file__).resolve().parents[2] / "paper" / "sections"

# an exact tie broken by rounding: with row 0 = (1/2, 1/4, 1/4), d_01 = A_11 - 1/4 and d_02 = A_21 - 1/4, and the
# rows 1 and 2 hold the same A_11 = A_21 = b over the same exact row sum (a2 + c2 = a1 exactly), so the pairs
# (0, 1) (self-dominant) and (0, 2) (not: A_22 = c2 < A_02 = 1/4) tie exactly at the maximum: D1 is tight. In
# float32 the rows round differently, d_02 comes out above d_01 and the condition says strict
A1 = 0.3603320422848437
A2 = 0.3030583939459652
TIE = np.array([[0.5, 0.25, 0.25], [A1, 1 - A1, 0.0], [A2, 1 - A1, A1 - A2]])


def test_an_exact_tie_broken_by_rounding_is_within_rounding_of_a_tie():
    assert bool(factor_check(TIE, renormalise=True).equality)                 # exact: tight
    assert str(verdicts(TIE, "float32", "condition")) == "holds"             # float32: the tie broken
    assert str(verdicts(TIE, "float64", "condition")) == "tight"
    v = values(TIE, "float32", "condition")
    assert 0 < float(v["slack"]) < rounding(3, "float32")                    # strict by a rounding's width
    assert bool(near_tie(v, "float32", 3))
    # a tolerance of the slack's size gives tight back; below it, still strict
    assert str(at_tolerance("condition", v, 1e-7)) == "tight"
    assert str(at_tolerance("condition", v, 1e-9)) == "holds"
    # far from any tie: a dyadic self-dominant matrix with a unique maximising pair is not near one
    far = values(np.array([[0.75, 0.25, 0.0], [0.125, 0.75, 0.125], [0.0, 0.25, 0.75]]), "float32", "condition")
    assert float(far["slack"]) == 0 and not bool(near_tie(far, "float32", 3))


def test_the_equality_test_recovers_a_tie_at_a_tolerance_above_its_rounding():
    # [[a, 1 - a], [b, 1 - b]], a > b: self-dominant, so tight exactly; in float32 the two sides differ by an ulp
    A = np.array([[0.61, 0.39], [0.29, 0.71]], dtype=np.float32).astype(np.float64)
    assert bool(factor_check(A, renormalise=True).equality)
    v = values(A, "float32", "renormalised")
    assert set(v) == set(SIDES) and float(v["lhs"]) != float(v["rhs"])
    got = [str(at_tolerance("renormalised", v, t)) for t in TOLERANCES]
    assert got == ["violated", "violated", "violated", "tight", "tight", "tight"], got
    assert str(at_tolerance("renormalised", v, 1e-9, relative=True)) == "violated"
    assert str(at_tolerance("renormalised", v, 1e-7, relative=True)) == "tight"


def _tight_counts(A):
    """{(precision, test, kind): tight verdicts at each tolerance of the sweep} of the matrices ``A``."""
    out = {}
    for dt in DTYPES:
        for name in IMPLEMENTATIONS:
            v = values(A, dt, name)
            for kind in KINDS:
                out[(dt, name, kind)] = [int((at_tolerance(name, v, t, kind == "relative") == "tight").sum())
                                         for t in TOLERANCES]
    return out


def test_the_tight_count_grows_with_the_tolerance_and_tolerance_0_is_the_float_test():
    from numerics.sources.random import sample

    A = sample("softmax-T1", 24, 300, np.random.default_rng(7)).astype(np.float32).astype(np.float64)
    counts = _tight_counts(A)
    for key, c in counts.items():
        assert all(a <= b for a, b in zip(c, c[1:])), (key, c)             # monotone in t
    assert any(c[0] < c[-1] for c in counts.values())                       # and the check can see a change
    for dt in DTYPES:
        for name in IMPLEMENTATIONS:
            v = values(A, dt, name)
            assert (at_tolerance(name, v, 0.0) == verdicts(A, dt, name)).all(), (dt, name)
            assert set(v) == set(CONDITION_VALUES if name == "condition" else SIDES)
    # the monotonicity check can fail: a count that drops is caught
    bad = [5, 4]
    assert not all(a <= b for a, b in zip(bad, bad[1:]))


def test_stored_values_give_the_stored_verdicts_back():
    from verification.measure.attention import float_key, float_values_key, instance_records
    from verification.testing.fakes import causal_standin

    inst = causal_standin(T=7, L=2, H=3, seed=1, model="minilm", causal=False)
    inst.attention[:] = inst.attention.astype(np.float32)
    recs = [r for r in instance_records(inst, comparison=False, float_tests=True)
            if r.theorem == "dobrushin.factor" and r.provenance["variant"] == "all"]
    assert recs
    for r in recs:
        for dt in DTYPES:
            for name in IMPLEMENTATIONS:
                stored = r.extra[float_values_key(dt, name)]
                assert all(x is None or isinstance(x, float) for x in stored.values())
                assert str(at_tolerance(name, stored, 0.0)) == r.extra[float_key(dt, name)], (dt, name)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """Stand-ins for the four text models measured into a store under the main job's campaign names, read back."""
    from verification import campaign
    from verification.measure.attention import chunk_key, instance_records
    from verification.measure.text import campaign_prefix, main_inputs
    from verification.store import ResultStore
    from verification.testing.fakes import causal_standin

    found = {}
    with ResultStore(tmp_path_factory.mktemp("sweep") / "r.db") as s:
        for k, name in enumerate(("minilm", "smollm2", "gemma3", "antiberty")):
            inst = causal_standin(T=7, L=2, H=3, seed=k, model=name, causal=name in ("smollm2", "gemma3"))
            inst.attention[:] = inst.attention.astype(np.float32)
            camp = campaign_prefix(name, False) + "stand-in"
            campaign.run(s, camp, [campaign.Chunk(chunk_key(main_inputs(name, False)[0]), instance_records,
                                                  (inst, False, True))])
            found[name] = (camp, list(s.records(camp)))
    return found


def _by_hand(r, dt, test, kind, t):
    """A float test's verdict at tolerance t from one record, written out here (not at_tolerance)."""
    v = r["extra"][f"{dt} {test} values"]
    if test == "condition":
        limit = t * (1 + v["delta"]) / 2 if kind == "relative" else t
        return "tight" if v["slack"] <= limit else "holds"
    limit = t * max(abs(v["lhs"]), abs(v["rhs"])) if kind == "relative" else t
    return "tight" if abs(v["lhs"] - v["rhs"]) <= limit else "holds" if v["lhs"] < v["rhs"] else "violated"


def test_the_sweep_table_against_the_records(stored):
    from verification.trained.findings.model import model_findings
    from verification.trained.findings.records import collect_records
    from verification.trained.report.tables import SWEEP_COLUMNS, TIES_COLUMNS, sweep_rows, ties_rows

    by = {name: model_findings(collect_records(recs, None)) for name, (_, recs) in stored.items()}
    rows = sweep_rows(by)
    assert len(rows) == len(stored) * len(IMPLEMENTATIONS) * len(DTYPES) * len(KINDS)
    col = {c: i for i, c in enumerate(SWEEP_COLUMNS)}
    for row in rows:
        name, test, dt, kind = row[:4]
        d1 = [r for r in stored[name][1] if r["theorem"] == "dobrushin.factor" and r["provenance"]["variant"] == "all"]
        assert row[col["D1 verdicts"]] == len(d1) > 0
        for t, cell in zip(TOLERANCES, row[len(col) - len(TOLERANCES):]):
            wrong = sum(_by_hand(r, dt, test, kind, t) != r["verdict"] for r in d1)
            assert cell.startswith(f"{wrong} ["), (row[:4], t, cell, wrong)
    ties = ties_rows(by)
    tc = {c: i for i, c in enumerate(TIES_COLUMNS)}
    for row in ties:
        d1 = [r for r in stored[row[0]][1] if r["theorem"] == "dobrushin.factor" and r["provenance"]["variant"] == "all"]
        for dt in DTYPES:
            near = [bool(near_tie(r["extra"][f"{dt} condition values"], dt, r["provenance"]["n"])) for r in d1]
            assert row[tc[f"{dt}: within rounding of a tie [95% CI]"]].startswith(f"{sum(near)} [")
            wrong = [r["extra"][f"{dt} condition"] != r["verdict"] for r in d1]
            assert row[tc[f"{dt}: condition wrong"]] == sum(wrong)
            assert row[tc[f"{dt}: of them within rounding"]] == sum(w and c for w, c in zip(wrong, near))
        for t in TOLERANCES[1:]:
            k = sum(r["verdict"] == "holds" and r["slack"] <= t for r in d1)
            assert [v for c, v in zip(TIES_COLUMNS, row) if c.endswith(f"at most {t:.0e}".replace("e-0", "e-"))] == [k]
    for f in by.values():
        assert f.sweep.zero_agrees


def test_the_sweep_paper_part_makes_the_prose_macros_and_guards(stored):
    from verification.report.part import Part
    from verification.trained.findings import Findings, Model
    from verification.trained.findings.model import model_findings
    from verification.trained.findings.records import collect_records
    from verification.trained.paper.sweep import sweep_part

    part = Part("trained", commands=["attnbounds verify --only trained --seed 0"])
    models = {name: Model(name, camp, model_findings(collect_records(recs, None)), None, {})
              for name, (camp, recs) in stored.items()}
    sweep_part(part, Findings(models, "", 0, 0.95))
    assert [t.name for t in part.tables] == ["trained-float-sweep", "trained-float-ties"]
    m = part.macros
    assert re.fullmatch(r"\d+/\d+", m["MiniLMFloatThreeTwoNearTies"])
    assert re.fullmatch(r"\d+/\d+ \[[\d.e-]+, [\d.e-]+\]", m["MiniLMFloatSixFourEqualityBestWrong"])
    assert m["FloatSweepTolerances"] == "0, 1e-12, 1e-9, 1e-7, 1e-6 and 1e-5"
    assert set(part.guards) == {"FloatConditionErrorsNearTies", "FloatSweepZeroAgrees"}
    assert part.guards["FloatSweepZeroAgrees"].holds
    # every macro and guard of the sweep the prose names is made here
    tex = "".join((SECTIONS / f).read_text() for f in ("trained.tex", "appendix-float.tex"))
    used = set(re.findall(r"\\([A-Za-z]*(?:NearTies[A-Za-z]*|EqualityBest[A-Za-z]*|FloatSweep[A-Za-z]*|"
                          r"StrictSlackBelowTolerance|ConditionWrongNear))", tex))
    assert used and used <= set(m), sorted(used - set(m))
    guards = set(re.findall(r"\\Guard\{(Float[A-Za-z]*)\}", tex))
    assert guards and guards <= set(part.guards)


def test_the_guard_of_the_condition_errors_can_fail(stored):
    from dataclasses import replace

    from verification.report.part import Part
    from verification.trained.findings import Findings, Model
    from verification.trained.findings.model import model_findings
    from verification.trained.findings.records import collect_records
    from verification.trained.paper.sweep import sweep_part

    name, (camp, recs) = next(iter(stored.items()))
    f = model_findings(collect_records(recs, None))
    bad = replace(f, sweep=replace(f.sweep, condition_wrong={"float32": 2, "float64": 0},
                                   condition_wrong_near={"float32": 1, "float64": 0}))
    part = Part("trained", commands=["attnbounds verify --only trained --seed 0"])
    sweep_part(part, Findings({name: Model(name, camp, bad, None, {})}, "", 0, 0.95))
    assert not part.guards["FloatConditionErrorsNearTies"].holds
