"""The SAN family's results as one :class:`verification.report.part.Part`: the tables, figures and
macros of one preset's campaigns (one per numerical path) and their claims, read from the store only
(the builders: :mod:`verification.san.report.tables`). The paper selects it
(:func:`verification.san.paper.paper_part`); ``attnbounds san`` writes it
(:func:`verification.san.report.report`). Every word the prose uses about an outcome ("the standard
model is ahead", "undecided") is a macro written here from the stored outcome, never typed in the
section.
"""
from __future__ import annotations

import math
from typing import Any, Optional

from theory.verdicts import ALPHA
from verification.paper.notation.san import C_L, CHAIN_RATIO, DELTA_R
from verification.report.part import Part, Table
from verification.san.checks.claims import MARGIN
from verification.san.checks.gates import GateKind, kinds
from verification.san.checks.presets import PRESETS
from verification.san.findings import ClaimFinding, Findings, findings
from verification.san.report.claims import (adjusted_level, checks_report, paths_report, per_token, power_report,
                                            report_claims)
from verification.san.report.tables import (PATH_NAMES, ROLE_LEGEND, ROLE_ORDER, bottleneck_table, claims_table,
                                            curves_table, figures, gate_table, matched_loss_table, needs,
                                            paths_found, probes_table, robustness_table, rollout_table, runs_table,
                                            spectra_table, trainability_table)

GATE_READING = {GateKind.UNTRAINED: "this preset does not train the models it compares (the paper preset does)",
                GateKind.TRAINING: "a model compared did not beat the bigram model on validation",
                GateKind.CONTROL: "the probe's reference is not above chance (its positive control fails)",
                GateKind.CEILING: "both models answer every probe correctly on every seed (the probe is at ceiling)"}


def reading(c: ClaimFinding, paths: bool = True) -> str:
    """The words for the outcome of claim ``c`` (:meth:`verification.san.checks.claims.Claim.reading`);
    a not-testable one says why, from its gates: a role this preset does not train, a model that did
    not beat the bigram model, or a probe whose reference is not above chance; with ``paths``, an
    inconclusive one whose numerical paths disagree says so, and what each path found."""
    found = paths_found(dict(c.outcomes_by_path)) if paths else ""
    if c.outcome == "inconclusive" and found:
        return f"the numerical paths disagree ({found})"
    if c.outcome == "not-testable":           # the claim's gates say which model, which gate
        why = [GATE_READING[kind] for kind in kinds(c.gates)]
        return "; ".join(why) or ("the models compared did not all pass the training gate, or the probe's "
                                  "reference did not pass its positive control")
    return c.claim.reading(c.outcome)


def paper_part(store: Any, plan: Any) -> Part:
    """The SAN family's tables, figures and macros of ``plan`` (a :class:`verification.san.checks.Plan`:
    its preset, seed, numerical paths and device; the main job's: preset ``paper`` with ``--full``,
    else ``quick``), every table naming ``plan.command()``: its :func:`~verification.san.findings.findings`
    rendered (:func:`render`)."""
    return render(findings(store, plan))


def render(f: Findings) -> Part:
    """The findings ``f`` as the family's Part: tables, figures and macros."""
    name, runs, command = f.preset, list(f.runs), f.command
    prov = (f"campaigns {', '.join(f.campaigns)}, {f.claims_campaign}; preset {name}; seeds {f.seeds}; "
            f"numerical paths {', '.join(f.paths)}; device {f.device}; byte-level pydoc_data.topics prose + "
            f"retrieval/recall probes")
    part = Part(family="san", commands=[command])
    runs_df, claims_df = runs_table(runs), claims_table(f.claims)
    for c in f.claims:                  # what a test of each claim needs (the power analysis), as prose quotes it
        part.macro(needs(c), "San", c.claim.kind, c.claim.instance, "needs")
    bpt = f.bytes_per_token
    bpt_factor = bpt.get("bytes_per_token", math.nan)
    per_tok = {c.claim.key: float(c.statistic) * bpt_factor if c.unit == "nats/byte" else math.nan for c in f.claims}
    claims_df["approx_nats_per_token"] = [per_tok[c.claim.key] for c in f.claims]
    scale = f"tiny scale: {runs_df['params'].min():,}-{runs_df['params'].max():,} non-embedding parameters"
    made = dict(campaigns=f.campaigns + (f.claims_campaign,), command=command)      # every table: its campaigns, its command
    part.tables += [
        Table("san-runs", runs_df, f"SAN runs ({scale}; primary numerical path): validation loss (nats per byte), "
              "probe accuracies and accuracy above the larger chance level", prov, **made),
        Table("san-gate", gate_table(f),
              "The training gate: per role, the runs whose validation loss lies below the bigram model's loss on the "
              "same validation windows (byte pairs of the training text, add-k smoothing at the k that favours it; "
              "the unigram and bigram entropies of the training bytes beside it), and the reference's "
              "positive control per probe (every seed's accuracy above the probe's chance level, exact one-sided "
              "binomial tests, Bonferroni over the seeds); "
              "a claim comparing a role with a failed run, or a probe claim whose control fails, is not testable",
              prov, **made),
        Table("san-curves", curves_table(runs), "Losses at matched steps: validation loss (nats per byte; mean, "
              "min and max over seeds) and probe accuracies per role at initialisation and at every checkpoint",
              prov, **made),
        Table("san-matched-loss", matched_loss_table(runs, f.bigram_val),
              "Steps at matched loss: per role, the training steps its runs need to reach the training gate and "
              "the worst role's final mean loss (validation loss, linear between checkpoints; mean over the seeds "
              "that reach it)", prov, **made),
        Table("san-probes", probes_table(runs), "Probe accuracies against their chance levels, computed from the "
              "probe's own rows (copying a random context digit; always the most frequent answer)", prov, **made),
        Table("san-claims", claims_df, f"The paper's claims at tiny scale: mean of paired differences over seed pairs "
              f"(units as stated; the paper's nats per token are compared in direction only), unadjusted t interval with "
              f"seed pairs minus one degrees of freedom (90% for the TOST row, margin {MARGIN:g} nats per byte) and "
              f"the Bonferroni-adjusted interval beside it (level 1 - alpha/m), Holm-adjusted p over the "
              f"claims of the run at family-wise level {ALPHA:g}, minimum detectable effect (power 0.8) at the "
              "run's noise floor; a claim with no variation over seed pairs is not applicable (never decided); "
              + ("drops kept: how many leave-one-seed-pair-out runs keep a decided outcome (fragile: half or fewer); "
                 if f.leave_one_out else f"leave-one-seed-pair-out not run ({loo_skipped(f)}); ")
              + "an outcome that differs between numerical paths is inconclusive", prov, **made),
        power_report(f, prov, **made),
        paths_report(f, prov, **made),
        checks_report(f, prov, **made),
        Table("san-robustness", robustness_table(f.claims), "Machine robustness: each claim's mean paired "
              "difference, raw and Holm-adjusted p, Bonferroni-adjusted interval and outcome along each numerical "
              "path (fused and explicit attention kernels: the same mathematics, other rounding, as on another "
              "machine), the paths that decide it and the difference between their means; the reported outcome is "
              "inconclusive where they differ", prov, **made),
        Table("san-spectra", spectra_table(runs), "Effective ranks over training (mean over seeds and layers)", prov,
              **made),
        Table("san-trainability", trainability_table(runs), "Trainability by depth, with and without QK-norm "
              "(a diverged run counts at the unigram entropy)", prov, **made),
        Table("san-rollout", rollout_table(f.rollout).rename(columns=ROLLOUT_COLUMNS),
              f"Rollout on the trained decoders: median {DELTA_R} over inputs and the mean D2 chain ratio "
              f"{CHAIN_RATIO} (D1 is structurally tight for causal attention)",
              prov, **made),
        Table("san-bottleneck", bottleneck_table(f.bottleneck).rename(columns=BOTTLENECK_COLUMNS),
              "Scalar-bottleneck identity check (the lemma is proved: an identity check of the implementation, not "
              "a finding) on the trained attention-only weights at sequence length one: the residual of the float "
              f"computation, the exact verdict, and the range of the scalars {C_L}", prov, **made)]
    part.figures += figures(runs, claims_df, spectra_table(runs), prov)
    part.tables.insert(0, report_claims(f.claims, per_tok, bpt_factor, prov, **made))
    for c in f.claims:
        kind, inst, stat = c.claim.kind, c.claim.instance, c.statistic
        part.macro(stat if stat is not None and math.isfinite(float(stat)) else "not measured", "San", kind, inst)
        part.macro(c.outcome, "San", kind, inst, "outcome")
        part.macro(reading(c), "San", kind, inst, "reading")
        mde = c.mde           # "unbounded" only where one seed leaves no spread; a claim not tested has none
        part.macro(float(mde) if mde is not None and math.isfinite(float(mde)) else
                   "not measured" if c.gate or not c.applicable else "unbounded", "San", kind, inst, "mde")
    part.macro(float(bpt_factor), "San", "bytes per token")
    part.macro(str(bpt.get("tokenizer", "none")), "San", "bytes per token tokenizer")
    part.macro(int(PRESETS[name].n_pairs), "San", "retrieval pairs")          # the probes' settings
    part.macro(float(PRESETS[name].probe_share), "San", "probe share")
    part.macro(float(PRESETS[name].retrieval_share), "San", "retrieval share")
    for c in f.claims:
        if math.isfinite(per_tok[c.claim.key]):
            # an approximation ("about"): two decimals, as the claims table prints it
            part.macro(per_token(per_tok[c.claim.key]), "San", c.claim.kind, c.claim.instance, "per token")
    _summary_macros(part, f, runs_df, rollout_table(f.rollout), probes_table(runs))
    _prose_macros(part, f, runs_df, name)
    _report_macros(part, f, runs_df)
    diverged = sum(bool(r.get("diverged")) for r in runs)
    part.macro("no run diverged" if diverged == 0 else f"{diverged} of {len(runs)} runs diverged", "San",
               "diverged text")
    decided = sum(c.decided for c in f.claims)
    part.macro("None is decided at this scale, so the report reads as a power analysis" if decided == 0 else
               "Beside the decided ones, the run sizes the tests of the others", "San", "power lead")
    factor = f.d1_verdicts
    prose_guards(part, max_params=int(runs_df["params"].max()), ref_layers=int(part.macros["SanRefLayers"]),
                 deepest=int(runs_df["layers"].max()) if len(runs_df) else None,
                 d1_tight=sum(v == "tight" for v in factor), d1_layers=len(factor))
    return part


# the smallest model of the paper (6M parameters) and its deepest stack (48 layers)
PAPER_SMALLEST_PARAMS, PAPER_DEEPEST_LAYERS = 6_000_000, 48
BOTTLENECK_COLUMNS = {"float_residual": "float residual", "c_min": f"min {C_L}", "c_max": f"max {C_L}"}
ROLLOUT_COLUMNS = {"delta_R": "median delta(R_l)", "chain_ratio": "mean chain ratio",
                   "chain_tight": "share chain tight"}


def prose_guards(part: Part, max_params: int, ref_layers: int, deepest: Optional[int], d1_tight: int,
                 d1_layers: int) -> None:
    """The conditions of the ``\\Guard{San...}`` sentences of ``paper/sections/san.tex`` and the
    README's SAN line, from the stored numbers (a store where one is false fails the build)."""
    part.guard(max_params < PAPER_SMALLEST_PARAMS, "San", "tiny scale",
               detail=f"largest model {max_params:,} non-embedding parameters, the paper's smallest "
                      f"{PAPER_SMALLEST_PARAMS:,}")
    part.guard(ref_layers >= 2, "San", "reference two layers", detail=f"the reference has {ref_layers} layers")
    part.guard(deepest is not None and deepest < PAPER_DEEPEST_LAYERS, "San", "shallower than the paper",
               detail=f"deepest stack {deepest} layers, the paper's {PAPER_DEEPEST_LAYERS}")
    part.guard(d1_layers > 0 and d1_tight == d1_layers, "San", "D1 tight on every causal layer",
               detail=f"D1 tight on {d1_tight} of {d1_layers} stored layer checks")


def _num(x: Any) -> str:
    """A number in prose as a macro writes it (four significant digits)."""
    return f"{float(x):.4g}"


def _prose_macros(part: Part, f: Findings, runs_df: Any, preset: str) -> None:
    """Sentences whose shape depends on which roles the preset trained (plain text, numbers written as
    the macros write them): ``SanGapOthersText`` (the gaps at matched FLOPs and parameters and the
    reduction) and ``SanProbesText`` (the probes of the parameter-matched pair, else the depth-matched
    one); ``SanProbePair`` names the pair."""
    rows = {c.claim.key: c for c in f.claims}
    trained = set(runs_df["role"])

    def said(key: tuple) -> str:
        return f"{reading(rows[key], paths=False)} ({rows[key].outcome}"

    if {"san-flops", "san-params"} <= trained:
        fl, pa, re_ = rows[("gap", "flops")], rows[("gap", "params")], rows[("gap", "reduction")]
        text = (f"At matched FLOPs it is {_num(fl.statistic)}: {said(('gap', 'flops'))}; the paper's 0.26 nats "
                f"per token). At matched parameters it is {_num(pa.statistic)}: {said(('gap', 'params'))}; TOST "
                f"at margin {MARGIN:g}). The reduction of the gap from matched depth to matched parameters, its own "
                f"statistic, is {_num(re_.statistic)}: {said(('gap', 'reduction'))}).")
    else:
        text = (f"The {preset} preset does not train the FLOPs- and parameter-matched models (the paper preset "
                "does): the gaps at matched FLOPs and parameters, and the reduction of the gap between them, are "
                "not testable here.")
    part.macro(text, "San", "gap others text")
    part.macro("all three trained here" if {"san-flops", "san-params"} <= trained else
               f"the {preset} preset trains the first only", "San", "roles text")
    pair = "params" if "san-params" in trained else "depth"
    part.macro("parameter" if pair == "params" else "depth", "San", "probe pair")
    ret, rec = rows[("probes", f"retrieval-{pair}")], rows[("probes", f"recall-{pair}")]
    stat = lambda c: _num(c.statistic) if math.isfinite(float(c.statistic)) else "not measured"  # noqa: E731
    part.macro(f"On context-grounded retrieval the accuracy of the {part.macros['SanProbePair']}-matched SAN minus "
               f"that of the standard model is {stat(ret)}: {said(('probes', f'retrieval-{pair}'))}); on parametric "
               f"recall {stat(rec)}: {said(('probes', f'recall-{pair}'))}).", "San", "probes text")
    pairs = runs_df[runs_df["role"].isin(["std", f"san-{pair}"])]
    for kind in ("retrieval", "recall"):
        for role, label in (("std", "std"), (f"san-{pair}", "san pair")):
            sub = pairs[pairs["role"] == role]
            if len(sub):
                part.macro(float(sub[f"{kind}_acc"].mean()), "San", kind, "acc", label)
    qk = [c for c in f.claims if c.claim.depth is not None]
    if qk:
        row = max(qk, key=lambda c: c.claim.depth)
        part.macro(f"At {row.claim.depth} attention-only layers the loss without QK-normalisation minus the loss "
                   f"with it is {_num(row.statistic)} ({row.outcome}; one seed: no degrees of freedom, so no "
                   "interval).", "San", "qk norm text")
    else:
        part.macro(f"The {preset} preset runs no depth sweep (the paper preset does), so trainability with and "
                   "without QK-normalisation is not measured here.", "San", "qk norm text")
    lc = rows[("low_context", pair)]
    part.macro(stat(lc), "San", "low context pair")
    part.macro(str(lc.outcome), "San", "low context pair outcome")


def _summary_macros(part: Part, f: Findings, runs_df: Any, roll: Any, probes: Any) -> None:
    """Preset-independent numbers the prose quotes (the per-claim macros are set by the caller)."""
    runs, claims = f.runs, f.claims
    gaps = [c for c in claims if c.claim.kind == "gap"]
    if gaps:
        part.macro(float(gaps[0].noise), "San", "noise floor")
    part.macro(sum(c.n >= 2 for c in claims), "San", "family size")
    part.macro(ALPHA, "San", "alpha")
    part.macro(MARGIN, "San", "margin")
    part.macro(float(f.bigram_val) if runs else math.nan, "San", "bigram val loss")
    part.macro(sum(bool(c.robust) for c in claims), "San", "robust claims")
    part.macro(sum(c.fragile for c in claims if c.decided), "San", "fragile claims")
    part.macro(sum(c.no_spread for c in claims), "San", "not applicable claims")   # no spread; a gated claim is
    part.macro(count(sum(c.no_spread for c in claims), "claim"), "San", "no spread text")    # counted by its gate
    part.macro(len(claims), "San", "claims")
    part.macro(sum(c.decided for c in claims), "San", "decided claims")
    part.macro(sum(c.outcome == "not-testable" for c in claims), "San", "not testable claims")
    part.macro(len(f.paths), "San", "paths")
    pairs = runs_df[runs_df["role"] != "sweep"]
    part.macro(int(runs_df["params"].min()), "San", "min params")
    part.macro(int(runs_df["params"].max()), "San", "max params")
    part.macro(int(pairs["seed"].nunique()), "San", "seed pairs")
    part.macro(int(pairs[pairs["role"] == "std"]["layers"].iloc[0]) if len(pairs) else 0, "San", "ref layers")
    part.macro(int(runs[0]["steps_done"]) if runs else 0, "San", "steps")
    for role in ROLE_ORDER:
        sub = pairs[pairs["role"] == role]
        if not len(sub):            # a role this preset does not train
            continue
        part.macro(float(sub["val_loss"].mean()), "San", "loss", role)
        for kind in ("retrieval", "recall"):
            part.macro(float(sub[f"{kind}_acc"].mean()), "San", kind, "acc", role)
    for kind in ("retrieval", "recall"):
        sub = probes[probes["probe"] == kind] if len(probes) else probes
        if len(sub):
            part.macro(float(sub["chance_copy"].mean()), "San", kind, "chance copy")
            part.macro(float(sub["chance_majority"].mean()), "San", kind, "chance majority")
    part.macro(sum(b.verdict == "tight" for b in f.bottleneck), "San", "bottleneck tight")
    part.macro(len(f.bottleneck), "San", "bottleneck runs")
    part.macro("holds exactly on" if f.checks[0].holds else "is decided exactly on", "San", "bottleneck check words")
    if len(roll):
        last = roll[(roll["variant"] == "all")]
        pair = "san-params" if (last["role"] == "san-params").any() else "san-depth"
        for role, label in (("std", "std"), (pair, "san pair")):
            sub = last[last["role"] == role]
            if len(sub):
                top = sub[sub["layer"] == sub["layer"].max()].iloc[0]
                part.macro(float(top["chain_ratio"]), "San", "chain ratio last", label)
                part.macro(float(top["delta_R"]), "San", "delta R last", role)


def count(n: int, noun: str) -> str:
    """``n`` ``noun``s in words as prose writes a count: "no claim", "1 claim", "8 claims"."""
    return f"no {noun}" if n == 0 else f"1 {noun}" if n == 1 else f"{n} {noun}s"


def words_list(items: list) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def loo_skipped(f: Findings) -> str:
    """Why leave-one-seed-pair-out was not run: the seed pairs of this preset, and what it needs."""
    from verification.san.checks.decide import LOO_MIN_PAIRS

    return (f"{count(f.settings.seeds, 'seed pair')} here; it is run only with more than {LOO_MIN_PAIRS - 1}, "
            "since a drop would leave too few degrees of freedom for its outcome to mean anything")


def _report_macros(part: Part, f: Findings, runs_df: Any) -> None:
    """The report's sentences that depend on the preset and the data (plain text): the preset's
    settings and measured wall time, the roles each figure plots, the numerical paths (which decide,
    how far apart), leave-one-seed-pair-out (run, or why not), the probes at ceiling, the power
    analysis against the preset's seed pairs, and the Bonferroni level of the claims table."""
    st = f.settings
    trained = [r for r in ROLE_ORDER if r in set(runs_df["role"])]
    part.macro(f"The {st.name} preset: width {st.d_model} ({st.n_head} heads), context {st.ctx} bytes, batch "
               f"{st.batch}, {st.steps} steps at learning rate {st.lr:g}, a standard reference of {st.ref_layers} "
               f"layers, {count(st.seeds, 'seed pair')}, the roles "
               f"{words_list([ROLE_LEGEND[r] for r in st.roles if r in ROLE_LEGEND])}, "
               + (f"the depth sweep at {words_list([str(d) for d in st.depths])} layers ({st.sweep_steps} steps)"
                  if st.depths else "no depth sweep")
               + "; " + (f"measured wall time: {st.measured}." if st.measured else
                         "its wall time is not measured (the preset states none)."), "San", "preset text")
    part.macro(st.measured or "not measured", "San", "wall time")
    sans = [ROLE_LEGEND[r].removeprefix("SAN, ").replace("params", "parameters") for r in trained if r != "std"]
    part.macro(f"standard, and the attention-only model{'s' if len(sans) > 1 else ''} matched for {words_list(sans)}"
               if sans else "standard only", "San", "plotted roles")
    gaps = [c.claim.instance for c in f.claims if c.claim.kind == "gap" and c.claim.instance in
            ("depth", "flops", "params") and math.isfinite(float(c.statistic))]
    part.macro(words_list([{"flops": "FLOPs", "params": "parameters"}.get(g, g) for g in gaps]) or "none",
               "San", "gaps plotted")
    level = adjusted_level(f.claims)
    part.macro(f"{100 * level:.2f}" if math.isfinite(level) else "not measured", "San", "adjusted level")
    both = sum(bool(c.by_path) and len(c.decided_by) == len(c.by_path) and not c.gates for c in f.claims)
    one = sum(bool(c.decided_by) and len(c.decided_by) < len(c.by_path) and not c.gates for c in f.claims)
    diffs = [(c.path_difference, c) for c in f.claims if c.path_difference is not None and not c.gates]
    big = max(diffs, key=lambda d: d[0], default=None)
    part.macro(f"{count(both, 'claim')} decided by every path, {count(one, 'claim')} by one path alone "
               "(reported inconclusive by the rule)"
               + (f"; the largest difference between the paths' means of a tested claim is {big[0]:.2g} "
                  f"{big[1].unit} ({big[1].claim.kind.replace('_', ' ')}, {big[1].claim.instance})" if big else "")
               if len(f.paths) > 1 else f"only the {PATH_NAMES.get(f.paths[0], f.paths[0])} path was run, so no "
               "claim is checked against another path", "San", "paths text")
    if f.leave_one_out:
        k = part.macros['SanFragileClaims']
        part.macro(("no decided claim is" if k == 0 else f"{count(k, 'decided claim')} {'is' if k == 1 else 'are'}")
                   + " fragile: "
                   "kept in at most half of the leave-one-seed-pair-out runs (the column drops kept)",
                   "San", "leave one out text")
    else:
        part.macro(f"leave-one-seed-pair-out robustness is not run: {loo_skipped(f)}", "San", "leave one out text")
    top = [c for c in f.ceilings if c.at_ceiling]
    part.macro("No probe is at ceiling for both roles it compares" if not top else
               "At ceiling for both roles (so its claim is not testable): "
               + words_list([f"{c.probe} ({ROLE_LEGEND[c.roles[0]]} vs {ROLE_LEGEND[c.roles[1]]})" for c in top]),
               "San", "ceiling text")
    sized = [c for c in f.claims if c.pairs_needed is not None]
    met = [c for c in sized if c.pairs_needed <= st.seeds]
    most = max(sized, key=lambda c: c.pairs_needed, default=None)
    part.macro(f"Of the {count(len(sized), 'claim')} a power analysis can size here, {len(met)} need no more than "
               f"the {st.seeds} seed pairs this preset has"
               + (f" (the most, {most.pairs_needed}, for {most.claim.kind.replace('_', ' ')} "
                  f"({most.claim.instance}))" if most else "") if sized else
               "No claim can be sized here (each is gated, shows no spread, or has one seed)", "San", "power text")
