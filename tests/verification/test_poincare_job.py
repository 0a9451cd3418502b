"""verification.poincare.checks: verdicts, resumable campaign, loud violations, tables/figures, CLI."""
import pytest
from rich.console import Console

from numerics.poincare import bounds as PB
from theory.verdicts import Verdict, ViolationError
from verification.poincare import checks as job
from verification.cli import main
from verification.poincare.report import bounds_rows, report


def _quiet():
    return Console(quiet=True)


def test_gaussian_instance_is_tight_for_both_bounds():
    recs = job.check_instance("gauss1", 4.0, 0.3, job.Plan())
    by = {(r.theorem.rsplit(".", 1)[-1], r.instance.rsplit("-", 1)[-1]): r for r in recs}
    assert by[("bakry_emery", "l0.3")].verdict == Verdict.TIGHT
    assert by[("holley_stroock", "l0.3")].verdict == Verdict.TIGHT
    assert by[("test_function_lower", "linear")].verdict == Verdict.TIGHT
    assert by[("villani", "l0.3")].verdict == Verdict.HOLDS
    assert abs(by[("bakry_emery", "l0.3")].value - 1 / 1.2) < 1e-9


def test_verdict_rules():
    assert job.upper_verdict(None, 1.0, 0.1) == Verdict.NOT_APPLICABLE
    assert job.upper_verdict(0.8, 1.0, 0.1) == Verdict.VIOLATED
    assert job.upper_verdict(0.95, 1.0, 0.1) == Verdict.UNDECIDED
    assert job.upper_verdict(1.2, 1.0, 0.1) == Verdict.HOLDS
    assert job.upper_verdict(0.99, 0.9, 0.01, certified_lower=1.0) == Verdict.VIOLATED
    assert job.lower_verdict(1.2, 1.0, 0.1) == Verdict.VIOLATED
    assert job.lower_verdict(0.5, 1.0, 0.1) == Verdict.HOLDS


def test_campaign_resumes_and_reports(store, tmp_path):
    plan = job.Plan(families=("gauss1",))
    job.run_campaign(store, plan, _quiet())
    n = store.count(plan.campaign)
    grid = plan.grid("gauss1")
    # per instance: linear + quadratic lower bounds, BE, HS, Villani; + the mpmath lower bound at lambda = 0.3
    assert n == 5 * len(grid) + sum(1 for _, lam in grid if plan.mp_check("gauss1", lam))
    job.run_campaign(store, plan, _quiet())          # resume: nothing recomputed, nothing duplicated
    assert store.count(plan.campaign) == n
    rows = bounds_rows(store, plan.campaign)
    assert all(r[8] == "tight" and abs(r[7] - 1) < 1e-8 for r in rows)   # BE / C_P = 1
    report(store, plan, tmp_path / "tables", tmp_path / "figures", _quiet())
    assert (tmp_path / "tables" / "poincare_bounds.md").read_text().count("tight") >= len(rows)
    assert (tmp_path / "figures" / "poincare_gauss1.png").stat().st_size > 0
    assert (tmp_path / "figures" / "poincare_gauss1.pdf").exists()


def test_upper_bound_below_truth_stops_the_run(store, monkeypatch):
    def wrong(fam, beta, lam):
        return {"bound": 0.5 / (beta * lam), "osc": 0.0, "reason": "deliberately wrong"}

    monkeypatch.setattr(PB, "holley_stroock", wrong)
    plan = job.Plan(families=("attn1",))
    monkeypatch.setattr(job.Plan, "grid", lambda self, name: [(1.0, 1.0)])
    with pytest.raises(ViolationError, match="holley_stroock"):
        job.run_campaign(store, plan, _quiet())
    stored = list(store.records(campaign=plan.campaign, theorem="poincare.gibbs.holley_stroock"))
    assert stored and stored[0]["verdict"] == "violated"


def test_lora_villani_failure_is_certified_and_reported():
    recs = job.check_instance("lora2", 1.0, 0.1, job.Plan())
    v = next(r for r in recs if r.theorem == "poincare.gibbs.villani")
    assert v.verdict == Verdict.VIOLATED and v.extra["certified"]
    assert v.bound > 0.1                                     # lambda_V(1) above the lambda used
    hs = next(r for r in recs if r.theorem == "poincare.gibbs.holley_stroock")
    assert hs.verdict == Verdict.HOLDS                       # what still holds there


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
            plan = job.Plan(families=("gauss1",))
            job.run_campaign(st, plan, _quiet())
            report(st, plan, tmp_path / f"t{k}", tmp_path / f"f{k}", _quiet())
        outs.append([(tmp_path / f"t{k}" / f"poincare_{n}.csv").read_bytes() for n in ("bounds", "villani", "thresholds")])
    assert outs[0] == outs[1]


def test_sde_records_and_table(store):
    from verification.poincare.report import sde_rows
    from verification.poincare.sde import expected_loss_records, rate_records

    recs = rate_records("gauss1", 2.0, 0.5, 0, 1000, 200, step=0.02)
    recs += expected_loss_records("lorafull", 0.3, (32.0,), 0, 64, 200)
    store.write_chunk("poincare.sde-test", "c0", recs)
    kinds = {r.extra["kind"] for r in recs}
    assert kinds == {"rate", "mean_loss", "expected_loss", "gap"}
    el = next(r for r in recs if r.extra["kind"] == "expected_loss")
    assert el.verdict == Verdict.HOLDS and el.value >= el.bound - 3 * el.extra["E_F_se"]
    gaps = [r.value - r.bound for r in recs if r.extra["kind"] == "gap"]
    assert all(g >= 0 for g in gaps) and gaps[-1] > gaps[0]   # the gap grows with lambda
    rate = next(r for r in recs if r.extra["kind"] == "rate")
    assert rate.bound == pytest.approx(0.5)                   # OU: 1/(beta C_P) = lambda
    assert len(sde_rows(store, "poincare.sde-test")) == len(recs) + 1   # E[L] row next to E[F]


def test_two_dimensional_constant_is_reproducible():
    """The 2-D discretised C_P is the same to the last bit run after run (ARPACK's start vector is
    fixed; its default random start made the stored values and the CSV tables differ)."""
    a = job.check_instance("gauss2", 4.0, 0.3, job.Plan())
    b = job.check_instance("gauss2", 4.0, 0.3, job.Plan())
    assert [(r.instance, r.value, r.slack, r.extra["err"]) for r in a] == \
        [(r.instance, r.value, r.slack, r.extra["err"]) for r in b]
