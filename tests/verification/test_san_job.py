"""verification.san: a micro preset through the campaign (resume), the claims, the paper part and
the command line."""
import pytest

from theory.verdicts import Outcome, judge
from verification.report.part import MissingCampaign
from verification.san.checks import runs as K
from verification.san.checks.claims import run_claims
from verification.san.checks.presets import PRESETS, Preset
from verification.san.paper import paper_part
from verification.san.report import write_part

MICRO = Preset("micro", d_model=16, n_head=2, ctx=16, batch=2, steps=4, lr=1e-2, ref_layers=1, seeds=2,
                 depths=(2,), sweep_steps=2, sweep_lr=1e-2, n_facts=4, n_val=4, n_probe=2, rollout_texts=1)


@pytest.fixture(autouse=True)
def _micro(monkeypatch):
    monkeypatch.setitem(PRESETS, "micro", MICRO)


def test_micro_campaign_claims_and_report(store, tmp_path):
    camp = K.run_campaign(store, MICRO, 0, tmp_path / "ckpt")
    recs = list(store.records(camp))
    runs = [r for r in recs if r["theorem"] == "san.claim.trainable"]
    assert len(runs) == len(K.plan(MICRO)) == 10
    assert all(r["extra"]["spectra"] and len(r["extra"]["loss_by_pos"]) == 16 for r in runs)
    bott = [r for r in recs if r["theorem"] == "san.bottleneck"]
    assert len(bott) == 8 and all(r["verdict"] == "tight" for r in bott)      # every attention-only run
    roll = [r for r in recs if r["theorem"] == "dobrushin.product"]
    assert {r["provenance"]["role"] for r in roll} == set(K.ROLES)
    assert all(r["verdict"] == "tight" for r in recs if r["theorem"] == "dobrushin.factor"
               and r["provenance"]["variant"] == "all")                       # causal: D1 is structural
    again = K.run_campaign(store, MICRO, 0, tmp_path / "ckpt")                # resume: nothing recomputed
    assert again == camp and store.count(camp) == len(recs)

    claims = run_claims(store, camp, "micro", 0)
    out = list(store.records(claims))
    names = {(r["theorem"], r["instance"]) for r in out}
    assert ("san.claim.gap", "depth") in names and ("san.claim.qk_norm", "L2") in names
    for r in out:
        assert isinstance(judge(r["verdict"]), Outcome) and "statistic" in r["extra"]
        lo, hi = r["extra"]["interval"]
        assert lo <= r["extra"]["statistic"] <= hi

    part = paper_part(store, seed=0, preset="micro")
    assert {t.name for t in part.tables} >= {"san-runs", "san-claims", "san-spectra", "san-rollout"}
    assert "SanGapDepth" in part.macros and part.macros["SanSeedPairs"] == 2
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for f in part.figures:                                   # every figure draws from the stored records
        fig, ax = plt.subplots()
        f.draw(ax)
        plt.close(fig)
    part.figures = [f for f in part.figures if f.name == "san-gaps"]    # saving PDFs is slow: one suffices
    paths = write_part(part, tmp_path / "out")
    assert (tmp_path / "out" / "tables" / "san-claims.md").read_text().count("Provenance") == 1
    assert any(p.name == "san-gaps.pdf" for p in paths)


def test_paper_part_names_the_missing_campaign(store):
    with pytest.raises(MissingCampaign, match="attnbounds san --preset quick"):
        paper_part(store, seed=0)


def test_bad_preset_is_one_line(capsys):
    from verification.cli import main

    assert main(["san", "--preset", "huge"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown preset 'huge'" in err[0]
