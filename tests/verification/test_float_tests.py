"""The float tests of Theorem D1 at tolerance 0 (numerics.dobrushin.float_tests: as-stored,
renormalised, condition), the records that carry them (verification.measure.attention) and the
table ``trained-float`` (verification.trained.report.tables.float_rows, verification.trained.paper.across)."""
import re
from pathlib import Path

import numpy as np
import pytest

from numerics.dobrushin import factor_check
from numerics.dobrushin.float_tests import DTYPES, IMPLEMENTATIONS, all_verdicts, as_stored, condition, \
    renormalised, verdicts
from theory.errors import InvalidInput

SECTIONS = Path(__file__).resolve().parents[2] / "paper" / "sections"


def exact(A):
    """The exact verdicts: A's floats, each row divided by its exact sum."""
    return np.where(factor_check(A, renormalise=True).equality, "tight", "holds")


def test_as_stored_and_renormalised_disagree_where_a_row_does_not_sum_to_one():
    # p: dyadic, pairs (0, 1) and (0, 2) both attain delta(p) = 1/2; (0, 1) is self-dominant, (0, 2) is not
    # (p_22 = 1/8 < p_02 = 1/4), so D1 is tight for p. Row 2 stored scaled by c = 1 + 2^-14 (sum c, within
    # the validation tolerance): every float operation below is exact, and as stored d_02 = 1/4 + c/4 > 1/2
    # wins, so the == test on the stored floats sees lhs = 3/4 < rhs = 3/4 + 2^-17; divided by its sum
    # (exactly, in either precision) the row is p_2 again
    c = 1 + 2.0 ** -14
    A = np.array([[1 / 2, 1 / 4, 1 / 4], [1 / 4, 3 / 4, 0], [c / 8, 3 * c / 4, c / 8]])
    assert exact(A).tolist() == "tight"
    for dt in DTYPES:
        assert str(as_stored(A, dt)) == "holds", dt                 # wrong: the stored row sum moved the maximiser
        assert str(renormalised(A, dt)) == "tight", dt
        assert str(condition(A, dt)) == "tight", dt                 # the tie (0, 1) / (0, 2): (0, 1) dominates
    # the same matrix with row 2 summing to 1: no implementation can tell the two apart
    B = A.copy()
    B[2] /= c
    assert {str(verdicts(B, dt, name)) for dt in DTYPES for name in IMPLEMENTATIONS} == {"tight"}


def test_the_float_condition_is_right_where_the_equality_test_is_not():
    # every 2x2 [[a, 1 - a], [b, 1 - b]] with a > b (float32 entries) is self-dominant (a >= b, 1 - b >= 1 - a),
    # so D1 is tight exactly; the condition sees that in floats, the == tests miss some through rounding
    grid = [(a, b) for a in np.arange(0.51, 1.0, 0.02) for b in np.arange(0.01, 0.5, 0.02)]
    A = np.array([[[a, 1 - a], [b, 1 - b]] for a, b in grid], dtype=np.float32).astype(np.float64)
    assert set(exact(A)) == {"tight"}
    for dt in DTYPES:
        assert set(condition(A, dt)) == {"tight"}, dt
    missed = {(dt, name): int((verdicts(A, dt, name) != "tight").sum()) for dt in DTYPES
              for name in ("as-stored", "renormalised")}
    assert missed[("float32", "as-stored")] > 0 and missed[("float32", "renormalised")] > 0, missed
    # swapped rows: A_00 = b < A_10 = a, not self-dominant: strict exactly, and the condition says holds
    S = A[:, ::-1, :].copy()
    assert set(exact(S)) == {"holds"} and all(set(condition(S, dt)) == {"holds"} for dt in DTYPES)


def test_against_the_exact_verdict_on_random_float32_softmax():
    from numerics.sources.random import sample

    A = sample("softmax-T1", 24, 600, np.random.default_rng(7)).astype(np.float32).astype(np.float64)
    ex = exact(A)
    assert 0 < (ex == "tight").sum() < len(ex)
    got = all_verdicts(A)
    for dt in DTYPES:
        assert set(got[dt]["condition"]) <= {"tight", "holds"}
        for name in ("as-stored", "renormalised"):
            assert set(got[dt][name]) <= {"tight", "holds", "violated"}
            assert not ((ex == "holds") & (got[dt][name] == "tight")).any()    # no strict case rounds to equal
    assert (got["float64"]["condition"] == ex).all()                     # far from float64's rounding here
    assert (got["float32"]["condition"] == ex).mean() > 0.99
    wrong = {name: int((got["float32"][name] != ex).sum()) for name in IMPLEMENTATIONS}
    assert wrong["as-stored"] > wrong["condition"] and wrong["renormalised"] > wrong["condition"], wrong
    assert (got["float32"]["renormalised"] == "violated").any()           # an apparent violation


def test_bad_float_test_arguments_are_one_line_refusals():
    A = np.array([[0.5, 0.5], [0.25, 0.75]])
    with pytest.raises(InvalidInput, match="float16"):
        verdicts(A, "float16", "condition")
    with pytest.raises(InvalidInput, match="'exact'"):
        verdicts(A, "float32", "exact")
    with pytest.raises(InvalidInput, match="square"):
        as_stored(np.ones((2, 3)) / 3, "float64")
    with pytest.raises(InvalidInput):
        condition(np.array([[0.5, -0.5], [0.5, 0.5]]), "float32")


def _standins():
    """Stand-in instances for the four embedded models (verification.testing.fakes), MiniLM and
    AntiBERTy bidirectional, SmolLM2 and Gemma causal."""
    from verification.testing.fakes import causal_standin

    return {name: causal_standin(T=7, L=2, H=3, seed=k, model=name, causal=name in ("smollm2", "gemma3"))
            for k, name in enumerate(("minilm", "smollm2", "gemma3", "antiberty"))}


def test_records_carry_every_implementation_in_both_precisions():
    from verification.measure.attention import float_key, instance_records

    inst = _standins()["minilm"]
    inst.attention[:] = inst.attention.astype(np.float32)               # the model's float32 values
    recs = [r for r in instance_records(inst, comparison=False, float_tests=True)
            if r.theorem == "dobrushin.factor" and r.provenance["variant"] == "all"]
    keys = {float_key(dt, name) for dt in DTYPES for name in IMPLEMENTATIONS}
    assert len(keys) == 6 and all(keys <= set(r.extra) for r in recs)
    A_heads = inst.attention
    for r in recs:
        l, h = r.provenance["layer"], r.provenance["head"]
        A = A_heads[l].mean(axis=0) if h is None else A_heads[l, h]
        for dt in DTYPES:
            for name in IMPLEMENTATIONS:
                assert r.extra[float_key(dt, name)] == str(verdicts(A, dt, name)), (l, h, dt, name)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """The stand-ins measured into a store under the main job's campaign names, read back."""
    from verification import campaign
    from verification.measure.attention import chunk_key, instance_records
    from verification.measure.text import campaign_prefix, main_inputs
    from verification.store import ResultStore

    found = {}
    with ResultStore(tmp_path_factory.mktemp("float") / "r.db") as s:
        for name, inst in _standins().items():
            camp = campaign_prefix(name, False) + "stand-in"
            campaign.run(s, camp, [campaign.Chunk(chunk_key(main_inputs(name, False)[0]), instance_records,
                                                  (inst, False, True))])
            found[name] = (camp, list(s.records(camp)))
    return found


def test_the_table_has_every_implementation_and_the_constant_baseline_for_every_model(stored):
    from verification.measure.attention import float_key
    from verification.trained.findings.model import ALWAYS_TIGHT, FLOAT_TESTS, model_findings
    from verification.trained.findings.records import collect_records
    from verification.trained.report.tables import FLOAT_COLUMNS, float_rows

    rows = float_rows({name: model_findings(collect_records(recs, None)) for name, (_, recs) in stored.items()})
    col = {c: i for i, c in enumerate(FLOAT_COLUMNS)}
    assert [(r[0], r[1]) for r in rows] == [(m, t) for m in stored for t in FLOAT_TESTS + (ALWAYS_TIGHT,)]
    for row in rows:
        name, test = row[0], row[1]
        d1 = [r for r in stored[name][1] if r["theorem"] == "dobrushin.factor" and r["provenance"]["variant"] == "all"]
        assert row[col["D1 verdicts"]] == len(d1) > 0
        for dt in DTYPES:
            got = ["tight"] * len(d1) if test == ALWAYS_TIGHT else [r["extra"][float_key(dt, test)] for r in d1]
            wrong = sum(g != r["verdict"] for g, r in zip(got, d1))
            assert row[col[f"{dt} wrong [95% CI]"]].startswith(f"{wrong}/{len(d1)} ["), row
            assert row[col[f"{dt}: violated"]] == got.count("violated")
            assert row[col[f"{dt}: tight missed"]] == sum(r["verdict"] == "tight" and g != "tight"
                                                          for g, r in zip(got, d1))
            if test == ALWAYS_TIGHT:                  # its errors: exactly the strict verdicts
                assert wrong == sum(r["verdict"] == "holds" for r in d1)
            if test == "condition":
                assert row[col[f"{dt}: violated"]] == 0
    causal = [r for r in rows if r[0] in ("smollm2", "gemma3") and r[1] == ALWAYS_TIGHT]
    assert causal and all(r[col["float32 wrong [95% CI]"]].startswith("0/") for r in causal)   # forced tight
    assert any(not r[col["float32 wrong [95% CI]"]].startswith("0/") for r in rows
               if r[0] == "minilm" and r[1] == ALWAYS_TIGHT)


def test_the_paper_part_names_the_implementations_and_makes_the_prose_macros(stored):
    from verification.report.part import Part, macro_name
    from verification.trained.paper.across import float_part
    from verification.trained.paper.sweep import sweep_part
    from verification.trained.paper.names import MODELS
    from verification.trained.findings.model import model_findings
    from verification.trained.findings import Findings, Model
    from verification.trained.findings.records import collect_records

    part = Part("trained", commands=["attnbounds verify --only trained --seed 0"])
    models = {name: Model(name, camp, model_findings(collect_records(recs, None)), None, {})
              for name, (camp, recs) in stored.items()}
    float_part(part, Findings(models, "", 0, 0.95))
    (table,) = part.tables
    sweep_part(part, Findings(models, "", 0, 0.95))       # the sweep's macros, which the same paragraph quotes
    assert "float" in table.name and table.name == "trained-float"
    assert "depends on how the test is implemented" in table.caption
    assert set(table.frame["float test"]) == {"as-stored", "renormalised", "condition", "always tight"}
    assert set(table.frame["model"]) == {"all-MiniLM-L6-v2", "SmolLM2-135M (4-bit)", "Gemma 3 270M (4-bit)",
                                         "AntiBERTy"}           # the short names: rows that do not wrap
    m = part.macros
    for word in (macro_name(MODELS[k]) for k in stored):        # the models the store holds
        for p in ("ThreeTwo", "SixFour"):
            for x in ("AsStored", "Renormalised", "Condition"):
                assert re.fullmatch(r"\d+/\d+ \[\d\.\d\d, \d\.\d\d\]", m[f"{word}Float{p}{x}Wrong"])
            assert m[f"{word}Float{p}Wrong"] == m[f"{word}Float{p}RenormalisedWrong"]   # the original names
        total = m[f"{word}FloatThreeTwoWrong"].split()[0].split("/")[1]
        assert m[f"{word}AlwaysTightWrong"].split()[0].split("/")[1] == total
    # every float macro the prose quotes is made here
    tex = "".join((SECTIONS / f).read_text() for f in ("trained.tex", "conclusion.tex"))
    used = set(re.findall(r"\\([A-Za-z]*(?:Float(?:ThreeTwo|SixFour)[A-Za-z]*|AlwaysTightWrong))", tex))
    assert used and used <= set(m), sorted(used - set(m))
