"""The Dobrushin campaign: records, resume, determinism, and a table built from the store only."""
import numpy as np
import pytest

from theory.verdicts import Verdict, ViolationError
from numerics.sources.random import DISTRIBUTIONS, sample
from verification.dobrushin import checks as job
from verification.dobrushin import report as dreport
from verification.dobrushin.paper import paper_part
from verification.cli import main
from verification.store import ResultStore

PLAN = job.Plan(families=("dirichlet", "hard", "causal"), sizes=(2, 5), seed=3)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(job.Plan, "instances", lambda self, n: 12)
    monkeypatch.setattr(job, "CHUNK", 5)


def test_samplers_give_row_stochastic_families():
    rng = np.random.default_rng(0)
    for fam in DISTRIBUTIONS:
        A = sample(fam, 6, 4, rng)
        assert A.shape == (4, 6, 6) and np.all(A >= 0)
        np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-12)
    assert np.all(np.triu(sample("causal", 5, 3, rng), 1) == 0)
    assert set(np.unique(sample("hard", 5, 3, rng))) == {0.0, 1.0}


def test_campaign_stores_every_instance_and_resumes(tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        job.run(PLAN, s)
        recs = list(s.records(PLAN.campaign))
    assert len([r for r in recs if r["theorem"] == "dobrushin.factor"]) == 3 * 2 * 12
    assert all(r["verdict"] in ("holds", "tight") for r in recs)
    assert all({"seed", "family", "n", "chunk"} <= set(r["provenance"]) for r in recs)
    # n = 2: D2 holds with equality for every pair (delta = |det|)
    assert all(r["verdict"] == "tight" for r in recs if r["theorem"] == "dobrushin.product"
               and r["provenance"]["n"] == 2)

    calls = []
    monkeypatch.setattr(job, "check_chunk", lambda *a: calls.append(a) or [])
    with ResultStore(db) as s:
        job.run(PLAN, s)                          # everything stored: nothing recomputed
    assert calls == []


def test_interrupted_run_resumes_where_it_stopped(tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    real = job.check_chunk
    seen = []

    def flaky(*a):
        if len(seen) == 4:
            raise KeyboardInterrupt                       # killed in the middle of the run
        seen.append(a)
        return real(*a)

    monkeypatch.setattr(job, "check_chunk", flaky)
    with ResultStore(db) as s, pytest.raises(KeyboardInterrupt):
        job.run(PLAN, s)
    with ResultStore(db) as s:
        assert len(s.done_chunks(PLAN.campaign)) == 4
    monkeypatch.setattr(job, "check_chunk", real)
    with ResultStore(db) as s:
        job.run(PLAN, s)
        assert len(s.done_chunks(PLAN.campaign)) == 3 * 2 * 3


def test_same_seed_gives_byte_identical_tables(tmp_path):
    out = []
    for k in range(2):
        with ResultStore(tmp_path / f"r{k}.db") as s:
            job.run(PLAN, s)
            from rich.console import Console
            dreport.report(s, PLAN, tmp_path / f"t{k}", Console(file=open(tmp_path / "log", "w")))
        out.append((tmp_path / f"t{k}" / "tables" / "dobrushin_random.csv").read_bytes())
    assert out[0] == out[1] and b"dirichlet" in out[0]


def test_violation_is_stored_and_fails_loudly(tmp_path, monkeypatch):
    real = job.check_chunk

    def broken(*a):
        recs = real(*a)
        recs[0].verdict = Verdict.VIOLATED
        return recs

    monkeypatch.setattr(job, "check_chunk", broken)
    with ResultStore(tmp_path / "r.db") as s:
        with pytest.raises(ViolationError, match="violated"):
            job.run(PLAN, s)
        assert any(r["verdict"] == "violated" for r in s.records(PLAN.campaign))


@pytest.mark.parametrize("shrink", [1e-9, 1e-6])
def test_planted_defect_in_delta_is_caught_by_the_direct_check(tmp_path, monkeypatch, shrink):
    """A real defect in the checked quantity: ``dobrushin`` returns values slightly too small. The
    campaign's independent direct check (both sides of D1 and D2 recomputed, compared with the
    closed form within the rigorous float error) must store ``violated`` and stop loudly."""
    from numerics.dobrushin import batch as sweep    # the one check of D1/D2 the campaign runs

    real = sweep.dobrushin
    monkeypatch.setattr(sweep, "dobrushin", lambda P, **kw: real(P, **kw) * (1 - shrink))    # D2's deltas
    real_fc = sweep.factor_check

    def shrunk(A, **kw):     # D1's one pass: delta(A) too small, its closed-form slack untouched
        fc = real_fc(A, **kw)
        fc.delta = np.asarray(fc.delta) * (1 - shrink)
        return fc
    monkeypatch.setattr(sweep, "factor_check", shrunk)
    with ResultStore(tmp_path / "r.db") as s:
        with pytest.raises(ViolationError, match="violated"):
            job.run(PLAN, s)
        recs = list(s.records(PLAN.campaign))
    bad = [r for r in recs if r["verdict"] == "violated"]
    # both direct checks see it: D1's (both sides vs the closed form) and D2's (n = 2 is always tight)
    assert {r["theorem"] for r in bad} == {"dobrushin.factor", "dobrushin.product"}


def test_honest_delta_is_never_flagged(tmp_path):
    """The same direct check on the true values: nothing violated (the error bound is not too tight)."""
    with ResultStore(tmp_path / "r.db") as s:
        job.run(job.Plan(families=("dirichlet", "sparse", "hard", "causal"), sizes=(2, 3, 8), seed=5), s)
        assert not any(r["verdict"] == "violated" for r in s.records(
            job.Plan(families=("dirichlet", "sparse", "hard", "causal"), sizes=(2, 3, 8), seed=5).campaign))


def test_table_never_shows_zero_slack_for_a_strict_record():
    """A strict (holds) record's slack is positive; a legacy record stored as 0.0 is shown as
    unresolved, never as 0."""
    def rec(v, slack):
        return {"theorem": "dobrushin.factor", "verdict": v, "slack": slack, "extra": {},
                "provenance": {"family": "dirichlet", "n": 3}}
    from verification.dobrushin.findings import cells

    cell, = cells([rec("tight", 0.0), rec("holds", 4.3e-19), rec("holds", 0.25)])
    assert cell.min_slack == 4.3e-19 and not cell.unresolved and dreport.summarise((cell,))[0][8] == 4.3e-19
    cell, = cells([rec("holds", 0.0), rec("holds", 0.25)])
    assert cell.min_slack is None and cell.unresolved
    assert dreport.summarise((cell,))[0][8] == dreport.UNRESOLVED_SLACK and dreport.UNRESOLVED_SLACK.startswith("> 0")


def test_cli_runs_and_rejects_bad_arguments(tmp_path, capsys):
    assert main(["dobrushin", "--db", str(tmp_path / "r.db"), "--out", str(tmp_path),
                 "--families", "hard", "--sizes", "3"]) == 0
    assert (tmp_path / "tables" / "dobrushin_random.md").exists() and (tmp_path / "tables" / "dobrushin_random.csv").exists()
    assert main(["dobrushin", "--db", ":memory:", "--families", "gaussian"]) == 2
    assert "unknown family 'gaussian'" in capsys.readouterr().err
    assert main(["theorems"]) == 0
    assert "dobrushin.factor" in capsys.readouterr().out


def legacy_check_chunk(family, n, chunk, count, seed):
    """The campaign's records as its own per-instance loop made them before it used the stress
    sweep's vectorised check (``numerics.dobrushin.batch.check_batch``): the reference the
    records, tables and macros must still equal byte for byte."""
    from numerics.dobrushin import dobrushin, factor_check, float_error, product_equality
    from numerics.sources.random import GENERATOR, generator
    from numerics.stochastic import UNIT_ROUNDOFF, as_stochastic
    from verification.store import Record

    A = sample(family, n, count, generator(seed, family, n, chunk))
    prov = {"generator": GENERATOR, "seed": seed, "family": family, "n": n, "chunk": chunk}
    out = []
    fc = factor_check(A)
    value, dA = dobrushin(0.5 * (np.eye(n) + A)), dobrushin(A)
    bound = (1 + dA) / 2
    err = 2 * float_error(as_stochastic(A, "A").row_dev, n) + 2 * UNIT_ROUNDOFF
    for k in range(count):
        direct = bound[k] - value[k]
        verdict = Verdict.TIGHT if fc.equality[k] else Verdict.HOLDS
        if direct < -err[k] or abs(direct - fc.slack[k]) > 2 * err[k]:
            verdict = Verdict.VIOLATED
        out.append(Record("dobrushin.factor", f"{family}/n{n}/c{chunk}/i{k}", verdict,
                          slack=float(fc.slack[k]), value=float(value[k]), bound=float(bound[k]),
                          provenance={**prov, "index": k},
                          extra={"exact_path": bool(fc.exact[k]), "through_first": bool(fc.through_first[k]),
                                 "through_other": bool(fc.through_other[k]), "delta_A": float(dA[k]),
                                 "pair": [int(v) for v in fc.pair[k]]}))
    P, Q = A[0::2][: count // 2], A[1::2][: count // 2]
    eq = product_equality(P, Q)
    dP, dQ, dPQ = dobrushin(P), dobrushin(Q), dobrushin(P @ Q)
    err2 = 4 * float_error(np.maximum(as_stochastic(P, "P").row_dev, as_stochastic(Q, "Q").row_dev), n)
    for k in range(len(P)):
        b = dP[k] * dQ[k]
        verdict = Verdict.TIGHT if eq[k] else Verdict.HOLDS
        if dPQ[k] > b + err2[k]:
            verdict = Verdict.VIOLATED
        out.append(Record("dobrushin.product", f"{family}/n{n}/c{chunk}/p{k}", verdict,
                          slack=float(b - dPQ[k]), value=float(dPQ[k]), bound=float(b),
                          provenance={**prov, "pair": [2 * k, 2 * k + 1]}))
    return out


def test_records_tables_and_macros_equal_the_per_instance_loop(tmp_path, monkeypatch):
    """The campaign checks with the stress sweep's vectorised check (one check per theorem); on the
    main job's design (every family and size, a few instances each) its records, its table and the
    paper's tables and macros are byte-identical to those of the per-instance loop it replaced."""
    from rich.console import Console

    from verification.paper.latex import macro_value, table_tex

    monkeypatch.setattr(job.Plan, "instances", lambda self, n: 7)       # 7 matrices: odd, a lone D1 instance
    plan = job.Plan(seed=2)
    got = {}
    for which, check in (("vectorised", job.check_chunk), ("legacy", legacy_check_chunk)):
        monkeypatch.setattr(job, "check_chunk", check)
        with ResultStore(tmp_path / f"{which}.db") as s:
            job.run(plan, s)
            dreport.report(s, plan, tmp_path / which, Console(file=open(tmp_path / f"{which}.log", "w")))
            fields = ("theorem", "instance", "verdict", "slack", "value", "bound", "backend", "provenance", "extra")
            records = sorted(([r[f] for f in fields] for r in s.records(plan.campaign)), key=repr)
            part = paper_part(s, plan)
        got[which] = {"records": records,
                      "tables": {p.name: p.read_bytes() for p in sorted((tmp_path / which / "tables").iterdir())},
                      "paper": [table_tex(t) for t in part.tables],
                      "macros": {k: macro_value(k, v) for k, v in part.macros.items()}}
    new, old = got["vectorised"], got["legacy"]
    assert len(new["records"]) == 7 * 9 * (7 + 3) and any(r[2] == "tight" for r in new["records"])
    # D1's value delta((I+A)/2) now comes from the fused pass over A's pairs ((I+A)/2's min-form from
    # its own entries, numerics.kernels.scan._half_d), not from a second min-form pass over the float
    # matrix (I+A)/2: the same number up to rounding, inside the rigorous error bound (< 1e-13 at these
    # sizes), and so is a strict slack taken from it; verdicts, exact slacks, pairs and every other field
    # are byte-identical, and so are the tables and macros (printed at a few digits)
    assert len(new["records"]) == len(old["records"])
    for a, b in zip(new["records"], old["records"]):
        same = [k for k in range(len(fields)) if fields[k] not in ("value", "slack")]
        assert [a[k] for k in same] == [b[k] for k in same], a[1]
        for k in (fields.index("value"), fields.index("slack")):
            assert abs(a[k] - b[k]) <= 1e-12, (a[1], fields[k], a[k], b[k])
        if a[2] == "tight" and a[0] == "dobrushin.factor":
            assert a[fields.index("slack")] == b[fields.index("slack")] == 0.0, (a, b)
    for key in ("tables", "paper", "macros"):
        assert new[key] == old[key], key


def _replan(command: str) -> job.Plan:
    """The plan the command line ``command`` runs: ``dobrushin``'s ``Plan.from_args``, or the
    ``verify`` section's ``Plan.for_verify``."""
    import shlex

    from verification.cli import build_parser

    argv = shlex.split(command)[1:]
    args = build_parser(argv).parse_args(argv)
    return job.Plan.for_verify(args.seed, args.full) if argv[0] == "verify" else job.Plan.from_args(args)


@pytest.mark.parametrize("plan", [job.Plan.for_verify(0, False), job.Plan.for_verify(7, True), PLAN,
                                  job.Plan(families=("sparse",), sizes=(3, 4), full=True)])
def test_the_plans_command_reproduces_it(plan):
    """``plan.command()`` is the one command line of the plan (what the paper and a refusal print):
    the main job's section for its plan, the ``dobrushin`` subcommand otherwise; run, it plans the
    same plan."""
    assert _replan(plan.command()) == plan
    assert plan.command().startswith("attnbounds verify --only dobrushin" if plan == job.Plan.for_verify(
        plan.seed, plan.full) else "attnbounds dobrushin --families")
    prov = plan.provenance()
    assert prov["seed"] == plan.seed and prov["preset"] == ("full" if plan.full else "quick")
    assert prov["families"] == ",".join(plan.families) and "default_rng" in prov["sampler"]


def test_a_plan_of_other_cells_is_not_the_main_jobs_command():
    """The planted case: one family less than the main job's plan is another plan, whose command
    names its cells (the verify line would fill the wrong campaign chunks)."""
    main_plan = job.Plan.for_verify(0, False)
    fewer = job.Plan(families=main_plan.families[1:], seed=0)
    assert fewer.command() != main_plan.command() and _replan(fewer.command()) == fewer


def test_run_returns_what_each_campaign_did(tmp_path):
    from verification.plan import RunResult

    with ResultStore(tmp_path / "r.db") as s:
        first = job.run(PLAN, s)
        again = job.run(PLAN, s)
    total = len(PLAN.chunks()) + len(PLAN.causal_chunks())
    assert isinstance(first, RunResult) and first.family == "dobrushin"
    assert first.names() == (PLAN.causal_campaign, PLAN.campaign)
    assert (first.computed, first.skipped) == (total, 0) and first.records > 0
    assert (again.computed, again.skipped, again.records) == (0, total, 0)


def test_findings_count_the_records_and_test_the_causal_share(tmp_path):
    """The findings' cells count the stored records per (family, n), their shares carry count,
    total and Wilson interval; the causal sizes test the campaign's count against the stored
    prediction (exact binomial, Holm across sizes) and carry the check's stored outcome."""
    import math

    from verification.dobrushin.findings import findings
    from verification.findings import Share
    from verification.stats import binomial_p, holm, wilson

    with ResultStore(tmp_path / "r.db") as s:
        job.run(PLAN, s)
        found = findings(s, PLAN)
        recs = list(s.records(PLAN.campaign))
        check = {r["extra"]["n"]: r for r in s.records(PLAN.causal_campaign)}
    order = sorted(((f, n) for f in PLAN.families for n in PLAN.sizes), key=lambda c: (DISTRIBUTIONS.index(c[0]), c[1]))
    assert [(c.family, c.n) for c in found.cells] == order
    for c in found.cells:
        mine = [r for r in recs if (r["provenance"]["family"], r["provenance"]["n"]) == (c.family, c.n)]
        d1 = [r for r in mine if r["theorem"] == "dobrushin.factor"]
        d2 = [r for r in mine if r["theorem"] == "dobrushin.product"]
        assert (c.d1.k, c.d1.n) == (sum(r["verdict"] == "tight" for r in d1), 12)
        assert (c.d2.k, c.d2.n) == (sum(r["verdict"] == "tight" for r in d2), len(d2)) and len(d2) == 5
        if c.family == "causal":                  # the causal corollary forces it: n of n, no interval (a check)
            assert c.d1.forced and c.d1.k == c.d1.n and math.isnan(c.d1.lo)
        else:
            assert (c.d1.lo, c.d1.hi) == wilson(c.d1.k, c.d1.n)
        assert c.violated == c.undecided == 0
    assert found.pooled("d2", ("dirichlet", "hard", "causal"), lambda n: n == 2) == Share.wilson(15, 15)   # n = 2: always tight
    assert [s.n for s in found.causal] == [2, 5]
    p = [binomial_p(s.campaign.k, s.campaign.n, check[s.n]["extra"]["predicted"]) for s in found.causal]
    assert [s.binomial.p for s in found.causal] == holm(p)
    for s in found.causal:
        e = check[s.n]["extra"]
        assert s.campaign == found.cell("causal", s.n).d2 and s.predicted.value == e["predicted"]
        assert (s.check.k, s.check.n, s.verdicts_predicted.k) == (e["tight"], e["pairs"], e["verdict_agrees"])
        assert s.agreement.outcome == check[s.n]["verdict"] and s.agreement.p == e["p_equivalent"]
