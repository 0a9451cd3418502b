"""One embedded model's part of the paper, rendered from its findings
(:class:`verification.trained.findings.model.ModelFindings`): the macros of its D1 shares per token
set and layer, heads, sources beside random matrices and rollout chain (with the guards of the
prose's sentences about them), its tables ``trained-d1/-sources/-rollout/-heads/-compare-<model>``
and figures ``trained-heads-<model>``, ``trained-rollout-<model>``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from verification.measure.attention import FUSION, RESIDUAL
from verification.measure.baselines import FAMILIES
from verification.measure.text import corpus_of
from verification.paper.notation.trained import (CHAIN_RATIO, DELTA_A, DELTA_R, PROD_DELTA_HAT, PROD_DELTA_HAT_K,
                                                PROD_FACTORS, PROD_FACTORS_K, TAU_B)
from verification.report.figures import HALF_LOW
from verification.report.part import Figure, Part, Table, frame
from verification.report.tables import fmt, fmt_ci
from verification.trained.paper.names import MODELS, NAMES, TITLES, notes_of
from verification.trained.findings.model import ModelFindings
from verification.trained.findings import Model
from verification.trained.findings.records import slug
from verification.trained.report.tables import (CLUSTER_NOTE, VARIANT_TITLES, compare_table, d1_table, interval_cell,
                                                 ratio, rollout_table, source_table)

# the per-model tables the paper typesets (the prose reads them); every other per-model table is data only
# (Part.data_tables): the causal models' D1 shares are forced, a check reported in one line
TYPESET = {"minilm": {"d1", "sources", "heads", "rollout", "compare"}, "smollm2": {"rollout", "compare"}}


def _heatmap(shares: np.ndarray, heading: str):
    def draw(ax: Any) -> None:
        from matplotlib.ticker import MaxNLocator

        im = ax.imshow(shares, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_title(heading)   # the model; the caption says the rest
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.figure.colorbar(im, ax=ax, label="D1 equality share")
    return draw


CURVE_LABELS = {"value": (DELTA_R, "-"), "bound": (PROD_DELTA_HAT_K, "-"), "prod_factor_bound": (PROD_FACTORS_K, "--")}


def _rollout_curves(f: ModelFindings, heading: str):
    def draw(ax: Any) -> None:
        for c in f.curves:
            label, style = CURVE_LABELS[c.key]
            ax.plot([l + 1 for l in c.layers], list(c.median), style, marker=".", label=label)
        ax.set_yscale("log")
        ax.set_xlabel("depth $l$")
        ax.set_ylabel("median over inputs")
        ax.set_title(heading)   # the model; the caption says the rest
        ax.legend()
    return draw


def interval_pair(e: Any) -> tuple[str, str]:
    """(median, "[lo, hi]") of an estimate with the digits its interval supports; "-" where there is none."""
    if e is None:
        return "-", "-"
    if not e.has_interval:
        return f"{e.value:.3g}", "-"
    return fmt_ci(e.value, e.lo, e.hi) if e.hi > e.lo else (f"{e.value:.3g}", f"[{e.lo:.3g}, {e.hi:.3g}]")


def _source_macros(part: Part, word: str, f: ModelFindings) -> None:
    """Per source and pooled: inputs, the D1 share in the last and in the lowest layer (95% Wilson),
    and the matched-n random shares (pooled over the sources' inputs)."""
    L = f.layers
    part.macro(str(sum(s.present for s in f.sources) - 1), word, "sources")
    for src in f.sources:      # an absent source: 0 inputs, "-"
        part.macro(str(src.inputs), word, src.name, "inputs")
        for v, s in src.sets.items():
            tag = "" if v == "all" else v
            last, low = s.layers[L - 1], s.layers[s.lowest]
            part.macro(ratio(last), "D1 share", word, src.name, "last layer", tag)
            part.macro(interval_cell(last), "D1 share", word, src.name, "last layer", tag, "interval")
            part.macro(ratio(low), "D1 share", word, src.name, "lowest layer", tag)
            part.macro(interval_cell(low), "D1 share", word, src.name, "lowest layer", tag, "interval")
            part.macro(str(s.lowest), word, src.name, "lowest layer", tag)
            rnd = s.random["dirichlet"]
            part.macro(ratio(rnd), word, src.name, "random Dirichlet share", tag)
            part.macro(interval_cell(rnd), word, src.name, "random Dirichlet share", tag, "interval")
            soft = [r.value for fam, r in s.random.items() if fam != "dirichlet" and r.n]
            part.macro(f"{min(soft):.2f}" if soft else "-", word, src.name, "random softmax share min", tag)
            part.macro(f"{max(soft):.2f}" if soft else "-", word, src.name, "random softmax share max", tag)
            if src.name == "pooled" and v == "content":
                # "dropping the special tokens does not remove the effect": on content tokens the lowest
                # layer's Wilson interval lies above every random family's share at the same token counts
                top = max((r.value for r in s.random.values() if r.n), default=1.0)
                part.guard(bool(low.n) and low.lo > top, word, "content tokens keep the effect",
                           detail=f"lowest content-token layer {low.k}/{low.n} against random up to {top:.2f}")


def _model_macros(part: Part, word: str, f: ModelFindings) -> None:
    """The macros of one model's D1 shares, heads and rollout chain (and its guards)."""
    L = f.layers
    part.macro(str(f.inputs), word, "inputs")
    part.macro(str(L), word, "layers")
    part.macro(str(f.heads), word, "heads")
    part.macro(str(f.verdicts), word, "D1 verdicts")
    part.macro(str(f.exact), word, "D1 exact path")
    part.macro(f"{f.tight_all.k}/{f.tight_all.n}", word, "D1 tight all records")
    # the verdicts the float table counts: all tokens, each head and the head mean, every layer and input
    part.macro(f"{f.tight_all_tokens.k}/{f.tight_all_tokens.n}", word, "D1 tight all tokens")
    k, n = f.tight_all.k, f.tight_all.n
    part.guard(k == n > 0, word, "D1 always tight", detail=f"{k} of {n} verdicts tight")
    part.macro(f"layers 0-{L - 2}" if L > 2 else "layer 0", word, "early layers")   # the layers before the last
    for v, ts in f.sets.items():
        for l, d in ts.layers.items():
            part.macro(ratio(d.tight), "D1 share", word, "layer", l, v)
        last = ts.layers[L - 1].tight
        part.macro(ratio(last), "D1 share", word, "last layer", "" if v == "all" else v)
        part.macro(interval_cell(last), "D1 share", word, "last layer", "" if v == "all" else v, "interval")
        inner = [d.tight.value for l, d in ts.layers.items() if l < L - 1 and d.tight.n]
        every = [d.tight.value for d in ts.layers.values() if d.tight.n]
        part.macro(f"{min(inner or every):.2f}", "D1 share", word, v, "early layers min")
        part.macro(f"{max(inner or every):.2f}", "D1 share", word, v, "early layers max")
        part.macro(f"{min(every):.2f}", "D1 share", word, v, "min")
        part.macro(f"{max(every):.2f}", "D1 share", word, v, "max")
        part.macro(f"{ts.via_first.k}/{ts.via_first.n}", word, v, "tight only via token zero")
    hs = f.sets["all"].heads
    # "the heads differ widely": some head is tight on at most a quarter of the inputs, another on three quarters
    part.guard(bool(np.nanmin(hs) <= 0.25 and np.nanmax(hs) >= 0.75), word, "heads differ widely",
               detail=f"head shares from {np.nanmin(hs):.2f} to {np.nanmax(hs):.2f}")
    part.macro(f"{np.nanmin(hs):.2f}", word, "head share min")
    part.macro(f"{np.nanmax(hs):.2f}", word, "head share max")
    part.macro(f"{int(np.sum(hs == 1))}/{int(np.sum(~np.isnan(hs)))}", word, "heads always tight")
    last = f.rollout[L - 1]
    for label, e in (("rollout ratio", last.ratio), ("factor ratio", f.factor_ratio_band)):
        m, ci = interval_pair(e)
        part.macro(m, word, label, "last layer")
        part.macro(ci, word, label, "last layer", "interval")
    m, ci = interval_pair(f.rollout[1].ratio) if 1 in f.rollout else ("-", "-")
    part.macro(m, word, "rollout ratio", "layer", 1)
    part.macro(ci, word, "rollout ratio", "layer", 1, "interval")
    _source_macros(part, word, f)
    part.macro(fmt(last.rollout), word, "delta R last layer")
    for l, r in f.rollout.items():
        part.macro(ratio(r.chain_tight), word, "chain tight", "layer", l)
    steps = [l for l in f.rollout if l >= 1]
    later = [l for l in steps if f.rollout[l].chain_tight.k == 0]
    part.macro(f"{len(later)}/{len(steps)}", word, "chain never tight after step one")
    undecided = sum(r.ratio_undecided.k for r in f.rollout.values())
    part.macro(str(undecided), word, "rollout ratios undecided")
    part.guard(undecided == 0, word, "every ratio decided", detail=f"{undecided} ratios undecided")
    part.guard(len(later) == len(steps), word, "chain tight on no later input",
               detail=f"the chain is tight on some input in {len(steps) - len(later)} later layers")
    med = f.factor_ratio_last
    part.guard(0.9 <= med <= 1.1, word, "factor product close", detail=f"median ratio at the last layer {med:.4g} "
               "(the sentence says close to 1: between 0.9 and 1.1)")


def _abstract_macro(part: Part, name: str, word: str, f: ModelFindings, campaign: str) -> None:
    """``\\<Model>Abstract``: the abstract's clause on an image model's last-layer D1 share, and only
    where it was measured on every bundled photograph: the campaign read the bundled corpus (its name
    is part of the campaign's) and all of it (the referee: a share of 4 photographs does not belong in
    the abstract; nor does a user's own folder of 19 images); empty otherwise (the quick build).
    Text models: no such macro."""
    from numerics.sources.images import BUNDLED_COUNT, DEFAULT_NAME
    from verification.measure.text import reads_images

    if not reads_images(name):
        return
    last = f.sets["all"].layers[f.layers - 1].tight
    every = f.inputs >= BUNDLED_COUNT and DEFAULT_NAME in campaign.split(":")
    part.macro(f", of {NAMES[name][0]} on {ratio(last)} {interval_cell(last)} ({f.inputs} photographs)"
               if every else "", word, "abstract")


def model_part(part: Part, m: Model, plan: Any, baselines: str) -> None:
    f, name, campaign = m.findings, m.name, m.campaign
    word, title, s = MODELS[name], TITLES[name], slug(name)
    heading = NAMES[name][0]
    n_in = f.inputs
    prov = (f"model {name}" + "".join(f"; {note}" for note in notes_of(name)) + f"; campaign {campaign}; {n_in} inputs "
            f"({corpus_of(name)} corpus); rollout residual {RESIDUAL}, {FUSION} head fusion; seed {plan.seed} (no random draws); "
            "D1 verdicts exact (rational), shares of inputs with 95% Wilson intervals, pooled shares with a " + CLUSTER_NOTE)
    _model_macros(part, word, f)
    _abstract_macro(part, name, word, f, campaign)
    q = " 4-bit quantised weights: the quantised model's attention." if f.quantised else ""
    c = (" Causal attention: row 0 is one-hot, so equality is structural (docs/theory.md §1, corollary)." if f.causal else "")
    made = dict(campaigns=(campaign,), command=part.commands[0])     # every table: its campaign, its command

    def add(kind: str, table: Table) -> None:
        (part.tables if kind in TYPESET.get(name, ()) else part.data_tables).append(table)
    rows, cols = d1_table(f)
    add("d1", Table(f"trained-d1-{s}", frame(rows, cols),
                    f"{title}: share of {n_in} inputs where Theorem D1 holds with equality (exact), per layer, "
                    f"head-averaged attention, with 95% Wilson intervals; median slack.{q}{c}", prov, **made))
    rows, cols = source_table(f.sources, FAMILIES)
    add("sources", Table(f"trained-sources-{s}", frame(rows, cols),
                         f"{title}: share of inputs where D1 holds with equality (exact), per source and pooled, "
                         f"95% Wilson intervals, beside the share for random matrices of the same token counts "
                         f"(Dirichlet(1) rows; softmax of Gaussian logits at $T = 0.25, 1, 4$, not fitted to the "
                         f"model), drawn for each input of the row.{q}{c}",
                         prov + f"; random baselines: campaign {baselines}",
                         campaigns=(campaign, baselines), command=part.commands[0]))
    rows, cols = rollout_table(f)
    add("rollout", Table(f"trained-rollout-{s}", frame(rows, cols),
                         f"{title}: rollout per layer, all tokens, medians over {n_in} inputs: {DELTA_R} against "
                         f"{PROD_DELTA_HAT} (D2 chain) and {PROD_FACTORS} (D1 factors); the ratio "
                         f"{CHAIN_RATIO} with the 95% order-statistic interval of its median (none under six inputs). "
                         f"By Theorem D2 that ratio cannot increase with $l$ (a check); whether the chain is tight "
                         f"is decided on each input by D2's exact condition at every step (a measurement).{q}",
                         prov, **made))
    hs = f.sets["all"].heads
    hrows = [[l] + [None if np.isnan(x) else f"{x:.2f}" for x in hs[l]] for l in range(hs.shape[0])]
    add("heads", Table(f"trained-heads-{s}", frame(hrows, ["layer"] + [f"h{h}" for h in range(hs.shape[1])]),
                       f"{title}: per-head share of {n_in} inputs with D1 equality, {VARIANT_TITLES['all']}.{q}",
                       prov, **made))
    rows, cols = compare_table(f)
    classical = [x for cmp in f.compare.values() for x in (cmp.birkhoff, cmp.softmax) if x is not None]
    deltas = [cmp.delta for cmp in f.compare.values() if cmp.delta is not None]
    part.macro(f"{min(classical):.2f}" if classical else "-", word, "classical bound min")   # "close to 1" as a number
    part.macro(f"{min(deltas):.2f}" if deltas else "-", word, "median delta min")
    add("compare", Table(f"trained-compare-{s}", frame(rows, cols),
                         f"{title}: comparison bounds on {DELTA_A} of head-averaged attention (Birkhoff's "
                         f"{TAU_B} and the mean-head softmax-logit bound; trivial wherever $A$ has zeros).{q}", prov,
                         **made))
    part.figures.append(Figure(f"trained-heads-{s}", _heatmap(hs, heading),
                               f"{title}: share of inputs with D1 equality per layer and head (all tokens).{q}", prov,
                               size=HALF_LOW))
    part.figures.append(Figure(f"trained-rollout-{s}", _rollout_curves(f, heading),
                               f"{title}: medians of {DELTA_R}, {PROD_DELTA_HAT} and {PROD_FACTORS} by depth.{q}",
                               prov))
