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

from verification.report.part import MissingCampaign, Part, Table
from verification.san.checks.claims import ALPHA, MARGIN, claims_campaign, claims_chunk, path_runs
from verification.san.checks.presets import PRESETS
from verification.san.report.tables import (ROLE_ORDER, bottleneck_table, claims_table, curves_table, figures,
                                            gate_kinds, gate_table, matched_loss_table, paths_found, power_table, probes_table,
                                            robustness_table,
                                            rollout_table, runs_table, spectra_table, trainability_table)

# what an outcome means in words, per claim: (supported, refuted, inconclusive)
READING = {
    ("gap", "depth"): ("the standard model is ahead, the paper's direction",
                       "the attention-only model is ahead, against the paper's direction",
                       "undecided at this noise floor"),
    ("gap", "flops"): ("the standard model is ahead, the paper's direction",
                       "the attention-only model is ahead, against the paper's direction",
                       "undecided at this noise floor"),
    ("gap", "params"): ("equivalent within the margin: the gap is closed, as the paper reports",
                        "not equivalent: the gap exceeds the margin",
                        "neither shown equivalent within the margin nor shown to exceed it"),
    ("gap", "reduction"): ("the gap shrinks from matched depth to matched parameters, the paper's direction",
                           "the gap grows from matched depth to matched parameters, against the paper",
                           "no change of the gap is shown"),
    ("probes", "retrieval-params"): ("the attention-only model retrieves better, the paper's direction",
                                     "the standard model retrieves better, against the paper's direction",
                                     "no difference is shown"),
    ("probes", "recall-params"): ("the attention-only model recalls worse, the paper's direction",
                                  "the attention-only model recalls better, against the paper's direction",
                                  "no difference is shown"),
}
# the probes read the same at matched depth as at matched parameters
READING.update({("probes", f"{kind}-depth"): READING[("probes", f"{kind}-params")] for kind in ("retrieval", "recall")})


GATE_READING = {"untrained": "this preset does not train the models it compares (the paper preset does)",
                "gate": "a model compared did not beat the bigram model on validation",
                "control": "the probe's reference is not above chance (its positive control fails)"}
GATE_SHORT = {"untrained": "roles not trained here", "gate": "training gate failed", "control": "positive control failed"}


def reading(claim: str, instance: str, outcome: str, gate: str = "", paths: Optional[dict] = None) -> str:
    """The words for ``outcome`` of one claim (see :data:`READING`); a not-testable one says why,
    from its record's ``gate``: a role this preset does not train, a model that did not beat the
    bigram model, or a probe whose reference is not above chance; an inconclusive one whose numerical
    paths (``paths``: outcome by path) disagree says so, and what each path found."""
    if outcome == "inconclusive" and paths_found(paths or {}):
        return f"the numerical paths disagree ({paths_found(paths or {})})"
    if outcome == "not-testable":           # the claim's record says which model, which gate
        why = [GATE_READING[kind] for kind in gate_kinds(gate)]
        return "; ".join(why) or ("the models compared did not all pass the training gate, or the probe's "
                                  "reference did not pass its positive control")
    words = READING.get((claim, instance), ("supported", "refuted", "inconclusive"))
    return words[("supported", "refuted", "inconclusive").index(outcome)]


def paper_part(store: Any, plan: Any) -> Part:
    """The SAN family's tables, figures and macros of ``plan`` (a :class:`verification.san.checks.Plan`:
    its preset, seed, numerical paths and device; the main job's: preset ``paper`` with ``--full``,
    else ``quick``), every table naming ``plan.command()``."""
    name, device = plan.preset, plan.device
    camps = plan.runs_campaigns()
    camp = next(iter(camps.values()))
    command = plan.command()
    paths = path_runs(store, camps)
    if next(iter(camps)) not in paths:
        raise MissingCampaign(camp, command)
    runs = paths[next(iter(camps))]
    claims_camp = claims_campaign(camp)
    chunk = claims_chunk(paths)          # the claims decided from exactly these runs, this claims version
    claims = [r for r in store.records(claims_camp) if r["chunk"] == chunk]
    if not claims:
        raise MissingCampaign(claims_camp, command)
    used = tuple(camps[k] for k in paths)
    prov = (f"campaigns {', '.join(used)}, {claims_camp}; preset {name}; seeds {sorted({r['seed'] for r in runs})}; "
            f"numerical paths {', '.join(paths)}; device {device}; byte-level pydoc_data.topics prose + "
            f"retrieval/recall probes")
    part = Part(family="san", commands=[command])
    runs_df, claims_df = runs_table(runs), claims_table(claims)
    power = power_table(claims_df)
    for _, r in power.iterrows():       # what a test of each claim needs (the power analysis), as prose quotes it
        part.macro(f"{int(r['pairs_needed'])} seed pairs" if math.isfinite(r["pairs_needed"]) else r["needs"], "San",
                   r["claim"], r["instance"], "needs")
    bpt = (runs[0].get("bytes_per_token") or {}) if runs else {}
    bpt_factor = bpt.get("bytes_per_token", math.nan)
    claims_df["approx_nats_per_token"] = [float(v) * bpt_factor if u == "nats/byte" else math.nan
                                          for v, u in zip(claims_df["statistic"], claims_df["unit"])]
    scale = f"tiny scale: {runs_df['params'].min():,}-{runs_df['params'].max():,} non-embedding parameters"
    made = dict(campaigns=used + (claims_camp,), command=command)      # every table: its campaigns, its command
    part.tables += [
        Table("san-runs", runs_df, f"SAN runs ({scale}; primary numerical path): validation loss (nats per byte), "
              "probe accuracies and accuracy above the larger chance level", prov, **made),
        Table("san-gate", gate_table(runs, PRESETS[name].ctx, PRESETS[name].n_facts),
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
        Table("san-matched-loss", matched_loss_table(runs, (runs[0].get("bigram_val", math.nan) if runs else math.nan)),
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
              "drops kept: how many leave-one-seed-pair-out runs keep a decided outcome (fragile: half or fewer); "
              "an outcome that differs between numerical paths is inconclusive", prov, **made),
        power_report(power, prov, **made),
        Table("san-robustness", robustness_table(claims), "Machine robustness: each claim's outcome along each "
              "numerical path (fused and explicit attention kernels: the same mathematics, other rounding, as "
              "on another machine); the reported outcome is inconclusive where they differ", prov, **made),
        Table("san-spectra", spectra_table(runs), "Effective ranks over training (mean over seeds and layers)", prov,
              **made),
        Table("san-trainability", trainability_table(runs), "Trainability by depth, with and without QK-norm "
              "(a diverged run counts at the unigram entropy)", prov, **made),
        Table("san-rollout", rollout_table(store, camp).rename(columns=ROLLOUT_COLUMNS),
              r"Rollout on the trained decoders: median $\delta(R_l)$ over inputs and the mean D2 chain ratio "
              r"$\delta(R_l)/\prod_{k \le l} \delta(\hat A_k)$ (D1 is structurally tight for causal attention)",
              prov, **made),
        Table("san-bottleneck", bottleneck_table(store, camp).rename(columns=BOTTLENECK_COLUMNS),
              "Scalar-bottleneck lemma on the trained attention-only weights at sequence length one: the residual of the float computation, the exact "
              r"verdict, and the range of the scalars $c_l$", prov, **made)]
    part.figures += figures(runs, claims_df, spectra_table(runs), prov)
    part.tables.insert(0, report_claims(claims_df, bpt_factor, prov, **made))
    for _, c in claims_df.iterrows():
        stat = c["statistic"]
        part.macro(stat if stat is not None and math.isfinite(float(stat)) else "not measured", "San", c["claim"],
                   c["instance"])
        part.macro(c["outcome"], "San", c["claim"], c["instance"], "outcome")
        part.macro(reading(c["claim"], c["instance"], c["outcome"], str(c.get("gate") or ""),
                           c.get("outcomes_by_path") or {}), "San", c["claim"],
                   c["instance"], "reading")
        mde = c["mde"]        # "unbounded" only where one seed leaves no spread; a claim not tested has none
        part.macro(float(mde) if mde is not None and math.isfinite(float(mde)) else
                   "not measured" if c.get("gate") or not c.get("applicable", True) else "unbounded", "San", c["claim"],
                   c["instance"], "mde")
    part.macro(float(bpt_factor), "San", "bytes per token")
    part.macro(str(bpt.get("tokenizer", "none")), "San", "bytes per token tokenizer")
    part.macro(int(PRESETS[name].n_pairs), "San", "retrieval pairs")          # the probes' settings
    part.macro(float(PRESETS[name].probe_share), "San", "probe share")
    part.macro(float(PRESETS[name].retrieval_share), "San", "retrieval share")
    for _, c in claims_df.iterrows():
        if math.isfinite(c["approx_nats_per_token"]):
            # an approximation ("about"): two decimals, as the claims table prints it
            part.macro(per_token(c["approx_nats_per_token"]), "San", c["claim"], c["instance"], "per token")
    _summary_macros(part, runs, runs_df, claims_df, rollout_table(store, camp), bottleneck_table(store, camp),
                    probes_table(runs), list(paths))
    _prose_macros(part, claims_df, runs_df, name)
    diverged = sum(bool(r.get("diverged")) for r in runs)
    part.macro("no run diverged" if diverged == 0 else f"{diverged} of {len(runs)} runs diverged", "San",
               "diverged text")
    decided = int(claims_df["outcome"].isin(["supported", "refuted"]).sum())
    part.macro("None is decided at this scale, so the report reads as a power analysis" if decided == 0 else
               "Beside the decided ones, the run sizes the tests of the others", "San", "power lead")
    factor = [r["verdict"] for r in store.records(camp, theorem="dobrushin.factor")]
    prose_guards(part, max_params=int(runs_df["params"].max()), ref_layers=int(part.macros["SanRefLayers"]),
                 deepest=int(runs_df["layers"].max()) if len(runs_df) else None,
                 d1_tight=sum(v == "tight" for v in factor), d1_layers=len(factor))
    return part


# the abstract of Ndubuaku et al. (arXiv:2607.18363), claim by claim: (its words, its number)
PAPER_CLAIMS = {
    ("gap", "depth"): ("deleting feed-forward layers in place is costly: the standard transformer leads at matched "
                       "depth", "0.47 nats/token"),
    ("gap", "flops"): ("... and at matched FLOPs", "0.26 nats/token"),
    ("gap", "params"): ("reallocating the freed budget into attention depth closes the gap: at matched parameters "
                        "the difference is small", "0.006 nats/token"),
    ("gap", "reduction"): ("the gap shrinks from matched depth to matched parameters", "0.47 to 0.006"),
    ("gap", "flops-between"): ("the gap at matched FLOPs lies between matched depth and matched parameters",
                               "0.26"),
    ("probes", "retrieval-params"): ("attention-only models are better on context-grounded answers", "-"),
    ("probes", "recall-params"): ("... and worse where knowledge must come from weights", "-"),
    ("probes", "retrieval-depth"): ("(the same probes at matched depth)", "-"),
    ("probes", "recall-depth"): ("(the same probes at matched depth)", "-"),
    ("low_context", "params"): ("the deficit concentrates on low-context query prediction", "-"),
    ("low_context", "depth"): ("(the same at matched depth)", "-"),
    ("spectra", "routing-settles"): ("routing matrices (Q/K) crystallize early", "-"),
    ("spectra", "routing-settles-circuits"): ("(routing circuits settle early)", "-"),
    ("spectra", "content-later"): ("content matrices accumulate rank slowly (later than routing)", "-"),
    ("spectra", "rank-into-WO"): ("removing feed-forward layers relocates this accumulation to the attention output "
                                  "projection", "-"),
    ("qk_norm", "L2"): ("QK-normalization keeps attention-only stacks trainable", "48 layers"),
}
DESIGNS = {"gap": "paired loss difference",
           "probes": "paired probe accuracy; reference above chance",
           "low_context": "paired loss difference, low-context positions",
           "spectra": "paired rank-growth times",
           "qk_norm": "one run with, one without QK-norm"}


def power_report(power: Any, prov: str, **made: Any) -> Table:
    """The power analysis, typeset: per claim, the mean and standard deviation of its paired
    differences over this run's seed pairs, the minimum detectable effect now, and what a test of it
    needs (:func:`verification.san.report.tables.power_table`)."""
    rows = [[f"{r['claim'].replace('_', ' ')} ({r['instance']})", "-" if not math.isfinite(r["mean"]) else f"{r['mean']:.3g}",
             "-" if not math.isfinite(r["sd"]) else f"{r['sd']:.2g}", r["seed_pairs"],
             "-" if not math.isfinite(r["mde"]) else f"{r['mde']:.3g}", r["needs"]]
            for _, r in power.iterrows()]
    return Table.from_rows("san-power", rows, ["claim", "mean", "sd", "seed pairs", "MDE now", "a test needs"],
                           "What a test of each claim needs: the mean and standard deviation of its paired "
                           "differences over this run's seed pairs (units as in Table 1), the minimum detectable "
                           "effect now (power 0.8 at Holm's strictest level), and the seed pairs a paired t test "
                           "at that level would need to detect the observed mean with power 0.8 (for the "
                           "equivalence claim, TOST at its margin), or what else it needs", prov, wrap=6, **made)


def per_token(x: float) -> str:
    """An approximate nats-per-token figure as prose prints it: two decimals, or one significant digit
    where two decimals would print 0.00 (never "-0.00")."""
    x = float(x)
    return f"{x:.2f}" if abs(x) >= 0.005 else f"{x:.1g}"


def outcome_words(c: Any) -> str:
    """A claim's outcome with the reason where the outcome alone would mislead: the numerical paths
    disagree (an interval may exclude 0 on one path and the outcome still be inconclusive), every seed
    pair gives the same value (not applicable), or the claim is not testable (which gate)."""
    out = str(c["outcome"])
    if c.get("gate"):
        kinds = gate_kinds(str(c["gate"]))
        return f"{out} ({GATE_SHORT[kinds[0]]})" if kinds else out
    if not c.get("applicable", True):
        return f"{out} (no spread: the t test does not apply)"
    found = paths_found(c.get("outcomes_by_path") or {})
    return f"{out} (the numerical paths differ: {found})" if found else out


def report_claims(claims_df: Any, bytes_per_token: float, prov: str, **made: Any) -> Table:
    """The reproduction report's first table: each claim of the SAN abstract in its words, its number,
    this suite's design, the statistic with its Holm-adjusted (Bonferroni) interval (nats per byte,
    and nats per token at the measured bytes per token of a stated tokenizer), and the outcome."""
    from verification.report.part import claims_table
    from verification.report.tables import fmt_ci

    rows = []
    for _, c in claims_df.iterrows():
        words, number = PAPER_CLAIMS.get((c["claim"], c["instance"]), (f"{c['claim']} ({c['instance']})", "-"))
        if c["claim"] == "qk_norm" and c["instance"] != "L2":
            words = f"(the same, {c['instance'][1:]} layers)"
        stat = float(c["statistic"])
        here = f"{stat:.3g}"
        lo, hi = c.get("low_adjusted"), c.get("high_adjusted")
        if lo is not None and hi is not None and all(isinstance(x, (int, float)) and math.isfinite(x) for x in (lo, hi)):
            here = " ".join(fmt_ci(stat, float(lo), float(hi)))
        here = f"{here} {c['unit']}" if math.isfinite(stat) else "not measured"
        if math.isfinite(c["approx_nats_per_token"]):     # nats/byte times the measured bytes per token
            here += f" (about {per_token(c['approx_nats_per_token'])} nats/token)"
        if not c.get("gate") and not c.get("applicable", True) and math.isfinite(stat):
            here = f"{stat:.3g} {c['unit']} on every seed pair (no spread)"
        rows.append([words, number, DESIGNS.get(c["claim"], c["claim"]), here, outcome_words(c)])
    return claims_table("san-report-claims", rows,
                        "The claims of Ndubuaku et al. (arXiv:2607.18363) tested at tiny scale: each in the "
                        "abstract's words, its number, this suite's design, the mean paired difference with its "
                        "Holm-adjusted (Bonferroni) 95% interval, and the outcome after Holm; nats per token are the "
                        "suite's nats per byte times the measured bytes per token ("
                        + (f"{bytes_per_token:.2f}" if math.isfinite(bytes_per_token) else "not measured") + ") of the "
                        "MiniLM WordPiece tokenizer, a stated conversion, not the paper's tokenizer; a claim whose "
                        "models failed the training gate is not testable.", prov, **made)


# the smallest model of the paper (6M parameters) and its deepest stack (48 layers)
PAPER_SMALLEST_PARAMS, PAPER_DEEPEST_LAYERS = 6_000_000, 48
BOTTLENECK_COLUMNS = {"float_residual": "float residual", "c_min": "min $c_l$", "c_max": "max $c_l$"}
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


def _prose_macros(part: Part, claims_df: Any, runs_df: Any, preset: str) -> None:
    """Sentences whose shape depends on which roles the preset trained (plain text, numbers written as
    the macros write them): ``SanGapOthersText`` (the gaps at matched FLOPs and parameters and the
    reduction) and ``SanProbesText`` (the probes of the parameter-matched pair, else the depth-matched
    one); ``SanProbePair`` names the pair."""
    rows = {(c["claim"], c["instance"]): c for _, c in claims_df.iterrows()}
    trained = set(runs_df["role"])

    def said(key: tuple) -> str:
        c = rows[key]
        return f"{reading(key[0], key[1], c['outcome'], str(c.get('gate') or ''))} ({c['outcome']}"

    if {"san-flops", "san-params"} <= trained:
        fl, pa, re_ = rows[("gap", "flops")], rows[("gap", "params")], rows[("gap", "reduction")]
        text = (f"At matched FLOPs it is {_num(fl['statistic'])}: {said(('gap', 'flops'))}; the paper's 0.26 nats "
                f"per token). At matched parameters it is {_num(pa['statistic'])}: {said(('gap', 'params'))}; TOST "
                f"at margin {MARGIN:g}). The reduction of the gap from matched depth to matched parameters, its own "
                f"statistic, is {_num(re_['statistic'])}: {said(('gap', 'reduction'))}).")
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
    stat = lambda c: _num(c["statistic"]) if math.isfinite(float(c["statistic"])) else "not measured"  # noqa: E731
    part.macro(f"On context-grounded retrieval the accuracy of the {part.macros['SanProbePair']}-matched SAN minus "
               f"that of the standard model is {stat(ret)}: {said(('probes', f'retrieval-{pair}'))}); on parametric "
               f"recall {stat(rec)}: {said(('probes', f'recall-{pair}'))}).", "San", "probes text")
    pairs = runs_df[runs_df["role"].isin(["std", f"san-{pair}"])]
    for kind in ("retrieval", "recall"):
        for role, label in (("std", "std"), (f"san-{pair}", "san pair")):
            sub = pairs[pairs["role"] == role]
            if len(sub):
                part.macro(float(sub[f"{kind}_acc"].mean()), "San", kind, "acc", label)
    qk = claims_df[claims_df["claim"] == "qk_norm"]
    if len(qk):
        deepest = max(qk["instance"], key=lambda v: int(v[1:]))
        row = qk[qk["instance"] == deepest].iloc[0]
        part.macro(f"At {int(deepest[1:])} attention-only layers the loss without QK-normalisation minus the loss "
                   f"with it is {_num(row['statistic'])} ({row['outcome']}; one seed: no degrees of freedom, so no "
                   "interval).", "San", "qk norm text")
    else:
        part.macro(f"The {preset} preset runs no depth sweep (the paper preset does), so trainability with and "
                   "without QK-normalisation is not measured here.", "San", "qk norm text")
    lc = rows[("low_context", pair)]
    part.macro(stat(lc), "San", "low context pair")
    part.macro(str(lc["outcome"]), "San", "low context pair outcome")


def _summary_macros(part: Part, runs: list, runs_df: Any, claims_df: Any, roll: Any, bott: Any, probes: Any,
                    kernels: list) -> None:
    """Preset-independent numbers the prose quotes (the per-claim macros are set by the caller)."""
    gaps = claims_df[claims_df["claim"] == "gap"]
    if len(gaps):
        part.macro(float(gaps["noise_floor"].iloc[0]), "San", "noise floor")
    tested = claims_df[claims_df["n"] >= 2]
    part.macro(int(len(tested)), "San", "family size")
    part.macro(ALPHA, "San", "alpha")
    part.macro(MARGIN, "San", "margin")
    part.macro(float(runs[0].get("bigram_val", math.nan)) if runs else math.nan, "San", "bigram val loss")
    part.macro(int(claims_df["robust"].astype(bool).sum()), "San", "robust claims")
    decided = claims_df[claims_df["outcome"].isin(["supported", "refuted"])]
    part.macro(int(decided["fragile"].astype(bool).sum()), "San", "fragile claims")
    part.macro(int((~claims_df["applicable"].astype(bool)).sum()), "San", "not applicable claims")
    part.macro(int(len(claims_df)), "San", "claims")
    part.macro(int(claims_df["outcome"].isin(["supported", "refuted"]).sum()), "San", "decided claims")
    part.macro(int((claims_df["outcome"] == "not-testable").sum()), "San", "not testable claims")
    part.macro(len(kernels), "San", "paths")
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
    part.macro(int((bott["verdict"] == "tight").sum()) if len(bott) else 0, "San", "bottleneck tight")
    part.macro(int(len(bott)), "San", "bottleneck runs")
    if len(roll):
        last = roll[(roll["variant"] == "all")]
        pair = "san-params" if (last["role"] == "san-params").any() else "san-depth"
        for role, label in (("std", "std"), (pair, "san pair")):
            sub = last[last["role"] == role]
            if len(sub):
                top = sub[sub["layer"] == sub["layer"].max()].iloc[0]
                part.macro(float(top["chain_ratio"]), "San", "chain ratio last", label)
                part.macro(float(top["delta_R"]), "San", "delta R last", role)
