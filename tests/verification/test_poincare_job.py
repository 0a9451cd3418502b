"""verification.poincare.checks.bounds: verdicts and outcomes, resumable campaign, loud violations, tables/figures, CLI."""
from fractions import Fraction

import pytest
from scipy import stats
from rich.console import Console

from numerics.poincare import bounds as PB
from theory.verdicts import Outcome, Verdict, ViolationError
from verification.poincare.checks import Plan, bounds as job
from verification.cli import main
from verification.poincare.findings import findings
from verification.poincare.report import report


def _quiet():
    return Console(quiet=True)


def test_gaussian_instance_is_tight_for_both_bounds():
    recs = job.check_instance("gauss1", 4.0, 0.3, Plan())
    by = {(r.theorem.rsplit(".", 1)[-1], r.instance.rsplit("-", 1)[-1]): r for r in recs}
    assert by[("bakry_emery", "l0.3")].verdict == Verdict.TIGHT
    assert by[("holley_stroock", "l0.3")].verdict == Verdict.TIGHT
    assert by[("test_function_lower", "linear")].verdict == Verdict.TIGHT
    assert by[("villani", "l0.3")].verdict == Outcome.SUPPORTED and by[("villani", "l0.3")].extra["certified"]
    assert abs(by[("bakry_emery", "l0.3")].value - 1 / 1.2) < 1e-9


@pytest.mark.parametrize("beta, lam", [(4.0, 0.3), (1.0, 0.1), (64.0, 1.0)])
def test_gaussian_tight_is_the_theorem_not_a_tolerance(beta, lam, monkeypatch):
    """Regression: the linear test function's Var(theta) = 1/(beta lambda) = C_P is recorded from the
    theorem (value = bound = the exact 1/kappa, slack 0), never a float 'lower bound' above the
    computed C_P; the float computation's agreement within its stated error is a separate field."""
    exact = float(1 / (Fraction(beta) * Fraction(lam)))
    recs = job.check_instance("gauss1", beta, lam, Plan())
    tight = [r for r in recs if r.verdict == Verdict.TIGHT]
    assert {r.extra.get("kind", r.theorem) for r in tight} == {"linear", "quadratic", "poincare.gibbs.bakry_emery",
                                                                 "poincare.gibbs.holley_stroock"}
    for r in tight:
        assert r.value == r.bound == exact and r.slack == 0.0
        assert r.extra["float_agrees"] is True
        assert abs(r.extra["C_P"] - exact) <= r.extra["err"]          # the float solve, within its error
    for r in recs:                                                     # no stored lower bound above C_P
        if r.theorem.endswith("test_function_lower") and r.verdict != Verdict.UNDECIDED:
            assert r.bound <= r.value
    # a float computation off by more than its error no longer decides the verdict: still tight,
    # and the disagreement is reported
    real = job.rayleigh_lower_grid
    monkeypatch.setattr(job, "rayleigh_lower_grid", lambda res, span: real(res, span) * (1 + 1e-3))
    lin = next(r for r in job.check_instance("gauss1", beta, lam, Plan()) if r.extra.get("kind") == "linear")
    assert lin.verdict == Verdict.TIGHT and lin.bound == exact and lin.extra["float_agrees"] is False


def test_non_gaussian_lower_bounds_are_never_tight():
    recs = job.check_instance("attn1", 4.0, 0.3, Plan())
    lows = [r for r in recs if r.theorem.endswith("test_function_lower")]
    assert {r.extra["kind"] for r in lows} == {"linear", "quadratic", "eigenfunction_mp", "muckenhoupt"}
    assert all(r.verdict in (Verdict.HOLDS, Verdict.UNDECIDED) for r in lows)
    mp = next(r for r in lows if r.extra["kind"] == "eigenfunction_mp")
    assert mp.extra["certified"] is False and mp.backend == "mpmath.quad"   # a quadrature estimate


def test_verdict_rules():
    assert job.upper_verdict(None, 1.0, 0.1) == Verdict.NOT_APPLICABLE
    assert job.upper_verdict(0.8, 1.0, 0.1) == Verdict.VIOLATED
    assert job.upper_verdict(0.95, 1.0, 0.1) == Verdict.UNDECIDED
    assert job.upper_verdict(1.2, 1.0, 0.1) == Verdict.HOLDS
    assert job.lower_verdict(1.2, 1.0, 0.1) == Verdict.VIOLATED
    assert job.lower_verdict(0.5, 1.0, 0.1) == Verdict.HOLDS
    assert job.lower_verdict(1.0, 1.0, 0.1) == Verdict.UNDECIDED        # a tolerance never says tight
    assert job.villani_outcome({"holds": None}) == Outcome.INCONCLUSIVE


def test_campaign_resumes_and_reports(store, tmp_path):
    plan = Plan(families=("gauss1",))
    job.run_campaign(store, plan, _quiet())
    n = store.count(plan.campaign)
    grid = plan.grid("gauss1")
    # per instance: linear + quadratic lower bounds, Muckenhoupt bracket (1-D), BE, HS, Villani; + the mpmath
    # lower bound at lambda = 0.3
    assert n == 6 * len(grid) + sum(1 for _, lam in grid if plan.mp_check("gauss1", lam))
    job.run_campaign(store, plan, _quiet())          # resume: nothing recomputed, nothing duplicated
    assert store.count(plan.campaign) == n
    rows = findings(store, plan).instances
    assert len(rows) == len(grid)
    assert all(i.be.verdict == "tight" and abs(i.be_ratio - 1) < 1e-8 for i in rows)   # BE / C_P = 1
    report(store, plan, tmp_path, _quiet())
    assert (tmp_path / "tables" / "poincare-bounds.md").read_text().count("tight") >= len(rows)
    assert (tmp_path / "figures" / "poincare_gauss1.png").stat().st_size > 0
    assert (tmp_path / "figures" / "poincare_gauss1.pdf").exists()


def test_upper_bound_below_truth_stops_the_run(store, monkeypatch):
    def wrong(fam, beta, lam):
        return {"bound": 0.5 / (beta * lam), "osc": 0.0, "reason": "deliberately wrong"}

    monkeypatch.setattr(PB, "holley_stroock", wrong)
    plan = Plan(families=("attn1",))
    monkeypatch.setattr(Plan, "grid", lambda self, name: [(1.0, 1.0)])
    with pytest.raises(ViolationError, match="holley_stroock"):
        job.run_campaign(store, plan, _quiet())
    stored = list(store.records(campaign=plan.campaign, theorem="poincare.gibbs.holley_stroock"))
    assert stored and stored[0]["verdict"] == "violated"


def test_lora_villani_failure_is_certified_and_reported():
    recs = job.check_instance("lora2", 1.0, 0.1, Plan())
    v = next(r for r in recs if r.theorem == "poincare.gibbs.villani")
    assert v.verdict == Outcome.REFUTED and v.extra["certified"]           # a finding, not 'violated'
    assert v.bound > 0.1 and v.extra["statistic"] == v.bound                # lambda_V(1) above the lambda used
    lo, hi = v.extra["coefficient"]
    assert lo <= hi < 0 and "interval arithmetic" in v.extra["method"]     # the enclosure that certifies it
    hs = next(r for r in recs if r.theorem == "poincare.gibbs.holley_stroock")
    assert hs.verdict == Verdict.HOLDS                       # what still holds there


def test_villani_support_above_lambda_v_is_an_estimate():
    recs = job.check_instance("lora2", 16.0, 1.0, Plan())
    v = next(r for r in recs if r.theorem == "poincare.gibbs.villani")
    assert v.verdict == Outcome.SUPPORTED and v.extra["certified"] is False
    lo, hi = v.extra["interval"]
    assert lo <= v.extra["statistic"] <= hi < 1.0


def test_villani_boundary_is_certified_for_lora(store, tmp_path):
    """The result is lambda_V(beta) with a certified bracket (lora2), never a share of the grid; every
    refuted grid point lies below the estimate's interval, every supported one above it."""
    from verification.poincare.checks import villani as vm
    betas, lams = vm.map_grid(False)
    vm.run_villani_map(store, Plan(), families=("attn1", "lora2"), console=_quiet())
    recs = [r for r in store.records(campaign=vm.map_campaign(Plan())) if r["extra"]["kind"] == "map"]
    assert len(recs) == 2 * 3 * len(betas) * len(lams)
    f = findings(store, Plan())
    assert len(f.map_points) == len(recs)
    assert len(f.boundaries) == 2 * 3 * len(betas)                   # one per (family, data seed, beta)
    for b in f.boundaries:
        assert b.points == len(lams)
        if b.family == "attn1":
            assert b.status == "proved" and not b.fails and b.refuted == 0
        else:
            lo, hi = b.certified_lo, b.certified_hi
            assert b.status == "certified" and 0 < lo <= hi < 1.001 * lo + 1e-6    # tight and positive
            assert lo <= b.estimate * (1 + 1e-9) and b.estimate_within_bracket is True   # the estimate inside
            assert b.fails and b.certified_positive                  # the seed's 'every lambda > 0' fails
    assert {c.key: c.outcome for c in f.claims}["lora-villani-every-beta"] == "refuted"
    for r in recs:
        e = r["extra"]
        if r["verdict"] == "refuted":
            assert e["lam"] < e["interval"][0]
        elif r["verdict"] == "supported" and e["family"] == "lora2":
            assert e["lam"] > e["interval"][1]


def test_villani_bracket_check_fails_on_a_planted_bug(monkeypatch):
    """A wrong enclosure (L'' scaled by 1/4) gives a 'certified' upper end below the grid estimate:
    the record says so (estimate_within_bracket False) instead of passing."""
    from numerics.poincare import villani as nv
    from verification.poincare.checks import villani as vm

    real = nv._lora_derivs_arb

    def wrong(fam, P):
        d1, d2 = real(fam, P)
        return d1, d2 * 0.25
    monkeypatch.setattr(nv, "_lora_derivs_arb", wrong)
    monkeypatch.setattr(vm, "map_grid", lambda full: ((1.0,), (0.01,)))
    rec = vm.map_chunk("lora2", 0, False)[0]
    assert rec.extra["estimate_within_bracket"] is False and rec.extra["kind"] == "map"


def test_cli(tmp_path):
    db, out = str(tmp_path / "r.db"), str(tmp_path / "paper")
    assert main(["poincare", "--families", "gauss1", "--no-sde", "--db", db, "--out", out]) == 0
    assert (tmp_path / "paper" / "tables" / "poincare_villani.csv").exists()
    assert main(["poincare", "--families", "mlp", "--db", db, "--out", out]) == 2


def test_same_seed_gives_byte_identical_tables(tmp_path):
    from verification.store import ResultStore

    outs = []
    for k in range(2):
        with ResultStore(tmp_path / f"r{k}.db") as st:
            plan = Plan(families=("gauss1",))
            job.run_campaign(st, plan, _quiet())
            report(st, plan, tmp_path / f"o{k}", _quiet())
        outs.append([(tmp_path / f"o{k}" / "tables" / f"{n}.csv").read_bytes()
                     for n in ("poincare-bounds", "poincare_villani", "poincare-thresholds", "poincare-metastable",
                               "poincare_expected_loss", "poincare-muckenhoupt")])
    assert outs[0] == outs[1]


def test_sde_records_and_table(store):
    from verification.poincare.checks.sde import expected_loss_records, rate_records, sde_campaign

    recs = rate_records("gauss1", 2.0, 0.5, 0, 1000, 200, step=0.02)
    recs += expected_loss_records("lorafull", 0.3, (4.0, 256.0), 0, 64, 200)
    store.write_chunk(sde_campaign(Plan()), "c0", recs)
    assert {r.extra["kind"] for r in recs} == {"rate", "mean_loss", "expected_loss", "minimises_F"}
    for el in (r for r in recs if r.extra["kind"] == "expected_loss"):
        lo, hi = el.extra["interval"]
        assert lo <= el.extra["statistic"] == el.value <= hi
        assert el.bound == pytest.approx(el.extra["dim"] / (2 * el.extra["beta"]))      # Laplace d/(2 beta)
        limit = el.extra["limit"]                              # d/(2 beta) plus the margin
        assert limit == pytest.approx(el.bound * 1.1) and el.extra["df"] == 63
        assert (el.verdict == Outcome.REFUTED) == (el.extra["p_above"] < 0.05)
        assert (el.verdict == Outcome.SUPPORTED) == (hi < limit)     # support: the upper end shown below
        assert el.extra["L_star"] >= el.extra["min_L"]
        d = el.extra["dist_argmin_L"]
        assert len(d) >= 2 and all(t1 < t2 for (t1, _, _), (t2, _, _) in zip(d, d[1:]))
    rate = next(r for r in recs if r.extra["kind"] == "rate")
    assert rate.bound == pytest.approx(0.5)                   # OU: 1/(beta C_P) = lambda
    lo, hi = rate.extra["interval"]
    q = stats.t.ppf(0.95, 7)                                   # 8 chain groups: a 90% t interval, df = 7
    assert rate.extra["df"] == 7 and hi - lo == pytest.approx(2 * q * rate.extra["se"])
    inside = 0.5 - rate.extra["margin"] < lo and hi < 0.5 + rate.extra["margin"]
    assert (rate.verdict == Outcome.SUPPORTED) == inside       # TOST: equivalence shown, not "inside +- 3 se"
    assert all(isinstance(r.verdict, Outcome) and "statistic" in r.extra for r in recs)
    f = findings(store, Plan())
    assert [(s.kind, s.outcome, s.measured) for s in f.sde] == [(r.extra["kind"], r.verdict.value, r.value)
                                                                 for r in recs if r.extra["kind"] != "minimises_F"]
    assert [x.beta for x in f.loss_excess] == [4.0, 256.0] == [m.beta for m in f.minimisation]
    for x, r in zip(f.loss_excess, [r for r in recs if r.extra["kind"] == "expected_loss"]):
        assert (x.excess, x.laplace, x.outcome) == (r.value, r.extra["laplace"], r.verdict.value)
        assert x.to_argmin[-1].mean == r.extra["dist_argmin_L"][-1][1]


class _Quadratic:
    """L = |theta|^2 / 2 in 3 dimensions: inf L = 0 at 0, E_beta[L] = d / (2 beta (1 + lambda)) under
    F = L + lambda/2 |theta|^2, below the Laplace value d/(2 beta)."""

    dim, provenance = 3, {"family": "quadratic"}

    def to(self, device):
        return self

    def loss(self, th):
        return 0.5 * (th ** 2).sum(-1)

    def F_torch(self, th, lam):
        return (0.5 + 0.5 * lam) * (th ** 2).sum(-1)


def test_loss_excess_check_fails_on_a_planted_bug(monkeypatch):
    """The check that the SDE minimises the loss can fail: a sampler run at a tenth of the temperature
    it claims (a planted bug) has E[L] - inf L ten times the Laplace value, and the record is refuted;
    the correct sampler on the same loss is supported."""
    from verification.poincare.checks import sde

    monkeypatch.setattr(sde, "family", lambda name, seed: _Quadratic())
    good = sde.expected_loss_records("quad", 0.1, (8.0,), 0, 512, 400, step=0.05)[0]
    assert good.verdict == Outcome.SUPPORTED and good.extra["min_L"] < 1e-8
    real = sde.simulate
    monkeypatch.setattr(sde, "simulate", lambda F, th0, beta, *a, **k: real(F, th0, beta / 10, *a, **k))
    bad = sde.expected_loss_records("quad", 0.1, (8.0,), 0, 512, 400, step=0.05)[0]
    assert bad.verdict == Outcome.REFUTED and bad.extra["interval"][0] > bad.bound


def test_muckenhoupt_brackets_contain_the_estimates():
    """1-D instances carry a certified bracket (python-flint arb) that contains the discretised C_P
    (and, for the Gaussian, the exact 1/(beta lambda))."""
    for name, beta, lam in (("gauss1", 4.0, 0.3), ("attn1", 16.0, 0.1)):
        r = next(r for r in job.check_instance(name, beta, lam, Plan()) if r.extra.get("kind") == "muckenhoupt")
        lo, hi = r.extra["bracket"]
        assert r.verdict == Verdict.HOLDS and r.extra["inside"] and r.extra["certified"]
        assert lo < r.value - r.extra["err"] and r.value + r.extra["err"] < hi and hi / lo < 20
        if name == "gauss1":
            assert r.extra["exact_inside"]


@pytest.mark.parametrize("plant", ["estimate x 10", "upper end B instead of 4B"])
def test_muckenhoupt_check_fails_on_a_planted_bug(plant, monkeypatch):
    """A wrong discretised estimate, or a bracket with the criterion's constant dropped, is caught:
    the record is violated and 'inside' is False."""
    if plant == "estimate x 10":
        real = job.poincare_constant_1d

        def wrong(*a, **k):
            r = real(*a, **k)
            r.value *= 10
            return r
        monkeypatch.setattr(job, "poincare_constant_1d", wrong)
    else:
        real_mk = job.muckenhoupt_bracket

        def quarter(*a, **k):
            out = real_mk(*a, **k)
            return {**out, "upper": out["upper"] / 4}
        monkeypatch.setattr(job, "muckenhoupt_bracket", quarter)
    r = next(r for r in job.check_instance("attn1", 1.0, 0.1, Plan()) if r.extra.get("kind") == "muckenhoupt")
    assert r.verdict == Verdict.VIOLATED and r.extra["inside"] is False


def test_outcome_rules():
    """Agreement with a prediction is TOST at 10% of the prediction, df = units - 1: a prediction
    inside estimate +- 3 se (the rule it replaces) is not support when equivalence is not shown."""
    import numpy as np

    from verification.poincare.checks.sde import REL_MARGIN, agreement_outcome, excess_outcome

    rng = np.random.default_rng(0)
    near = 1.0 + rng.normal(0, 0.01, 8)
    out, iv, test = agreement_outcome(near, 1.0)
    assert out == Outcome.SUPPORTED and test["df"] == 7 and test["margin"] == pytest.approx(REL_MARGIN)
    assert iv[0] < near.mean() < iv[1] and test["mde"] < REL_MARGIN
    assert agreement_outcome(1.2 + rng.normal(0, 0.01, 8), 1.0)[0] == Outcome.REFUTED     # a finding
    noisy = 1.0 + rng.normal(0, 0.3, 8)                     # the prediction is well inside +- 3 se
    assert abs(noisy.mean() - 1.0) < 3 * noisy.std(ddof=1) / np.sqrt(8)
    o, _, t = agreement_outcome(noisy, 1.0)
    assert o == Outcome.INCONCLUSIVE and t["mde"] > REL_MARGIN          # what this run could show, stated
    assert excess_outcome(0.5 + rng.normal(0, 0.01, 64), 0.1)[0] == Outcome.REFUTED      # above Laplace
    assert excess_outcome(0.1 + rng.normal(0, 0.001, 64), 0.1)[0] == Outcome.SUPPORTED


def test_findings_tables_state_their_conclusions(store, tmp_path):
    from verification.poincare.checks import villani as vm

    plan = Plan(families=("lora2",))
    store.write_chunk(plan.campaign, "c", job.check_instance("lora2", 1.0, 0.1, plan)
                      + job.check_instance("attn2", 16.0, 0.1, plan))
    vm.run_villani_map(store, plan, families=("lora2",), console=_quiet())
    report(store, plan, tmp_path / "o", _quiet())
    cap = (tmp_path / "o" / "tables" / "poincare-villani-boundary.md").read_text().splitlines()[0]
    betas, _ = vm.map_grid(False)
    assert f"lora2: certified lambda_V(beta) > 0 at {3 * len(betas)}/{3 * len(betas)} (seed, beta)" in cap
    assert "every lambda > 0" in cap
    meta = (tmp_path / "o" / "tables" / "poincare-metastable.md").read_text()
    assert "of 2 instances have their best" in meta and "attn2" in meta       # listed, not omitted
    el = (tmp_path / "o" / "tables" / "poincare_expected_loss.md").read_text()
    assert "lora2: E_mu[L] > L(argmin F) at" in el and "attn2" in el


def test_two_dimensional_constant_is_reproducible():
    """The 2-D discretised C_P is the same to the last bit run after run (ARPACK's start vector is
    fixed; its default random start made the stored values and the CSV tables differ)."""
    a = job.check_instance("gauss2", 4.0, 0.3, Plan())
    b = job.check_instance("gauss2", 4.0, 0.3, Plan())
    assert [(r.instance, r.value, r.slack, r.extra["err"]) for r in a] == \
        [(r.instance, r.value, r.slack, r.extra["err"]) for r in b]


def test_run_returns_what_it_computed_and_resumes(store, monkeypatch):
    """``run(plan, store)`` returns a :class:`verification.plan.RunResult`: the plan's campaigns
    (gauss1 alone: no Villani map; ``--no-sde``: no Langevin runs), what it computed, then on a
    resume that every chunk was already stored."""
    from verification.plan import RunResult
    from verification.poincare.checks import run

    monkeypatch.setattr(Plan, "grid", lambda self, name: [(4.0, 0.3)])
    plan = Plan(families=("gauss1",), sde=False)
    first = run(plan, store, console=_quiet())
    assert isinstance(first, RunResult) and first.family == "poincare"
    assert first.names() == plan.campaigns()[:1] == (plan.campaign,)
    assert (first.computed, first.skipped, first.records) == (1, 0, store.count(plan.campaign))
    again = run(plan, store, console=_quiet())
    assert (again.computed, again.skipped, again.records) == (0, 1, 0)


def test_the_paper_reads_the_plan_it_is_given(store):
    """``needs(store, plan)`` lists exactly the plan's campaigns, each filled by ``plan.command()``;
    a plan the paper's part cannot show (fewer families, no Langevin runs) is refused by
    ``check_plan``, in one line naming the option."""
    from theory.errors import InvalidInput
    from verification.poincare.paper import check_plan, needs

    for plan in (Plan.for_verify(0, False), Plan.for_verify(3, True), Plan(seed=2, origin="poincare")):
        got = needs(store, plan)
        assert [n.campaign for n in got] == list(plan.campaigns())
        assert {n.command for n in got} == {plan.command()}
    assert needs(store, Plan.for_verify(3, True))[0].command == "attnbounds verify --only poincare --seed 3 --full"
    assert needs(store, Plan(seed=2, origin="poincare"))[0].command == "attnbounds poincare --seed 2"
    check_plan(Plan.for_verify(0, False))
    with pytest.raises(InvalidInput, match="--families gauss1: the paper's Poincare part shows every family"):
        check_plan(Plan(families=("gauss1",), origin="poincare"))
    with pytest.raises(InvalidInput, match="--no-sde"):
        check_plan(Plan(sde=False, origin="poincare"))


def test_findings_are_the_stored_records(store):
    """The typed findings hold the stored numbers and verdicts, each under its own name: C_P, the
    bounds and their ratios, the Villani outcome, the Muckenhoupt bracket, the Gaussian tight share,
    the collapsed test functions, and the claims decided from them."""
    plan = Plan()
    recs = job.check_instance("gauss1", 4.0, 0.3, plan) + job.check_instance("attn1", 16.0, 0.1, plan)
    store.write_chunk(plan.campaign, "c", recs)
    f = findings(store, plan)
    assert [i.key for i in f.instances] == [("attn1", 16.0, 0.1), ("gauss1", 4.0, 0.3)]
    for i in f.instances:
        mine = [r for r in recs if r.extra["family"] == i.family]
        be = next(r for r in mine if r.theorem.endswith("bakry_emery"))
        hs = next(r for r in mine if r.theorem.endswith("holley_stroock"))
        lin = next(r for r in mine if r.extra.get("kind") == "linear")
        assert (i.C_P, i.err, i.trunc_err) == (be.extra["C_P"], be.extra["err"], be.extra["trunc_err"])
        assert (i.be.bound, i.be.verdict, i.hs.bound, i.hs.verdict) == (be.bound, be.verdict.value, hs.bound,
                                                                        hs.verdict.value)
        assert i.var_ratio == lin.bound / i.C_P
        assert i.be_ratio == (None if be.bound is None else be.bound / i.C_P)
        assert i.collapsed == (max(i.var_ratio, i.quad_ratio) < 0.5)
    v = {x.family: x for x in f.villani}
    assert v["gauss1"].outcome == "supported" and v["gauss1"].certified
    mk = {b.family: b for b in f.brackets}
    r = next(r for r in recs if r.extra.get("kind") == "muckenhoupt" and r.extra["family"] == "attn1")
    assert (mk["attn1"].lo, mk["attn1"].hi, mk["attn1"].inside) == (r.extra["bracket"][0], r.extra["bracket"][1],
                                                                    r.extra["inside"])
    tight = sum(r.verdict == Verdict.TIGHT for r in recs if r.extra["family"] == "gauss1")
    assert (f.gaussian_tight.k, f.gaussian_tight.n) == (tight, 4) and f.gaussian_float_agrees.k == tight
    assert [t.family for t in f.thresholds] == ["attn1", "gauss1"]
    assert f.hs_every_lambda() == ["attn1"] and f.no_bound() == []
    assert not f.map_points and not f.sde and not f.loss_excess
    assert [c.key for c in f.claims] == ["attention-villani", "lora-poincare", "lora-villani-every-beta",
                                         "lora-villani-beta-large", "sde-minimises", "langevin-rate"]
    assert {c.key: c.outcome for c in f.claims}["sde-minimises"] == "not-testable"
