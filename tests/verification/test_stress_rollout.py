"""The rollout stress target: Theorem D2 at every rollout step, checked against the brute-force
Fraction reference; stored instances regenerated and re-checked; resume; summaries that add up;
the torch filter path; the loud stop; the command."""
from fractions import Fraction

import numpy as np
import pytest

from theory.verdicts import ViolationError
from verification import campaign
from verification.cli import main
from verification.stress.checks import rollout as R
from verification.stress.checks.plan import StressPlan, draw_stacks, regenerate
from verification.report.part import MissingCampaign
from numerics.dobrushin.batch import HOLDS, TIGHT
from verification.stress.checks import chunks as stress_chunks
from verification.testing import reference as ref

PLAN = StressPlan("dobrushin.rollout", ("dirichlet", "softmax-T0.25"), (3,), instances=20_000, layers=(3,))


def reference(stack):
    """Per step l: (D2 equality, exact slack delta(Ahat_l) delta(R_{l-1}) - delta(R_l))."""
    H = [ref.residual(ref.exact_rows(A)) for A in stack]
    steps = ref.rollout_steps(H)
    prev = [Fraction(1)] + [s["delta_R"] for s in steps[:-1]]
    return [(s["d2"], ref.delta(h) * p - s["delta_R"]) for s, h, p in zip(steps, H, prev)]


def check_against_reference(stacks, out):
    for b, stack in enumerate(stacks):
        for l, (eq, slack) in enumerate(reference(stack)):
            assert out["steps"][b, l] == (TIGHT if eq else HOLDS), (b, l)
            assert abs(Fraction(float(out["step_slack"][b, l])) - slack) <= Fraction(1, 10 ** 12) + slack / 10 ** 6


@pytest.mark.parametrize("family,n,L,count", [("dirichlet", 2, 4, 6), ("dirichlet", 3, 4, 40),
                                              ("hard", 3, 3, 40), ("sparse", 5, 3, 20)])
def test_step_verdicts_match_the_fraction_reference(family, n, L, count):
    stacks = draw_stacks(family, n, L, 0, 0)[:count]
    out = R.check_rollout(stacks)
    check_against_reference(stacks, out)
    if n == 2:                                    # 2 x 2: delta = |det|, the chain is tight at every step
        assert (out["steps"] == TIGHT).all() and (out["verdict"] == TIGHT).all()
    if family == "dirichlet" and n >= 3:          # positive matrices: strict at every step l >= 2
        assert (out["steps"][:, 1:] == HOLDS).all() and not out["sent"].any()
    if family == "hard":                          # exact zeros: both verdicts, decided on the exact path
        assert (out["steps"][:, 1:] == TIGHT).any() and (out["steps"][:, 1:] == HOLDS).any() and out["sent"].any()


def test_torch_filter_path_gives_the_cpu_answers():
    pytest.importorskip("torch")
    stacks = draw_stacks("sparse", 5, 3, 1, 0)[:60]
    cpu, tor = R.check_rollout(stacks, "cpu"), R.check_rollout(stacks, "torch:cpu")
    assert np.array_equal(cpu["steps"], tor["steps"])
    assert np.allclose(cpu["step_slack"], tor["step_slack"], rtol=1e-9, atol=1e-13)


def test_summaries_add_up_kept_instances_regenerate_and_resume(store):
    first = campaign.run(store, PLAN.campaign, stress_chunks(PLAN), progress=False)
    assert first.computed == 2
    rows = list(store.summaries(PLAN.campaign, "dobrushin.product"))
    assert len(rows) == 2
    for row in rows:
        b = row["body"]
        assert sum(b["counts"].values()) == b["n"] == 10_000 and b["layers"] == 3 and len(b["steps"]) == 3
        assert b["steps"][0]["counts"] == {"tight": 10_000}          # R_1 = Ahat_1: tight by definition
        for st in b["steps"]:
            assert sum(st["counts"].values()) == b["n"]
        assert b["counts"].get("holds", 0) == 10_000                  # strict at some step, every instance
        assert b["min_slack"] == min(st["min_slack"] for st in b["steps"][1:])
    recs = list(store.records(PLAN.campaign))
    assert 0 < len(recs) <= 2 * 20 and {r["theorem"] for r in recs} == {"dobrushin.product"}
    for r in recs:                                  # regenerate from (campaign, chunk, index), re-check
        stack = regenerate(PLAN.campaign, r["chunk"], r["provenance"]["index"])
        assert stack.shape == (3, 3, 3)
        steps = reference(stack)
        layer = r["provenance"]["layer"]
        assert r["verdict"] == "holds" and not steps[layer - 1][0]
        assert abs(Fraction(r["slack"]) - steps[layer - 1][1]) <= Fraction(1, 10 ** 12)
        assert abs(Fraction(r["slack"]) - min(s for eq, s in steps if not eq)) <= Fraction(1, 10 ** 12)
    bigger = StressPlan(PLAN.theorem, PLAN.families, PLAN.sizes, instances=40_000, layers=PLAN.layers)
    more = campaign.run(store, bigger.campaign, stress_chunks(bigger), progress=False)
    again = campaign.run(store, bigger.campaign, stress_chunks(bigger), progress=False)
    assert (more.computed, more.skipped, again.computed) == (2, 2, 0)


def test_a_violation_stops_loudly(store, monkeypatch):
    real = R.rollout_filter

    def broken(A, device="cpu"):                    # a wrong bound: every step l >= 2 now fails
        out = real(A, device)
        out["bound"][:, 1:] -= 0.5
        out["slack"] = out["bound"] - out["value"]
        return out
    monkeypatch.setattr(R, "rollout_filter", broken)
    with pytest.raises(ViolationError, match="dobrushin.product"):
        campaign.run(store, PLAN.campaign, stress_chunks(PLAN)[:1], progress=False)
    bad = [r for r in store.records(PLAN.campaign) if r["verdict"] == "violated"]
    assert len(bad) == 10_000 and all(r["provenance"]["layer"] >= 2 for r in bad[:5])


def test_command_runs_resumes_and_refuses_bad_arguments(tmp_path, capsys):
    db, out = str(tmp_path / "s.db"), str(tmp_path / "out")
    args = ["stress", "dobrushin.rollout", "--family", "dirichlet", "--sizes", "3", "--layers", "2",
            "--instances", "10", "--db", db, "--out", out]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "1 chunks computed" in text and "rollout step" in text
    assert (tmp_path / "out" / "tables" / "stress-rollout-steps.csv").exists()
    assert main(args) == 0
    assert "0 chunks computed, 1 already stored" in capsys.readouterr().out
    for bad, what in ((["stress", "dobrushin.rollout", "--search", "--db", db], "dobrushin.factor"),
                      (["stress", "dobrushin.rollout", "--layers", "1", "--db", db], "layer count"),
                      (["stress", "dobrushin.factor", "--layers", "4", "--db", db], "dobrushin.rollout only")):
        assert main(bad) == 2
        err = capsys.readouterr().err
        assert what in err and len(err.strip().splitlines()) == 1


def test_paper_part_needs_the_rollout_campaign(store, small_stress_section):
    from verification.campaign import Chunk
    from verification.stress.checks import Plan
    from verification.stress.paper import paper_part
    from verification.stress.checks.search import search_campaign, search_chunk

    plans = small_stress_section(layers=(3,))
    factor = plans["dobrushin.factor"]
    campaign.run(store, factor.campaign, stress_chunks(factor), progress=False)
    campaign.run(store, search_campaign("dobrushin.factor", 0),
                 [Chunk("n3/b40", search_chunk, ("dobrushin.factor", 3, 40, 0))], progress=False)
    with pytest.raises(MissingCampaign, match="stress.dobrushin.rollout.*attnbounds stress dobrushin.rollout"):
        paper_part(store, Plan.for_verify(0, False))     # the prose quotes the rollout sweep: it must be stored
    plan = plans["dobrushin.rollout"]
    campaign.run(store, plan.campaign, stress_chunks(plan), progress=False)
    part = paper_part(store, Plan.for_verify(0, False))
    body = next(store.summaries(plan.campaign))["body"]
    assert part.macros["StressRolloutInstances"] == body["n"]
    assert part.macros["StressRolloutHolds"] == 2 * body["n"]   # steps 2, 3: strict
    assert part.macros["StressRolloutTight"] == 0 and part.macros["StressRolloutMaxLayers"] == "3"
    assert part.tables[-1].name == "stress-rollout" and "dobrushin.rollout" in part.commands[-1]
