"""The paper's tables and figures across the embedded models, rendered from the trained findings
(:class:`verification.trained.findings.Findings`): ``trained-float`` (what a float test of D1
at tolerance 0 gets wrong), ``trained-models`` and ``trained-models-summary`` (each model's pooled
shares beside random matrices), the figures ``trained-depth`` and ``trained-chain-ratio`` (their data
and drawing: :mod:`verification.trained.paper.figures`), and their macros.
"""
from __future__ import annotations

from typing import Any

from verification.measure.attention import FUSION, RESIDUAL
from verification.paper.notation.trained import CHAIN_RATIO_AXIS, CHAIN_RATIO_BY_DEPTH
from verification.report.figures import HALF_LOW
from verification.report.part import Figure, Part, Table, frame
from verification.trained.paper.figures import chain_panels, depth_panels, draw_panels
from verification.trained.paper.model import interval_pair
from verification.trained.paper.names import ARCHITECTURES, LEGEND, MODELS, NAMES, QUANTISATION, SHORT, TITLES, notes_of
from verification.trained.findings.model import ALWAYS_TIGHT, PRECISIONS
from verification.trained.findings import Findings
from verification.trained.report.tables import (CLUSTER_NOTE, CLUSTER_SHORT, FLOAT_CAPTION, FLOAT_COLUMNS, float_rows, interval_cell, ratio,
                                                value_interval)

def float_cells(test: Any, dt: str) -> tuple:
    """(wrong "k/n [lo, hi]", violated, tight missed) of one float test in one precision; "-" where not measured."""
    c = test.precisions[dt]
    return ("-",) * 3 if c is None else (f"{c.wrong.k}/{test.verdicts} {interval_cell(c.wrong)}", c.violated, c.missed)


def float_part(part: Part, found: Findings) -> None:
    """The table ``trained-float`` and its macros: what a float test of D1 at tolerance 0 gets wrong,
    for each of its three implementations (:mod:`numerics.dobrushin.float_tests`) and the constant
    answer "always tight". Macros per model word W (MiniLM, ...), precision P (float32, float64) and
    test X (AsStored, Renormalised, Condition): ``\\WFloatPXWrong`` ("k/n [lo, hi]"), ``...Violated``,
    ``...TightMissed``; ``\\WAlwaysTightWrong``; the renormalised test also under the names without X
    (``\\MiniLMFloatThreeTwoWrong``: the suite's original test); totals over the models
    ``\\FloatFloatPXViolatedTotal`` (and ``\\FloatFloatPViolatedTotal``, renormalised), ``\\FloatVerdictsTotal``."""
    totals: dict = {}
    for name, m in found.models.items():
        word, f = MODELS.get(name, name), m.findings
        constant = next(t for t in f.floats if t.test == ALWAYS_TIGHT)
        b = constant.precisions["float32"].wrong.k
        for dt in PRECISIONS:      # the two == tests against the constant answer, as one phrase
            said = {}
            for t in f.floats:
                if t.test != ALWAYS_TIGHT and t.precisions["float32"] is not None and t.precisions[dt] is not None:
                    a = t.precisions[dt].wrong.k
                    said[t.test] = "more" if a > b else "fewer" if a < b else "as many"
            w1, w2 = said.get("as-stored"), said.get("renormalised")
            if w1 is None or w2 is None:
                phrase = "-"
            elif w1 == w2:
                phrase = f"both {w1} errors than the constant answer" if w1 != "as many" else \
                    "both as many errors as the constant answer"
            else:
                phrase = (f"as stored {w1}, renormalised {w2} errors than the constant answer"
                          .replace("as many,", "as many as,").replace("as many errors than", "as many errors as"))
            part.macro(phrase, word, dt, "versus constant")
        for t in f.floats:
            if t.test == ALWAYS_TIGHT:
                part.macro(float_cells(t, "float32")[0], word, "always tight wrong")
                continue
            for dt in PRECISIONS:
                wrong, violated, missed = float_cells(t, dt)
                for base in [(word, dt, t.test)] + ([(word, dt)] if t.test == "renormalised" else []):
                    part.macro(wrong, *base, "wrong")
                    part.macro(str(violated), *base, "violated")
                    part.macro(str(missed), *base, "tight missed")
                totals[(dt, t.test)] = totals.get((dt, t.test), 0) + (violated if isinstance(violated, int) else 0)
    for (dt, test), v in totals.items():
        part.macro(str(v), "float", dt, test, "violated total")
        if test == "renormalised":
            part.macro(str(v), "float", dt, "violated total")
    part.macro(str(sum(m.findings.floats[0].verdicts for m in found.models.values())), "float verdicts total")
    camps = [m.campaign for m in found.models.values()]
    part.tables.append(Table(
        "trained-float", frame(float_rows({SHORT.get(n, n): m.findings for n, m in found.models.items()}), FLOAT_COLUMNS),
        FLOAT_CAPTION.format(of="of the measured models", cluster=CLUSTER_NOTE),
        "campaigns " + ", ".join(camps) + "; float verdicts by numerics.dobrushin.float_tests in each precision",
        campaigns=tuple(camps), command=part.commands[0], keys=2))        # model and float test in every block


def chain_part(part: Part, found: Findings) -> None:
    """The figure ``trained-chain-ratio`` (how loose rollout's product bound is, by depth, every model:
    :func:`verification.trained.paper.figures.chain_panels`) and its macros ``\\WChainRatioLastLayer``
    (median [95% CI]) per model word W."""
    for name, m in found.models.items():
        f = m.findings
        med, ci = interval_pair(f.rollout[f.layers - 1].ratio)
        part.macro(f"{med} {ci}" if ci != "-" else med, MODELS.get(name, name), "chain ratio last layer")
    panels = chain_panels(found)
    camps = tuple(m.campaign for m in found.models.values())
    prov = ("campaigns " + ", ".join(camps) + "; inputs " + ", ".join(f"{LEGEND.get(n, n)} {m.findings.inputs}"
                                                         for n, m in found.models.items())
            + "; all tokens, head-averaged attention, rollout residual "
            f"{RESIDUAL}, {FUSION} head fusion; medians over inputs with 95% order-statistic intervals (distribution-free, "
            "none under six inputs); ratios whose numerator is within rounding of 0 left out; panels: "
            + "; ".join(f"{p.title}: " + ", ".join(c.label for c in p.curves) for p in panels)
            + "; each model shifted along the depth axis by a fixed step so that none hides another")
    part.figures.append(Figure("trained-chain-ratio",
                               draw_panels(panels, "depth $l$ (layers multiplied)", CHAIN_RATIO_AXIS, log=True,
                                           xfrom=0.3),
                               "How loose rollout's product bound is: the median over inputs of "
                               f"{CHAIN_RATIO_BY_DEPTH} by depth (1 at $l = 1$; below 1 wherever D2's chain is "
                               "strict), the bidirectional encoders (left) and the causal decoders (right, dashed), with "
                               "95% order-statistic intervals where a model has six inputs or more.", prov,
                               campaigns=camps, command=part.commands[0], size=HALF_LOW))


MODELS_COLUMNS = ["model", "architecture", "attention", "layers", "heads", "inputs", "tokens (median)",
                  "weights", "D1 tight, head mean [95% CI]", "D1 tight, per head [95% CI]",
                  "D1 tight, content, per head [95% CI]", "random Dirichlet, matched n [95% CI]", "forced"]
SUMMARY_COLUMNS = ["model", "layers x heads", "inputs", "D1 tight, head mean [95% CI]",
                   "D1 tight, per head [95% CI]", "random, matched n [95% CI]"]   # one block: the model says causal


def random_cell(s: Any) -> str:
    """``[lo, hi]`` (two decimals) of a random share pooled over inputs, "-" without inputs."""
    return f"[{s.lo:.2f}, {s.hi:.2f}]" if s.n else "-"


def models_cells(name: str, m: Any) -> dict:
    """One model's row of ``trained-models`` by column: what it is, and its D1 equality shares pooled
    over layers and inputs (head mean; every head; content tokens, every head), beside random
    Dirichlet matrices of its token counts; "forced" when the causal corollary makes every verdict
    tight (a check, not a measurement)."""
    f, rnd = m.findings, m.controls.random
    arch, kind = ARCHITECTURES.get(name, ("-", "causal" if f.causal else "bidirectional"))
    pooled = [m.pooled[k] for k in ("mean", "heads", "content")]
    return dict(zip(MODELS_COLUMNS, [TITLES.get(name, name), arch, kind, f.layers, f.heads, f.inputs, f"{f.tokens:g}",
                                     QUANTISATION.get(name, "-")]
                    + [value_interval(s) if s is not None else "-" for s in pooled]
                    + [f"{ratio(rnd)} {random_cell(rnd)}", "yes (causal)" if f.causal else "no"]))


def causal_name(short: str) -> str:
    """A decoder's short name with "causal" in its parentheses.

    >>> causal_name("SmolLM2-135M (4-bit)"), causal_name("GPT-2")
    ('SmolLM2-135M (4-bit, causal)', 'GPT-2 (causal)')
    """
    return short[:-1] + ", causal)" if short.endswith(")") else short + " (causal)"


WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def count_words(part: Part, found: Findings) -> None:
    """The prose's counts of models: ``\\TrainedModelsWord`` (how many were measured, "five" on the quick
    settings), ``\\TrainedQuantisedWord`` (how many through quantised weights) and
    ``\\TrainedLargerDecodersClause``, the clause naming the full settings' larger decoders
    (:data:`verification.measure.text.FULL_ONLY`) with their layers and inputs, empty where none was read."""
    from verification.measure.text import FULL_ONLY

    word = lambda k: WORDS[k] if k < len(WORDS) else str(k)     # noqa: E731
    part.macro(word(len(found.models)), "trained models word")
    part.macro(word(sum(bool(m.findings.quantised) for m in found.models.values())), "trained quantised word")
    larger = [(n, m.findings) for n, m in found.models.items() if n in FULL_ONLY]
    part.macro("" if not larger else
               "; the larger decoders " + " and ".join(f"{NAMES[n][0]} ({f.layers} layers)" for n, f in larger)
               + ", quantised GGUF files a third party repackaged (full settings only), read "
               + " and ".join(str(f.inputs) for _, f in larger) + " inputs", "trained larger decoders clause")


def models_part(part: Part, found: Findings) -> None:
    """The cross-model tables ``trained-models``, ``trained-models-summary`` and figure ``trained-depth``."""
    cells = {name: models_cells(name, m) for name, m in found.models.items()}
    camps = tuple(m.campaign for m in found.models.values())
    prov = ("campaigns " + ", ".join(camps) + f"; random baselines: campaign {found.baselines}; D1 verdicts exact; "
            + "; ".join(f"{TITLES.get(n, n)}: {note}" for n in found.models for note in notes_of(n)))
    for name, c in cells.items():
        word = MODELS.get(name, name)
        for col, key in (("D1 tight, head mean [95% CI]", "mean"), ("D1 tight, per head [95% CI]", "heads"),
                         ("D1 tight, content, per head [95% CI]", "content"),
                         ("random Dirichlet, matched n [95% CI]", "random"), ("forced", "forced"),
                         ("tokens (median)", "tokens"), ("attention", "attention")):
            part.macro(str(c[col]), word, "models", key)
    part.macro(str(len(cells)), "trained models count")
    count_words(part, found)
    # the heading "D1 is tight far more often than for random matrices of the same size": every
    # bidirectional model's pooled share (head mean) lies above its random baseline, intervals disjoint
    above = []
    for name, m in found.models.items():
        if m.findings.causal:
            continue
        own, rnd = m.pooled["mean"], m.controls.random
        above.append((name, bool(own is not None and own.n and rnd.n and own.lo > rnd.hi)))
    part.guard(bool(above) and all(ok for _, ok in above), "trained D1 above random",
               detail=", ".join(f"{n}: {'above' if ok else 'not above'}" for n, ok in above))
    part.macro(str(sum(not m.findings.causal for m in found.models.values())), "trained models bidirectional")
    made = dict(campaigns=camps + (found.baselines,), command=part.commands[0])
    part.tables.append(Table("trained-models", frame([list(c.values()) for c in cells.values()], MODELS_COLUMNS),
                             "Every pretrained model measured: what it is, and the share of D1 verdicts that are "
                             "exact equalities, pooled over layers and inputs (head-averaged attention; every head; "
                             "every head on content tokens), 95% intervals by a " + CLUSTER_NOTE + ", beside random "
                             "Dirichlet(1) matrices of the same token counts. 'forced': causal attention makes every verdict "
                             "tight (the causal corollary): a check, not a measurement.", prov, **made))
    short = [[causal_name(SHORT.get(name, name)) if c["forced"] != "no" else SHORT.get(name, name),
              f"{c['layers']} x {c['heads']}", c["inputs"], c["D1 tight, head mean [95% CI]"],
              c["D1 tight, per head [95% CI]"], c["random Dirichlet, matched n [95% CI]"]] for name, c in cells.items()]
    part.tables.append(Table("trained-models-summary", frame(short, SUMMARY_COLUMNS),
        "The pretrained models side by side (causal: a decoder): the share of D1 verdicts that are exact "
        "equalities, pooled over layers and inputs, for the head-averaged attention and for every head, beside "
        "random Dirichlet(1) matrices of the same token counts (95% " + CLUSTER_SHORT + "); '1 (forced)': the causal "
        "corollary makes every verdict tight, a check, not a measurement.",
        prov, **made))
    depth_figure(part, found, camps)


DEPTH_CAPTION_MEASURED = ("minilm", "antiberty", "dinov2")   # the models trained.tex's caption of trained-depth lists


def depth_figure(part: Part, found: Findings, camps: tuple) -> None:
    """The figure ``trained-depth`` (:func:`verification.trained.paper.figures.depth_panels`) and the guard
    of its caption, ``TrainedDepthPanels``: every model is shown, the measured panel holds the bidirectional
    models the caption lists (:data:`DEPTH_CAPTION_MEASURED`), each point with its Wilson interval, and the
    forced panel every causal model (each of whose shares the causal corollary forces), no other."""
    panels = depth_panels(found)
    shown = {c.name: (p.by_model, c.causal) for p in panels for c in p.curves}
    measured = [c for p in panels if not p.by_model for c in p.curves]
    part.guard(set(shown) == set(found.models) and all(forced == causal for forced, causal in shown.values())
               and tuple(c.name for c in measured) == DEPTH_CAPTION_MEASURED
               and all(all(c.has_interval) for c in measured), "trained depth panels",
               detail="; ".join(f"{p.title.replace(chr(10), ' ')}: " + ", ".join(c.name for c in p.curves)
                                for p in panels) + f"; the caption lists {', '.join(DEPTH_CAPTION_MEASURED)}")
    prov = ("campaigns " + ", ".join(camps) + "; inputs " + ", ".join(f"{LEGEND.get(n, n)} {m.findings.inputs}"
                                                                      for n, m in found.models.items())
            + "; head-averaged attention, all tokens; per layer the count of inputs with D1 equality (exact "
            "verdicts) with its 95% Wilson interval (independent inputs); forced: every verdict tight by the causal "
            "corollary, shown without interval; each measured model shifted along the depth axis by a fixed step "
            "so that none hides another")
    part.figures.append(Figure("trained-depth", draw_panels(panels, "relative depth $l / (L - 1)$",
                                                           "share of inputs with D1 equality", widths=(2.2, 1),
                                                           ylim=(-0.03, 1.05)),
                               "Share of inputs with D1 equality against relative depth (head mean, all tokens): "
                               "the bidirectional models measured, with 95% Wilson intervals (left); the causal "
                               "decoders forced to 1 by the causal corollary, a check (right).", prov,
                               campaigns=camps, command=part.commands[0], size=HALF_LOW))
