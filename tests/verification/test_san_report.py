"""The SAN reproduction report (issue 63, items 9-11) on planted run summaries: the micro preset is
trained once (both numerical paths, four steps: its rollout, bottleneck and D1 records are real), then
its run summaries are planted with losses and probe answers that make claims testable, so that each
item can be shown to hold and to fail:

- item 10: per claim, each numerical path's statistic, p and own outcome, which paths decided it and
  how far apart they lie; the rule that every path must agree stays; leave-one-seed-pair-out only
  with more than three seed pairs, and the report says so where it is skipped;
- item 11: the no-spread count counts no-spread claims only (not the gated ones), the figure captions
  name the roles plotted, the claims table's interval is called what it is (Bonferroni), and the
  scalar-bottleneck identity is an identity check, not a claim;
- item 9 (report side): the power analysis beside the preset's seed pairs, the probe ceiling gate, the
  preset's settings and its measured wall time (or "not measured").
"""
import dataclasses
import math
from pathlib import Path

import pytest

from verification.san.checks import Plan
from verification.san.checks import decide as D
from verification.san.checks import runs as K
from verification.san.checks.gates import GateKind, kinds, probe_ceiling
from verification.san.checks.measures import summaries
from verification.san.checks.presets import PRESETS, Preset

MICRO = Preset("micro", d_model=16, n_head=2, ctx=16, batch=2, steps=4, lr=1e-2, ref_layers=2, seeds=2,
               depths=(2,), sweep_steps=2, sweep_lr=1e-2, n_facts=4, n_val=4, n_probe=2, rollout_texts=1)
ROOT = Path(__file__).resolve().parents[2]
GAP = {"std": 0.0, "san-depth": 0.25, "san-flops": 0.15, "san-params": 0.01}


@pytest.fixture(scope="module")
def micro(tmp_path_factory):
    """The micro preset trained along both paths into one store: (store, {path: runs campaign})."""
    from verification.store import ResultStore

    tmp = tmp_path_factory.mktemp("san-report")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(PRESETS, "micro", MICRO)
        store = ResultStore(tmp / "results.db")
        camps = {k: K.run_campaign(store, MICRO, 0, tmp / "ckpt", kernel=k) for k in ("sdpa", "explicit")}
        yield store, camps
        store.close()


@pytest.fixture(autouse=True)
def _micro(monkeypatch):
    monkeypatch.setitem(PRESETS, "micro", MICRO)


def planted(runs, seeds=4, path="sdpa"):
    """The stored runs of seed 0 copied to ``seeds`` seed pairs, each below the bigram model (the gap of
    each role planted, :data:`GAP`, with a little seed-to-seed spread), the reference above chance
    on both probes; recall at ceiling for std and san-depth (so recall-depth is not testable), the
    retrieval gap at matched depth the same on every seed (no spread: one claim), and on the
    explicit path the FLOPs gap noisy (so only the fused path decides it)."""
    base = [r for r in runs if r["seed"] == 0 and r["role"] != "sweep"]
    sweep = [dict(r, val_loss=r["bigram_val"] - 0.2, diverged=False) for r in runs if r["role"] == "sweep"]
    out = []
    for s in range(seeds):
        for r in base:
            role, jitter = r["role"], 0.004 * ((s * s * 3 + s * len(r["role"])) % 5)
            gap = GAP[role] if not (path == "explicit" and role == "san-flops") else 0.05 + 0.15 * (-1) ** s
            n = 96
            recall = 1.0 if role in ("std", "san-depth") else (90 - s) / n
            retrieval = {"std": 0.80, "san-depth": 0.90}.get(role, (80 + 2 * s + len(role)) / n)
            out.append(dict(r, seed=s, key=f"{r['key']}-p{s}", diverged=False,
                            val_loss=r["bigram_val"] - 0.5 + gap + jitter,
                            recall_acc=recall, recall_n=n, recall_chance_copy=0.1, recall_chance_majority=0.25,
                            retrieval_acc=retrieval, retrieval_n=n, retrieval_chance_copy=0.3,
                            retrieval_chance_majority=0.2))
    return out + sweep


def build(micro, monkeypatch, seeds=4, settings=None):
    """Decide the claims of the planted runs (both paths) into the store, then the findings and the Part."""
    from verification.san.findings import findings
    from verification.san.report.part import render

    store, camps = micro
    paths = {k: planted(summaries(store, c), seeds, k) for k, c in camps.items()}
    monkeypatch.setattr(D, "path_runs", lambda s, c: {k: paths[k] for k in c if k in paths})
    if settings is not None:
        monkeypatch.setitem(PRESETS, "micro", settings)
    D.run_claims(store, camps, "micro", 0)
    f = findings(store, Plan("micro", 0))
    return f, render(f)


def table(part, name):
    return next(t for t in part.tables if t.name == name)


def claim(f, kind, instance):
    return next(c for c in f.claims if (c.claim.kind, c.claim.instance) == (kind, instance))


def test_each_path_its_statistic_which_path_decided_and_how_far_apart(micro, monkeypatch):
    """Item 10: the planted FLOPs gap is decided by the fused path only (the explicit one is noisy):
    the rule reports it inconclusive, and the report's paths table says which path decided it and by
    how much the paths' means differ; the depth gap is decided by both paths and reported."""
    f, part = build(micro, monkeypatch)
    assert f.paths == ("sdpa", "explicit")
    depth, flops = claim(f, "gap", "depth"), claim(f, "gap", "flops")
    assert depth.outcome == "supported" and depth.decided_by == ("sdpa", "explicit")
    assert [s.path for s in depth.by_path] == ["sdpa", "explicit"] and all(s.decided for s in depth.by_path)
    assert flops.decided_by == ("sdpa",) and flops.outcome == "inconclusive"          # the rule stays
    fused, explicit = flops.by_path
    assert fused.outcome == "supported" and explicit.outcome == "inconclusive" and fused.p_holm < 0.05 <= explicit.p_holm
    assert flops.path_difference == pytest.approx(abs(fused.statistic - explicit.statistic))
    assert fused.statistic == pytest.approx(0.15, abs=0.02) and explicit.interval_adjusted[0] < 0
    rows = {r[0]: r for r in table(part, "san-report-paths").rows()}
    assert table(part, "san-report-paths").columns() == ["claim", "fused path", "explicit path", "decided by",
                                                         "difference", "reported"]
    assert rows["gap (flops)"][3] == "fused path only" and rows["gap (flops)"][5] == "inconclusive"
    assert rows["gap (flops)"][1].endswith("supported") and rows["gap (flops)"][2].endswith("inconclusive")
    assert rows["gap (depth)"][3] == "both paths" and rows["probes (recall-depth)"][3] == "not testable"
    both = sum(len(c.decided_by) == 2 for c in f.claims if not c.gates)
    assert both >= 1 and part.macros["SanPathsText"].startswith(f"{both} claim"), part.macros["SanPathsText"]
    assert "largest difference between the paths' means of a tested claim is 0.1 nats/byte (gap, flops)" in \
        part.macros["SanPathsText"]
    assert "1 claim by one path alone (reported inconclusive by the rule)" in part.macros["SanPathsText"]
    data = table(part, "san-robustness").frame.set_index("instance")
    assert data.loc["flops", "decided_by"] == "sdpa" and data.loc["flops", "path_difference"] > 0.05
    assert {"p_holm_sdpa", "p_holm_explicit", "low_adjusted_explicit"} <= set(data.columns)


def test_leave_one_pair_out_only_with_more_than_three_pairs(micro, monkeypatch):
    """Item 10: with four seed pairs a decided claim carries its drops; with three, none is run and
    the report says why (the seed pairs, and what leave-one-out needs)."""
    tests = D.claim_tests(planted(summaries(micro[0], micro[1]["sdpa"]), 3))[0]
    assert D.leave_one_out(tests, 3) == [] and len(D.leave_one_out(tests, 4)) == 4
    f, part = build(micro, monkeypatch, seeds=4)
    assert f.leave_one_out and claim(f, "gap", "depth").drops == 4
    assert "fragile" in part.macros["SanLeaveOneOutText"]
    f, part = build(micro, monkeypatch, seeds=3)
    assert not f.leave_one_out and all(c.drops is None for c in f.claims) and claim(f, "gap", "depth").decided
    text = part.macros["SanLeaveOneOutText"]
    assert text.startswith("leave-one-seed-pair-out robustness is not run") and "2 seed pairs here" in text
    assert "leave-one-seed-pair-out not run" in table(part, "san-claims").caption


def test_the_no_spread_count_counts_no_spread_claims_only(micro, monkeypatch):
    """Item 11: the retrieval gap at matched depth is the same on every seed pair (no spread; so are
    the claims read from the copied spectra and positions); the gated claim without spread (recall
    at matched depth, at ceiling) is counted by its gate, not as no spread."""
    f, part = build(micro, monkeypatch)
    flat = [c.claim.key for c in f.claims if c.no_spread]
    assert ("probes", "retrieval-depth") in flat and ("probes", "recall-depth") not in flat
    assert ("gap", "depth") not in flat and not claim(f, "gap", "depth").no_variation
    assert claim(f, "probes", "recall-depth").no_variation and claim(f, "probes", "recall-depth").gates
    assert sum(not c.applicable for c in f.claims) > len(flat)          # what the old count counted
    assert part.macros["SanNotApplicableClaims"] == len(flat)
    assert part.macros["SanNoSpreadText"] == f"{len(flat)} claims"
    tex = (ROOT / "paper" / "sections" / "san.tex").read_text()
    assert "\\SanNoSpreadText{}" in tex and "\\SanNotApplicableClaims{} claims" not in tex


def test_figure_captions_name_the_roles_plotted(micro, monkeypatch):
    """Item 11: the loss-by-position and the gap figures name the roles this preset trains, from the
    data: all four with the micro preset, the reference and its depth-matched partner without the others."""
    from verification.san.report.part import render

    f, part = build(micro, monkeypatch)
    assert part.macros["SanPlottedRoles"] == "standard, and the attention-only models matched for depth, FLOPs and parameters"
    assert part.macros["SanGapsPlotted"] == "depth, FLOPs and parameters"
    two = dataclasses.replace(f, runs=tuple(r for r in f.runs if r["role"] in ("std", "san-depth", "sweep")),
                              claims=tuple(dataclasses.replace(c, decision=dataclasses.replace(c.decision, statistic=math.nan))
                                           if c.claim.instance in ("flops", "params") else c for c in f.claims))
    part2 = render(two)
    assert part2.macros["SanPlottedRoles"] == "standard, and the attention-only model matched for depth"
    assert part2.macros["SanGapsPlotted"] == "depth"
    tex = (ROOT / "paper" / "sections" / "san.tex").read_text()
    assert "(\\SanPlottedRoles{})" in tex and "\\SanGapsPlotted{}" in tex
    assert "matched for depth, FLOPs and parameters), mean over" not in tex


def test_the_claims_table_names_its_interval_bonferroni(micro, monkeypatch):
    """Item 11: the interval of the report's claims table is Bonferroni-adjusted at 1 - alpha/m (its
    level printed from the data), the outcomes Holm's; never "Holm-adjusted (Bonferroni)"."""
    f, part = build(micro, monkeypatch)
    m = claim(f, "gap", "depth").family
    cap = table(part, "san-report-claims").caption
    assert f"Bonferroni-adjusted {100 * (1 - 0.05 / m):.2f}% interval" in cap and "Holm's step-down" in cap
    assert part.macros["SanAdjustedLevel"] == f"{100 * (1 - 0.05 / m):.2f}"
    for t in part.tables:
        assert "Holm-adjusted (Bonferroni)" not in t.caption, t.name
    src = "".join(p.read_text() for p in (ROOT / "verification" / "san").rglob("*.py"))
    assert "Holm-adjusted (Bonferroni)" not in src + (ROOT / "paper" / "sections" / "san.tex").read_text()


def test_the_scalar_bottleneck_is_an_identity_check_not_a_claim(micro, monkeypatch):
    """Item 11: the proved lemma's exact evaluation on every trained attention-only model is a row of
    the identity checks (with D1's equality on causal layers), never a claim; a check with an
    undecided instance does not read as holding."""
    from verification.san.findings import BottleneckRun, identity_checks
    from verification.san.report.claims import check_result

    f, part = build(micro, monkeypatch)
    assert "san.bottleneck" not in {c.claim.theorem for c in f.claims}
    rows = {r[1]: r for r in table(part, "san-checks").rows()}
    assert set(rows) == {"san.bottleneck", "dobrushin.factor"}
    assert rows["san.bottleneck"][2].startswith("holds exactly on 8 of 8")
    assert "identity check" in table(part, "san-checks").caption.lower()
    assert part.macros["SanBottleneckCheckWords"] == "holds exactly on"
    runs = (BottleneckRun("a", "tight", 1e-16, True, 4, 0.1, 1.0), BottleneckRun("b", "undecided", 1e-16, None, 0, 0.1, 1.0))
    check = identity_checks(runs, ("tight",))[0]
    assert not check.holds and check_result(check).startswith("exact on 1 of 2, the others undecided")
    tex = (ROOT / "paper" / "sections" / "san.tex").read_text()
    assert "certified exactly on" not in tex and "identity check of the implementation" in tex
    assert "\\input{tables/san-checks}" in tex


def test_a_probe_at_ceiling_for_both_roles_is_not_testable(micro, monkeypatch):
    """Item 9: recall at ceiling for the reference and its depth-matched partner gates recall-depth
    (not testable, the gate says ceiling); recall-params (the parameter-matched model misses some
    answers) stays testable; the gate table and the prose say which probe is at ceiling."""
    f, part = build(micro, monkeypatch)
    rd, rp = claim(f, "probes", "recall-depth"), claim(f, "probes", "recall-params")
    assert rd.outcome == "not-testable" and kinds(rd.gates) == [GateKind.CEILING] and "ceiling" in rd.gate
    assert not rp.gates and rp.outcome != "not-testable"
    ceil = {(c.probe, c.roles[1]): c.at_ceiling for c in f.ceilings}
    assert ceil == {("recall", "san-depth"): True, ("recall", "san-params"): False,
                    ("retrieval", "san-depth"): False, ("retrieval", "san-params"): False}
    controls = list(table(part, "san-gate").frame["control"])
    assert "recall: at ceiling for both roles (not testable)" in controls and "recall: not at ceiling" in controls
    assert part.macros["SanCeilingText"].startswith("At ceiling for both roles") and "recall" in part.macros["SanCeilingText"]
    run = {"recall_acc": 1.0, "recall_n": 96}
    by = {(r, s): run for r in ("std", "san-depth") for s in (0, 1)}
    assert probe_ceiling("recall", ("std", "san-depth"), by, [0, 1]) is not None
    by[("san-depth", 1)] = dict(run, recall_acc=95 / 96)                 # one answer missed: not at ceiling
    assert probe_ceiling("recall", ("std", "san-depth"), by, [0, 1]) is None


def test_the_power_analysis_sits_beside_the_presets_seed_pairs(micro, monkeypatch):
    """Item 9: the power table gives per claim the seed pairs it was tested on and what a test needs,
    its caption the seed pairs the preset has; a prose line compares the two."""
    f, part = build(micro, monkeypatch)
    power = table(part, "san-power")
    assert "seed pairs here" in power.columns() and f"the micro preset has {MICRO.seeds} seed pairs" in power.caption
    sized = [c for c in f.claims if c.pairs_needed is not None]
    assert sized and part.macros["SanPowerText"].startswith(f"Of the {len(sized)} claim")
    assert f"the {MICRO.seeds} seed pairs this preset has" in part.macros["SanPowerText"]
    rows = {r[0]: r for r in power.rows()}
    assert rows["gap (depth)"][4] == 4 and rows["gap (depth)"][5].endswith("seed pairs")


def test_the_presets_settings_and_measured_wall_time_are_stated(micro, monkeypatch):
    """Item 9: the report states the preset's settings (from verification.san.checks.presets) and its
    measured wall time where the preset states one (the ``measured`` hook), else that it is not measured."""
    f, part = build(micro, monkeypatch)
    text = part.macros["SanPresetText"]
    for want in (f"width {MICRO.d_model}", f"{MICRO.steps} steps", f"context {MICRO.ctx} bytes", "2 seed pairs",
                 "standard, SAN, depth, SAN, FLOPs and SAN, params", "depth sweep at 2 layers"):
        assert want in text, want
    assert "not measured" in text and part.macros["SanWallTime"] == "not measured"
    from verification.san.checks import presets as P

    monkeypatch.setitem(P.MEASURED, "micro", P.Measured(P.settings_digest(P.PRESETS["micro"]), 97, 180, "2 cores", "attnbounds san --preset micro", "abc1234",
                                                        "2026-12-07"))
    f, part = build(micro, monkeypatch)
    assert f.settings.measured.startswith("97 minutes of wall time (180 CPU minutes) on 2 cores")
    assert part.macros["SanPresetText"].endswith(f"measured wall time: {f.settings.measured}.")
    monkeypatch.setitem(P.MEASURED, "micro", dataclasses.replace(P.MEASURED["micro"], settings="00000000"))
    f, part = build(micro, monkeypatch)          # measured at other settings: stale, so not measured
    assert f.settings.measured is None and part.macros["SanWallTime"] == "not measured"
    assert "\\SanPresetText{}" in (ROOT / "paper" / "sections" / "san.tex").read_text()
