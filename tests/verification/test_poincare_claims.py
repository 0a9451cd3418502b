"""The Poincare reproduction report's claims (issue 63, items 6-8): the paper's words are the paper's,
Villani's condition in each quantifier order from the analytic bracket of lambda_V(beta), and the SDE
row's target (what the SDE minimises: F) with its stated aggregation rule."""
import math
from dataclasses import replace

import pytest

from theory.verdicts import Outcome
from verification.poincare.checks import Plan
from verification.poincare.findings import findings
from verification.poincare.findings.claims import NOT_LOCATED, SDE_RULE, SOURCE, aggregate, quote
from verification.report.part import CLAIM_COLUMNS


# -- item 6: the paper's words ---------------------------------------------------------------------

def test_quote_refuses_words_not_in_the_source():
    assert quote("for any mild regularization") in SOURCE
    with pytest.raises(ValueError, match="not in the paper's words"):
        quote("through Villani's condition")          # the abstract never names Villani
    with pytest.raises(ValueError, match="not in the paper's words"):
        quote("the Langevin diffusion converges at the rate of the Poincaré constant")


def _lora_map(store, plan, seeds=1):
    from verification.poincare.checks import villani as vm
    for s in range(seeds):
        store.write_chunk(vm.map_campaign(plan), f"lora2-s{s}", vm.map_chunk("lora2", s, False))


@pytest.fixture(scope="module")
def lora_records():
    from verification.poincare.checks import villani as vm
    return vm.map_chunk("lora2", 0, False)


def test_claims_table_quotes_only_the_abstract(store, lora_records):
    """Every 'paper's words' cell is fragments of the abstract (or says it is not in it); Villani's
    condition and the rate are paraphrases marked as such, each with its quantifier order."""
    from verification.poincare.checks import villani as vm
    from verification.poincare.paper import claims

    plan = Plan()
    store.write_chunk(vm.map_campaign(plan), "lora2-s0", lora_records)
    table = claims(findings(store, plan), "prov", "cmd")
    words = list(table.frame[CLAIM_COLUMNS[0]])
    stated = list(table.frame[CLAIM_COLUMNS[1]])
    for w in words:
        assert w.startswith("- (not in the abstract)") or all(frag in SOURCE for frag in w.split(" [...] ")), w
        assert "Villani" not in w and "rate" not in w
    villani_rows = [s for s in stated if "Villani" in s]
    assert len(villani_rows) == 3 and all(NOT_LOCATED in s for s in villani_rows)
    assert any("every $\\beta > 0$" in s for s in villani_rows)
    assert any("large enough" in s for s in villani_rows)
    outcomes = list(table.frame[CLAIM_COLUMNS[-1]])
    assert "refuted (for every $\\beta$)" in outcomes          # the refutation names the order it refutes
    assert "holds (certified) (for $\\beta$ large)" in outcomes


# -- item 7: the analytic bracket -------------------------------------------------------------------

def test_analytic_bracket_contains_the_certified_threshold(lora_records):
    """sqrt(2 L''(p*)/beta) <= lambda_V(beta) <= sqrt(2 sup L''/beta): both ends enclose the certified
    bracket of lambda_V(beta) at every beta of the map, a > 0 refutes the every-beta reading."""
    from numerics.poincare.losses import family
    from numerics.poincare.villani import _lora_derivs

    rec = next(r for r in lora_records if r.extra["kind"] == "analytic")
    e = rec.extra
    a, A = e["L2_at_p_star"], e["sup_L2"]
    assert 0 < a <= A and rec.verdict == Outcome.REFUTED and e["order"] == "every beta" and e["consistent"]
    p1, p2 = e["p_star"]
    d1, d2 = _lora_derivs(family("lora2", 0), __import__("numpy").array([p1, p2, (p1 + p2) / 2]))
    assert d1[0] < 0 < d1[1] and a <= d2[2]                        # a critical point in the cell, a below L''
    assert len(e["per_beta"]) == 8
    for beta, lo, hi, clo, chi, meet in e["per_beta"]:
        assert meet is True and lo <= clo <= chi <= hi
        assert lo == pytest.approx(math.sqrt(2 * a / beta), rel=1e-9) and hi == pytest.approx(math.sqrt(2 * A / beta),
                                                                                               rel=1e-9)


def test_analytic_bracket_check_fails_on_a_planted_bug(monkeypatch):
    """A wrong sup L'' (the arb enclosure of L'' scaled by 1/100) puts the analytic upper end below the
    certified lower end: the record says the brackets do not meet and the beta-large reading is no
    longer certified."""
    from numerics.poincare import villani as nv
    from verification.poincare.checks import villani as vm

    real = nv.lora_analytic_bracket
    monkeypatch.setattr(vm, "lora_analytic_bracket", lambda fam: {**real(fam), "A": real(fam)["A"] / 100})
    monkeypatch.setattr(vm, "map_grid", lambda full: ((1.0,), (0.01,)))
    rec = next(r for r in vm.map_chunk("lora2", 0, False) if r.extra["kind"] == "analytic")
    assert rec.extra["consistent"] is False and rec.extra["per_beta"][0][-1] is False


def test_quantifier_orders_decide_the_villani_claims(store, lora_records):
    from verification.poincare.checks import villani as vm

    plan = Plan()
    store.write_chunk(vm.map_campaign(plan), "lora2-s0", lora_records)
    f = findings(store, plan)
    (x,) = f.analytic
    assert x.every_beta_refuted and x.beta0_times_lambda2 == 2 * x.A and x.consistent
    by = {c.key: c for c in f.claims}
    assert (by["lora-villani-every-beta"].outcome, by["lora-villani-every-beta"].order) == ("refuted", "every beta")
    assert (by["lora-villani-beta-large"].outcome, by["lora-villani-beta-large"].order) == ("holds (certified)",
                                                                                            "beta large")
    broken = replace(f, analytic=(replace(x, consistent=False),))
    assert {c.key: c.outcome for c in broken.claims}["lora-villani-beta-large"] == "inconclusive"
    assert {c.key: c.outcome for c in replace(f, analytic=()).claims}["lora-villani-beta-large"] == "not-testable"


# -- item 8: what the SDE minimises, and the rule ---------------------------------------------------

def test_aggregation_rule():
    assert aggregate(["supported", "supported", "refuted"]) == "mixed"      # not 'supported' (the old rule)
    assert aggregate(["supported"] * 3) == "supported" and aggregate(["refuted"] * 2) == "refuted"
    assert aggregate([]) == "not-testable" and aggregate(["inconclusive", "supported"]) == "mixed"
    assert "supported only if supported at every inverse temperature" in SDE_RULE


class _Quadratic:
    """L = |theta - 1|^2 / 2 in 3 dimensions: F = L + lambda/2 |theta|^2 has argmin 1/(1 + lambda),
    Hessian (1 + lambda) I, so E_beta[F] - F_min = d/(2 beta) and E|theta - theta*|^2 = d/(beta (1 + lambda))
    exactly (Gaussian): the Laplace values."""

    dim, provenance = 3, {"family": "quadratic"}

    def to(self, device):
        return self

    def loss(self, th):
        return 0.5 * ((th - 1) ** 2).sum(-1)

    def F_torch(self, th, lam):
        return self.loss(th) + 0.5 * lam * (th ** 2).sum(-1)


def test_minimises_F_records_target_argmin_F(monkeypatch):
    """The SDE row's per-beta record measures F and the distance to argmin F (not L): on a Gaussian F
    both equal their Laplace values, so the record is supported, with the distance's statistic and
    interval; a sampler at a tenth of its temperature (a planted bug) is refuted."""
    from verification.poincare.checks import sde

    monkeypatch.setattr(sde, "family", lambda name, seed: _Quadratic())
    good = [r for r in sde.expected_loss_records("quad", 0.5, (8.0,), 0, 512, 400, step=0.05)
            if r.extra["kind"] == "minimises_F"]
    (g,) = good
    assert g.theorem == "poincare.langevin.minimises_F" and g.verdict == Outcome.SUPPORTED
    assert g.extra["laplace_dist2"] == pytest.approx(3 / (8 * 1.5)) and g.bound == pytest.approx(3 / 16)
    assert g.extra["F_min"] == pytest.approx(0.5 * 3 * (0.5 / 1.5) ** 2 + 0.25 * 3 / 1.5 ** 2)
    lo, hi = g.extra["dist2_interval"]
    assert lo <= g.extra["dist2"] <= hi < 1.1 * g.extra["laplace_dist2"]
    real = sde.simulate
    monkeypatch.setattr(sde, "simulate", lambda F, th0, beta, *a, **k: real(F, th0, beta / 10, *a, **k))
    (bad,) = [r for r in sde.expected_loss_records("quad", 0.5, (8.0,), 0, 512, 400, step=0.05)
              if r.extra["kind"] == "minimises_F"]
    assert bad.verdict == Outcome.REFUTED and bad.extra["dist2"] > 5 * bad.extra["laplace_dist2"]


def test_sde_claim_aggregates_the_per_beta_outcomes(store, monkeypatch):
    """The claim's outcome is the rule over the per-beta minimises-F outcomes, and the report's SDE
    table shows the rule; with one beta refuted the claim is 'mixed', never 'supported'."""
    from verification.poincare.checks import sde
    from verification.poincare.report.findings import minimises_table

    monkeypatch.setattr(sde, "family", lambda name, seed: _Quadratic())
    plan = Plan()
    recs = sde.expected_loss_records("quad", 0.5, (4.0, 8.0), 0, 256, 300, step=0.05)
    store.write_chunk(sde.sde_campaign(plan), "q", recs)
    f = findings(store, plan)
    assert [m.beta for m in f.minimisation] == [4.0, 8.0]
    assert {c.key: c.outcome for c in f.claims}["sde-minimises"] == aggregate(m.outcome for m in f.minimisation)
    flipped = replace(f, minimisation=(f.minimisation[0], replace(f.minimisation[1], outcome="refuted")))
    assert f.minimisation[0].outcome == "supported"
    assert {c.key: c.outcome for c in flipped.claims}["sde-minimises"] == "mixed"
    t = minimises_table(f, plan)
    assert SDE_RULE in t.caption and list(t.frame["outcome"]) == [m.outcome for m in f.minimisation]
