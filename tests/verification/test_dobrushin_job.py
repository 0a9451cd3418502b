"""The Dobrushin campaign: records, resume, determinism, and a table built from the store only."""
import numpy as np
import pytest

from theory.verdicts import Verdict, ViolationError
from numerics.sources.random import FAMILIES, sample
from verification.dobrushin import checks as job
from verification.dobrushin import report as dreport
from verification.cli import main
from verification.store import ResultStore

PLAN = job.Plan(families=("dirichlet", "hard", "causal"), sizes=(2, 5), seed=3)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(job.Plan, "instances", lambda self, n: 12)
    monkeypatch.setattr(job, "CHUNK", 5)


def test_samplers_give_row_stochastic_families():
    rng = np.random.default_rng(0)
    for fam in FAMILIES:
        A = sample(fam, 6, 4, rng)
        assert A.shape == (4, 6, 6) and np.all(A >= 0)
        np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-12)
    assert np.all(np.triu(sample("causal", 5, 3, rng), 1) == 0)
    assert set(np.unique(sample("hard", 5, 3, rng))) == {0.0, 1.0}


def test_campaign_stores_every_instance_and_resumes(tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    with ResultStore(db) as s:
        job.run_campaign(s, PLAN)
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
        job.run_campaign(s, PLAN)                          # everything stored: nothing recomputed
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
        job.run_campaign(s, PLAN)
    with ResultStore(db) as s:
        assert len(s.done_chunks(PLAN.campaign)) == 4
    monkeypatch.setattr(job, "check_chunk", real)
    with ResultStore(db) as s:
        job.run_campaign(s, PLAN)
        assert len(s.done_chunks(PLAN.campaign)) == 3 * 2 * 3


def test_same_seed_gives_byte_identical_tables(tmp_path):
    out = []
    for k in range(2):
        with ResultStore(tmp_path / f"r{k}.db") as s:
            job.run_campaign(s, PLAN)
            from rich.console import Console
            dreport.report(s, PLAN, tmp_path / f"t{k}", Console(file=open(tmp_path / "log", "w")))
        out.append((tmp_path / f"t{k}" / "dobrushin_random.csv").read_bytes())
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
            job.run_campaign(s, PLAN)
        assert any(r["verdict"] == "violated" for r in s.records(PLAN.campaign))


@pytest.mark.parametrize("shrink", [1e-9, 1e-6])
def test_planted_defect_in_delta_is_caught_by_the_direct_check(tmp_path, monkeypatch, shrink):
    """A real defect in the checked quantity: ``dobrushin`` returns values slightly too small. The
    campaign's independent direct check (both sides of D1 and D2 recomputed, compared with the
    closed form within the rigorous float error) must store ``violated`` and stop loudly."""
    real = job.dobrushin
    monkeypatch.setattr(job, "dobrushin", lambda P, **kw: real(P, **kw) * (1 - shrink))
    with ResultStore(tmp_path / "r.db") as s:
        with pytest.raises(ViolationError, match="violated"):
            job.run_campaign(s, PLAN)
        recs = list(s.records(PLAN.campaign))
    bad = [r for r in recs if r["verdict"] == "violated"]
    # both direct checks see it: D1's (both sides vs the closed form) and D2's (n = 2 is always tight)
    assert {r["theorem"] for r in bad} == {"dobrushin.factor", "dobrushin.product"}


def test_honest_delta_is_never_flagged(tmp_path):
    """The same direct check on the true values: nothing violated (the error bound is not too tight)."""
    with ResultStore(tmp_path / "r.db") as s:
        job.run_campaign(s, job.Plan(families=("dirichlet", "sparse", "hard", "causal"), sizes=(2, 3, 8), seed=5))
        assert not any(r["verdict"] == "violated" for r in s.records(
            job.Plan(families=("dirichlet", "sparse", "hard", "causal"), sizes=(2, 3, 8), seed=5).campaign))


def test_table_never_shows_zero_slack_for_a_strict_record():
    """A strict (holds) record's slack is positive; a legacy record stored as 0.0 is shown as
    unresolved, never as 0."""
    def rec(v, slack):
        return {"theorem": "dobrushin.factor", "verdict": v, "slack": slack, "extra": {},
                "provenance": {"family": "dirichlet", "n": 3}}
    rows = dreport.summarise([rec("tight", 0.0), rec("holds", 4.3e-19), rec("holds", 0.25)])
    assert rows[0][8] == 4.3e-19
    rows = dreport.summarise([rec("holds", 0.0), rec("holds", 0.25)])
    assert rows[0][8] == dreport.UNRESOLVED_SLACK and rows[0][8].startswith("> 0")


def test_cli_runs_and_rejects_bad_arguments(tmp_path, capsys):
    assert main(["dobrushin", "--db", str(tmp_path / "r.db"), "--out", str(tmp_path),
                 "--families", "hard", "--sizes", "3"]) == 0
    assert (tmp_path / "tables" / "dobrushin_random.md").exists() and (tmp_path / "tables" / "dobrushin_random.csv").exists()
    assert main(["dobrushin", "--db", ":memory:", "--families", "gaussian"]) == 2
    assert "unknown family 'gaussian'" in capsys.readouterr().err
    assert main(["theorems"]) == 0
    assert "dobrushin.factor" in capsys.readouterr().out
