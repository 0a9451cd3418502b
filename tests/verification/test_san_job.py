"""verification.san: a micro preset through the campaign (resume), the claims, the paper part and
the command line."""
import math

import numpy as np
import pytest

from theory.verdicts import Outcome, judge
from verification.report.part import MissingCampaign
from verification.san.checks import Plan
from verification.san.checks import runs as K
from verification.san.checks.decide import run_claims
from verification.san.checks.presets import PRESETS, Preset
from verification.san.paper import paper_part
from verification.san.report.tables import write_part

MICRO = Preset("micro", d_model=16, n_head=2, ctx=16, batch=2, steps=4, lr=1e-2, ref_layers=2, seeds=2,
                 depths=(2,), sweep_steps=2, sweep_lr=1e-2, n_facts=4, n_val=4, n_probe=2, rollout_texts=1)


@pytest.fixture(autouse=True)
def _micro(monkeypatch):
    monkeypatch.setitem(PRESETS, "micro", MICRO)


def test_micro_campaign_claims_and_report(store, tmp_path):
    camp = K.run_campaign(store, MICRO, 0, tmp_path / "ckpt")
    other = K.run_campaign(store, MICRO, 0, tmp_path / "ckpt", kernel="explicit")
    assert other != camp and store.count(other) == len(K.plan(MICRO))     # second path: the runs only
    recs = list(store.records(camp))
    runs = [r for r in recs if r["theorem"] == "san.claim.trainable"]
    assert len(runs) == len(K.plan(MICRO)) == 10
    assert all(r["extra"]["spectra"] and len(r["extra"]["loss_by_pos"]) == 16 for r in runs)
    for r in runs:                     # the learning curve: initialisation and every checkpoint
        e = r["extra"]
        assert sorted(map(int, e["curve"])) == [0] + e["checkpoint_steps"] and e["spectra_init"]
        assert e["curve"]["0"]["val_loss"] > e["unigram"] and 1.5 < e["bytes_per_token"]["bytes_per_token"] < 6
    bott = [r for r in recs if r["theorem"] == "san.bottleneck"]
    assert len(bott) == 8 and all(r["verdict"] == "tight" for r in bott)      # every attention-only run
    roll = [r for r in recs if r["theorem"] == "dobrushin.product"]
    assert {r["provenance"]["role"] for r in roll} == set(K.ROLES)
    assert all(r["verdict"] == "tight" for r in recs if r["theorem"] == "dobrushin.factor"
               and r["provenance"]["variant"] == "all")                       # causal: D1 is structural
    again = K.run_campaign(store, MICRO, 0, tmp_path / "ckpt")                # resume: nothing recomputed
    assert again == camp and store.count(camp) == len(recs)

    claims = run_claims(store, {"sdpa": camp, "explicit": other}, "micro", 0)
    out = list(store.records(claims))
    names = {(r["theorem"], r["instance"]) for r in out}
    assert ("san.claim.gap", "depth") in names and ("san.claim.qk_norm", "L2") in names
    assert ("san.claim.gap", "reduction") in names
    for r in out:
        assert isinstance(judge(r["verdict"]), Outcome) and "statistic" in r["extra"]
        assert set(r["extra"]["outcomes_by_path"]) == {"sdpa", "explicit"}
        if r["extra"]["n"] >= 2:
            lo, hi = r["extra"]["interval"]
            assert lo <= r["extra"]["statistic"] <= hi and r["extra"]["df"] == 1
        else:
            assert r["extra"]["interval"] is None and r["verdict"] in ("inconclusive", "not-testable")
    # four training steps learn nothing: every claim fails the training gate, named with its role
    assert all(r["verdict"] == "not-testable" and "training gate" in r["extra"]["gate"] for r in out)
    _gate_decides_which_claims_are_testable(store, camp)
    _findings_are_the_stored_records(store, claims)
    tost_row = next(r for r in out if r["instance"] == "params")
    assert tost_row["extra"]["direction"] == "equivalence" and tost_row["extra"]["margin"] > 0

    part = paper_part(store, Plan("micro", 0))
    assert part.commands == ["attnbounds san --preset micro --seed 0"]
    assert {t.command for t in part.tables} == {"attnbounds san --preset micro --seed 0"}
    assert {t.name for t in part.tables} >= {"san-runs", "san-claims", "san-spectra", "san-rollout", "san-robustness",
                                              "san-probes", "san-gate", "san-curves", "san-matched-loss"}
    assert "san-learning-curves" in {f.name for f in part.figures}
    curves = next(t for t in part.tables if t.name == "san-curves").frame
    assert set(curves["step"]) == {0, 1, 2, 4} and (curves["val_loss_min"] <= curves["val_loss_max"]).all()
    assert part.macros["SanBytesPerToken"] > 1 and "SanGapDepthPerToken" in part.macros
    gate_t = next(t for t in part.tables if t.name == "san-gate").frame
    roles = gate_t[gate_t["passed"].notna()]
    assert (roles["passed"] == 0).all() and (roles["bigram"] < roles["unigram"]).all()
    claims_t = next(t for t in part.tables if t.name == "san-claims")
    assert {"df", "p_holm", "mde", "unit", "margin", "robust"} <= set(claims_t.columns())
    probes_t = next(t for t in part.tables if t.name == "san-probes")
    assert (probes_t.frame["chance_copy"] > 0).all() and (probes_t.frame["chance_majority"] > 0).all()
    assert "SanGapDepth" in part.macros and part.macros["SanSeedPairs"] == 2 and part.macros["SanRefLayers"] == 2
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
    with pytest.raises(MissingCampaign, match="attnbounds san --preset quick --seed 0"):
        paper_part(store, Plan.for_verify(0, False))
    with pytest.raises(MissingCampaign, match="attnbounds san --preset paper --seed 3 --kernels explicit --device cuda"):
        paper_part(store, Plan("paper", 3, ("explicit",), "cuda"))


def test_needs_are_the_plans_campaigns_and_command(store):
    """``needs(store, plan)``: the runs campaign of each of the plan's numerical paths on its device,
    the plan's run keys, each filled by ``plan.command()`` (the claims once the runs are complete)."""
    from verification.san.paper import needs

    for plan in (Plan.for_verify(0, False), Plan.for_verify(2, True), Plan("micro", 1, ("explicit",), "cuda")):
        got = needs(store, plan)
        assert [n.campaign for n in got] == list(plan.runs_campaigns().values())
        assert {n.command for n in got} == {plan.command()}
        assert all(n.chunks == {r.key for r in K.plan(PRESETS[plan.preset], plan.seed)} for n in got)
    assert needs(store, Plan.for_verify(2, True))[0].command == "attnbounds san --preset paper --seed 2"
    assert needs(store, Plan("micro", 1, ("explicit",), "cuda"))[0].campaign.endswith(":s1:explicit:cuda")


def test_run_returns_its_campaigns_and_resumes(store, tmp_path):
    """``run(plan, store)`` returns a :class:`verification.plan.RunResult` naming the plan's campaigns
    (its runs, then its claims); run again, it computes nothing."""
    from verification.plan import RunResult
    from verification.san.checks import run

    plan = Plan("micro", 0, ("sdpa",), out_dir=tmp_path)
    first = run(plan, store)
    assert isinstance(first, RunResult) and first.family == "san" and first.names() == plan.campaigns()
    assert (first.computed, first.skipped) == (len(K.plan(MICRO)) + 1, 0) and first.records == store.count()
    again = run(plan, store)
    assert (again.computed, again.skipped, again.records) == (0, len(K.plan(MICRO)) + 1, 0)


def test_bad_preset_is_one_line(capsys):
    from verification.cli import main

    assert main(["san", "--preset", "huge"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown preset 'huge'" in err[0]


def _same_records(path):
    from verification.store import ResultStore

    with ResultStore(str(path)) as s:
        return sorted((r["campaign"], r["chunk"], r["theorem"], r["instance"], r["verdict"], r["value"], r["bound"],
                       repr(r["extra"])) for r in s.records())


def test_workers_store_the_same_records_as_a_serial_run(tmp_path):
    from verification.cli import main

    base = ["san", "--preset", "tiny", "--kernels", "sdpa"]
    assert main(base + ["--db", str(tmp_path / "serial.db"), "--out", str(tmp_path / "a")]) == 0
    assert main(base + ["--workers", "2", "--db", str(tmp_path / "dask.db"), "--out", str(tmp_path / "b")]) == 0
    serial, parallel = _same_records(tmp_path / "serial.db"), _same_records(tmp_path / "dask.db")
    assert len(serial) > 20 and serial == parallel


def _tests(values_by_claim, margin_claims=()):
    from verification.san.checks.decide import test

    return [test("san.claim.gap", name, vals, margin=0.02 if name in margin_claims else None)
            for name, vals in values_by_claim.items()]


def test_holm_decides_the_family_and_can_fail(monkeypatch):
    from verification import stats
    from verification.san.checks.decide import decide_family

    family = {f"null{i}": [0.01 * (i + 1), -0.01 * (i + 1), 0.005, -0.005] for i in range(9)}   # mean 0: p = 1
    family["weak"] = [0.03, 0.01, 0.025, 0.015]              # raw p ~ 0.02: passes alone, not after Holm over 10
    out = {d["instance"]: d for d in decide_family(_tests(family))}
    assert out["weak"]["p"] < 0.05 and out["weak"]["p_holm"] >= 0.05 and out["weak"]["outcome"] == "inconclusive"
    assert out["weak"]["family"] == 10 and out["weak"]["df"] == 3
    monkeypatch.setattr(stats, "holm", lambda p: list(p))    # planted bug: Holm off
    assert {d["instance"]: d for d in decide_family(_tests(family))}["weak"]["outcome"] == "supported"


def test_equivalence_claims_use_tost_and_report_a_margin():
    from verification.san.checks.decide import decide_family

    out = {d["instance"]: d for d in decide_family(_tests(
        {"params": [0.001, -0.002, 0.0015, 0.0005], "big": [0.3, 0.32, 0.29, 0.31],
         "far": [-0.3, -0.32, -0.29, -0.31]}, margin_claims=("params", "far")))}
    assert out["params"]["outcome"] == "supported" and "TOST" in out["params"]["test"]
    assert out["far"]["outcome"] == "refuted"                # a one-sided "< margin" test would call it equivalent
    assert out["big"]["outcome"] == "supported" and math.isfinite(out["big"]["mde"]) and out["big"]["mde"] > 0


def test_an_outcome_that_flips_between_paths_is_inconclusive(monkeypatch):
    from verification.san.checks import decide as CL

    def fake(runs):              # the "runs" of a path are the values themselves here
        return _tests({"depth": runs, "flops": [0.2, 0.21, 0.19, 0.2]}), dict(seeds=[0, 1, 2, 3], noise=0.01)

    monkeypatch.setattr(CL, "claim_tests", fake)
    recs = CL.claim_records({"sdpa": [0.2, 0.21, 0.19, 0.2], "explicit": [0.05, -0.04, 0.06, -0.05]}, "micro", 0)
    by = {r.instance: r for r in recs}
    assert by["depth"].extra["outcomes_by_path"] == {"sdpa": "supported", "explicit": "inconclusive"}
    assert by["depth"].verdict.value == "inconclusive" and by["depth"].extra["robust"] is False
    assert by["flops"].verdict.value == "supported" and by["flops"].extra["robust"] is True


def _section_root(tmp_path, section):
    """A paper source holding only ``section`` (the real one), for the builder's guard check."""
    from pathlib import Path

    (tmp_path / "sections").mkdir()
    (tmp_path / "main.tex").write_text(f"\\input{{sections/{section}}}\n")
    (tmp_path / "sections" / f"{section}.tex").write_text(
        (Path(__file__).resolve().parents[2] / "paper" / "sections" / f"{section}.tex").read_text())
    return tmp_path


def test_a_changed_stored_number_makes_the_san_prose_fail_naming_its_sentence(tmp_path):
    from verification.paper.latex import guard_problems
    from verification.report.part import Part
    from verification.san.paper import prose_guards

    root = _section_root(tmp_path, "san")
    ok = Part("san")
    prose_guards(ok, max_params=24_896, ref_layers=2, deepest=8, d1_tight=1350, d1_layers=1350)
    assert guard_problems(root, ok.guards) == []              # the store as built: every sentence holds
    for change, sentence in (
            (dict(max_params=7_000_000), "The scale is tiny"),                  # a model above the paper's 6M
            (dict(ref_layers=1), "at least two"),
            (dict(deepest=64), "Our stacks are shallower than the paper's 48 layers"),
            (dict(d1_tight=1349), "Theorem~D1 is tight on every causal layer")):
        bad = Part("san")
        prose_guards(bad, **{**dict(max_params=24_896, ref_layers=2, deepest=8, d1_tight=1350, d1_layers=1350),
                             **change})
        problems = guard_problems(root, bad.guards)
        assert len(problems) == 1 and f'contradicts the sentence "{sentence}"' in problems[0], problems


def test_the_readme_san_line_is_guarded_too(tmp_path):
    from pathlib import Path

    from verification.paper.build import findings_md
    from verification.report.part import Guard

    tpl = Path(__file__).resolve().parents[2] / "paper" / "findings.md.j2"
    line = next(l for l in tpl.read_text().splitlines() if "Attention-only transformers" in l)
    assert 'guard("SanTinyScale", "tiny")' in line
    one = tmp_path / "san_line.md.j2"
    one.write_text(line + "\n")
    with pytest.raises(ValueError, match='contradicts the sentence "tiny"'):
        findings_md({}, one, {"SanTinyScale": Guard("SanTinyScale", False, "largest model 7,000,000")})


def test_run_summaries_come_in_plan_order_whatever_the_store_order():
    """A pool of workers stores the runs in the order they finish: the tables and the claims read
    them in plan order, so the same runs give the same bytes on every machine."""
    import random

    from verification.san.checks.measures import summaries

    def rec(key, role, seed, layers, qk):
        return {"extra": dict(key=key, role=role, n_layer=layers, qk_norm=qk), "provenance": {"seed": seed},
                "verdict": "holds"}

    planned = [rec("std-L2-s0", "std", 0, 2, True), rec("san-depth-L2-s0", "san-depth", 0, 2, True),
               rec("san-params-L5-s0", "san-params", 0, 5, True), rec("std-L2-s1", "std", 1, 2, True),
               rec("san-depth-L2-s1", "san-depth", 1, 2, True), rec("sweep-a-L2-s0", "sweep", 0, 2, False),
               rec("sweep-a-L2-qk-s0", "sweep", 0, 2, True), rec("sweep-a-L12-s0", "sweep", 0, 12, False)]

    class Store:
        def __init__(self, records):
            self.rs = records

        def records(self, campaign, theorem=None):
            return list(self.rs)

    want = [r["extra"]["key"] for r in planned]
    for k in range(5):
        shuffled = planned[:]
        random.Random(k).shuffle(shuffled)
        assert [r["key"] for r in summaries(Store(shuffled), "c")] == want


def test_a_planted_all_identical_seeds_input_gives_no_decided_outcome():
    """Every claim's per-seed values identical (a tie, not evidence): nothing is decided, each test
    says it is not applicable, and its p stays 1 inside the planned family (which keeps its size)."""
    from verification.san.checks.decide import decide_family

    family = {"depth": [0.3] * 5, "flops": [0.1 + 0.2] * 5, "params": [0.0] * 5, "real": [0.2, 0.21, 0.19, 0.2, 0.22]}
    out = {d["instance"]: d for d in decide_family(_tests(family, margin_claims=("params",)))}
    for name in ("depth", "flops", "params"):
        assert out[name]["outcome"] == "inconclusive" and not out[name]["applicable"] and out[name]["p"] == 1.0
    assert out["real"]["outcome"] == "supported" and out["real"]["family"] == 4
    lo, hi = out["real"]["interval"]
    alo, ahi = out["real"]["interval_adjusted"]
    assert alo < lo < hi < ahi and out["real"]["level_adjusted"] == 1 - 0.05 / 4


def test_leave_one_pair_out_reports_a_fragile_outcome():
    """One seed pair carries the effect: the claim is decided on all pairs, and most drops lose it
    (fragile); a claim every pair supports keeps its outcome in every drop."""
    from verification.san.checks import decide as CL

    tests = _tests({"carried": [0.02, 0.3, 0.2, 0.25, 0.04], "steady": [0.2, 0.21, 0.19, 0.2, 0.22]})
    out = CL.decide_family(tests)
    assert [d["outcome"] for d in out] == ["supported", "supported"]      # decided on all five pairs
    drops = CL.leave_one_out(tests, 5)
    assert len(drops) == 5 and all(o[1] == "supported" for o in drops)
    assert sum(o[0] == "supported" for o in drops) * 2 <= 5                # most drops lose it: fragile
    assert CL.leave_one_out(tests[:1], 2) == []


def _gate_decides_which_claims_are_testable(store, camp):
    """The gate on the micro runs with planted losses: every run below the bigram model's validation
    loss makes the loss claims testable; one san-params run above it makes exactly the claims that
    compare san-params not testable; the probes stay untestable (the reference is at chance: the
    positive control fails); a run stored without the bigram model's loss has not shown that it
    learned; a preset that trains only std and san-depth leaves the claims about the other roles not
    testable, each naming the role, and decides the spectra over the roles it trained."""
    from verification.san.checks.decide import claim_tests, decide_family
    from verification.san.checks.gates import learned
    from verification.san.checks.measures import summaries

    runs = summaries(store, camp)
    assert all(r["bigram_val"] < r["unigram"] for r in runs)
    good = [dict(r, val_loss=r["bigram_val"] - 0.1 - 0.01 * i, diverged=False) for i, r in enumerate(runs)]
    assert all(learned(r) for r in good)
    assert not learned(dict(good[0], val_loss=good[0]["bigram_val"]))          # strictly below
    assert not learned({k: v for k, v in good[0].items() if k != "bigram_val"})
    tests = {(t["theorem"], t["instance"]): t for t in claim_tests(good)[0]}
    assert tests[("san.claim.gap", "depth")]["gate"] is None and tests[("san.claim.gap", "params")]["gate"] is None
    assert "positive control failed" in tests[("san.claim.probes", "retrieval-params")]["gate"]
    bad = [dict(r, val_loss=r["bigram_val"] + 0.01) if r["role"] == "san-params" and r["seed"] == 0 else r
           for r in good]
    out = {(d["theorem"], d["instance"]): d for d in decide_family(claim_tests(bad)[0])}
    for key in (("san.claim.gap", "params"), ("san.claim.gap", "reduction"), ("san.claim.spectra", "routing-settles")):
        assert out[key]["outcome"] == "not-testable" and "san-params: 1 of" in out[key]["gate"], key
        assert "bigram model's validation loss" in out[key]["gate"], out[key]["gate"]
    for key in (("san.claim.gap", "depth"), ("san.claim.gap", "flops"), ("san.claim.spectra", "rank-into-WO")):
        assert out[key]["gate"] is None and out[key]["outcome"] != "not-testable", key
    two = [r for r in good if r["role"] in ("std", "san-depth", "sweep")]
    out = {(d["theorem"], d["instance"]): d for d in decide_family(claim_tests(two)[0])}
    for key in (("san.claim.gap", "params"), ("san.claim.gap", "flops"), ("san.claim.probes", "recall-params")):
        assert out[key]["outcome"] == "not-testable" and "not trained by this preset" in out[key]["gate"], key
        assert out[key]["n"] == 0
    for key in (("san.claim.gap", "depth"), ("san.claim.spectra", "routing-settles"), ("san.claim.spectra", "rank-into-WO")):
        assert out[key]["gate"] is None and out[key]["n"] >= 2, key


def _spectral_run(routing: list, content: list) -> dict:
    """A run summary whose threshold ranks follow ``routing`` (W_Q, W_K) and ``content`` (W_V, W_O)
    at initialisation and at checkpoints 25, 50, 75, 100."""
    def layer(r, c):
        return {m: {"threshold": v, "entropy": 1.0} for m, v in
                (("W_Q", r), ("W_K", r), ("QK", r), ("W_V", c), ("W_O", c), ("OV", c))}
    return dict(spectra_init=[layer(routing[0], content[0])],
                spectra={str(s): [layer(r, c)] for s, r, c in zip((25, 50, 75, 100), routing[1:], content[1:])})


def test_routing_before_content_is_a_timing_difference_that_can_fail():
    """Routing reaches half its final rank at a quarter of training, content at three quarters: the
    half-growth times differ by +0.5; swapped, by -0.5 (the claim's direction fails); both ranks
    rising is no evidence either way (equal timing: 0)."""
    from verification.san.checks.measures import growth_time

    early, late = [0, 4, 6, 7, 8], [0, 1, 2, 4, 8]
    run = _spectral_run(early, late)
    assert growth_time(run, ("W_Q", "W_K")) == pytest.approx(0.25)
    assert growth_time(run, ("W_V", "W_O")) == pytest.approx(0.75)
    swapped = _spectral_run(late, early)
    assert growth_time(swapped, ("W_V", "W_O")) - growth_time(swapped, ("W_Q", "W_K")) == pytest.approx(-0.5)
    same = _spectral_run(early, early)
    assert growth_time(same, ("W_V", "W_O")) - growth_time(same, ("W_Q", "W_K")) == 0
    assert growth_time(_spectral_run([3, 3, 3, 3, 3], late), ("W_Q",)) == 0.0        # no growth: settled


def test_steps_at_matched_loss_interpolate_between_checkpoints():
    from verification.san.report.tables import matched_loss_table, steps_to

    curve = {"0": {"val_loss": 5.0}, "10": {"val_loss": 3.0}, "20": {"val_loss": 2.0}}
    assert steps_to(curve, 2.5) == pytest.approx(15.0) and steps_to(curve, 4.0) == pytest.approx(5.0)
    assert math.isnan(steps_to(curve, 1.0))
    runs = [dict(role=role, seed=s, key=f"{role}{s}", val_loss=v, diverged=False, unigram=3.2, steps_done=20,
                 curve={"0": {"val_loss": 5.0}, "20": {"val_loss": v}})
            for role, v in (("std", 2.0), ("san-depth", 2.5), ("san-flops", 2.4), ("san-params", 3.4)) for s in (0, 1)]
    t = matched_loss_table(runs, gate=3.0)
    gate = t[t["level"] == "training gate"].set_index("role")
    assert gate.loc["std", "reached"] == "2/2" and gate.loc["san-params", "reached"] == "0/2"
    assert gate.loc["std", "steps_mean"] == pytest.approx(20 * 2.0 / 3.0)
    common = t[t["level"] != "training gate"]
    assert (common["loss"] == 3.4).all() and (common["reached"] == "2/2").all()


def test_bytes_per_token_is_measured_with_the_stated_tokenizer():
    from numerics.san.data import bytes_per_token

    r = bytes_per_token(b"hello world\nhello")
    assert r["tokens"] == 3 and r["bytes"] == 16 and r["bytes_per_token"] == pytest.approx(16 / 3)
    assert "minilm" in r["tokenizer"]
    with pytest.raises(ValueError, match="no tokens"):
        bytes_per_token(b"\n\n")


def test_the_gate_is_the_bigram_model_on_the_models_own_validation_windows():
    """bigram_validation scores add-k bigram counts of the training bytes on exactly the windows the
    models are evaluated on, at the k that favours it: recomputed here by hand; it lies below the
    unigram entropy and changes when the windows change (so it is not a constant)."""
    import numpy as np

    from numerics.san import Data
    from verification.san.checks.runs import BIGRAM_SMOOTHING, bigram_validation, unigram_entropy

    data = Data(ctx=16, n_facts=8)
    got = bigram_validation(data, 32)
    assert got["k"] in BIGRAM_SMOOTHING and got["loss"] < unigram_entropy(data)
    x = np.asarray(data.train, dtype=np.int64)
    counts = np.zeros((256, 256))
    np.add.at(counts, (x[:-1], x[1:]), 1)
    rows = data.val_rows(32)
    prev, nxt = rows[:, :-1].reshape(-1), rows[:, 1:].reshape(-1)
    by_k = {k: float(-np.log((counts[prev, nxt] + k) / (counts[prev].sum(1) + 256 * k)).mean())
            for k in BIGRAM_SMOOTHING}
    assert got["loss"] == min(by_k.values()) and by_k[got["k"]] == got["loss"]
    assert bigram_validation(data, 8)["loss"] != got["loss"]


def _findings_are_the_stored_records(store, claims_campaign):
    """``findings(store, plan)``: one typed claim per stored claim record, its outcome, statistic,
    interval and gate text those of the record; its gates typed (four steps learn nothing: every
    claim is gated by the training gate, the probes by their positive control too)."""
    from verification.san.checks.gates import GateKind, kinds
    from verification.san.findings import findings

    f = findings(store, Plan("micro", 0))
    recs = {(r["theorem"], r["instance"]): r for r in store.records(claims_campaign)}
    assert len(f.claims) == len(recs) and f.paths == ("sdpa", "explicit") and len(f.runs) == len(K.plan(MICRO))
    for c in f.claims:
        r = recs[(c.claim.theorem, c.claim.instance)]
        assert c.outcome == r["verdict"] == "not-testable" and c.statistic == r["extra"]["statistic"]
        assert c.decision.interval == (tuple(r["extra"]["interval"]) if r["extra"]["interval"] else None)
        assert c.gate == r["extra"]["gate"] and GateKind.TRAINING in kinds(c.gates), c.claim.key
        assert (GateKind.CONTROL in kinds(c.gates)) == (c.claim.kind == "probes")
        assert c.pairs_needed is None                       # gated: nothing to size
    assert [g.passed for g in f.role_gates] == [0] * len(f.role_gates)
    assert {c.probe for c in f.controls} == {"retrieval", "recall"}
    assert f.rollout and all(b.verdict == "tight" for b in f.bottleneck) and len(f.bottleneck) == 8


def test_the_claims_are_objects_and_a_gate_is_typed():
    """Every claim the checks decide is in the catalogue (its test, its roles, its words); a gate
    says its kind, never left to be found in its text."""
    from verification.san.checks.claims import catalogue
    from verification.san.checks.gates import Gate, GateKind, claim_gates, gate_text, kinds

    by = {c.key: c for c in catalogue((2, 8))}
    assert by[("gap", "params")].direction == "equivalence" and by[("qk_norm", "L8")].depth == 8
    assert by[("gap", "depth")].reading("supported").startswith("the standard model is ahead")
    assert by[("gap", "flops-between")].reading("refuted") == "refuted"
    gates = {"std": dict(passed=3, runs=3), "san-depth": dict(passed=2, runs=3, worst=2.5, bigram_val=2.2)}
    got = claim_gates(by[("gap", "reduction")], gates, {}, [])
    assert [g.kind for g in got] == [GateKind.TRAINING, GateKind.UNTRAINED]      # san-depth failed, san-params untrained
    assert kinds(got) == [GateKind.UNTRAINED, GateKind.TRAINING]
    assert gate_text(got).startswith("san-depth: 1 of 3 runs failed the training gate")
    assert claim_gates(by[("spectra", "routing-settles")], {"std": dict(passed=3, runs=3)}, {}, []) == ()
    assert gate_text((Gate(GateKind.CONTROL, "why", "explicit"),)) == "explicit path: why" and gate_text(()) is None
