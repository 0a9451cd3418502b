"""The size of the rollout bounds' slack and the mechanism of D1's equality in the paper, rendered
from each model's :class:`verification.trained.findings.size.Size`: the table ``trained-size`` (per
model, the relative slack of the strict D1 verdicts and D2's looseness beside random stacks of the
same sizes), the data tables ``trained-slack-layers`` (the relative slack per layer) and
``trained-mechanism`` (per layer: tight, tight only through token 0, the two controls) and
``trained-mechanism-strata`` (the same pooled over layers, by source and by token count), the abstract's sentence ``\\TrainedSizeAbstract`` and the guards of the prose's words.
"""
from __future__ import annotations

from typing import Any, Optional

from verification.paper.notation.trained import CHAIN_RATIO_LAST
from verification.report.part import Part, Table, frame
from verification.trained.findings import Findings
from verification.trained.findings.size import Mechanism, Slack
from verification.trained.paper.model import interval_pair
from verification.trained.paper.names import LEGEND, MODELS, SHORT
from verification.trained.report.tables import CLUSTER_NOTE, count_cell, interval_cell, ratio

NEARLY_EXACT = 0.05      # "nearly exact": every model's median relative slack of strict D1 verdicts at most this
SIDE = {1: "above", -1: "below", 0: "not separable from"}
SIZE_COLUMNS = ["model", "strict D1, head means", "relative slack: median [95% CI]", "max",
                "D2 ratio: median [95% CI]", "random stacks [95% CI]", "difference [95% CI]"]
LAYER_COLUMNS = ["model", "layer", "strict D1", "median [95% CI]", "quartiles", "max"]
MECH_COLUMNS = ["model", "layer", "D1 tight [95% CI]", "tight only via token 0", "off-diagonal shuffled [95% CI]",
                "columns permuted [95% CI]"]
STRATA_COLUMNS = ["model", "stratum", "inputs", "D1 tight [95% CI]", "tight only via token 0",
                  "off-diagonal shuffled [95% CI]", "columns permuted [95% CI]"]


def median_text(e: Any) -> str:
    """"m [lo, hi]" of an estimate (the digits its interval supports), "-" without one."""
    m, ci = interval_pair(e)
    return m if ci == "-" else f"{m} {ci}"


def quartiles(q25: Optional[float], q75: Optional[float]) -> str:
    return "-" if q25 is None else f"{q25:.2g}-{q75:.2g}"


def share_text(s: Any) -> str:
    """"0.92 [0.90, 0.94]" of a share with an interval, "k/n" of a count, "-" for none."""
    if not s.n:
        return "-"
    return f"{ratio(s)} {interval_cell(s)}" if s.method != "count" else count_cell(s)


def layer_range(layers: list[int]) -> str:
    """"layer 3", "layers 0 to 4" (consecutive), or "layers 0, 2, 5"."""
    if len(layers) == 1:
        return f"layer {layers[0]}"
    if layers == list(range(layers[0], layers[-1] + 1)):
        return f"layers {layers[0]} to {layers[-1]}"
    return "layers " + ", ".join(str(l) for l in layers)


def sink_macros(part: Part, word: str, mech: tuple) -> bool:
    """Per model word W: ``\\WSinkLayers`` (the layers where most tight head means are tight only
    through token 0), ``\\WSinkCount`` ("k of n" over them), ``\\WSinkRest`` (the other layers, or "-");
    True when there is such a layer."""
    most = [m for m in mech if m.only_first.n and 2 * m.only_first.k > m.only_first.n]
    rest = [m for m in mech if m not in most and m.only_first.n]
    k, n = sum(m.only_first.k for m in most), sum(m.only_first.n for m in most)
    part.macro(layer_range([m.layer for m in most]) if most else "-", word, "sink layers")
    part.macro(f"{k} of {n}" if most else "-", word, "sink count")
    part.macro((f"{sum(m.only_first.k for m in rest)} of {sum(m.only_first.n for m in rest)} at "
                f"{layer_range([m.layer for m in rest])}") if rest else "-", word, "sink rest")
    return bool(most)


def strata_sentence(strata: tuple) -> str:
    """The share of tight head means tight only through token 0 in each source and across token counts."""
    def share(m: Mechanism) -> str:
        return f"{m.only_first.k / m.only_first.n:.2f}" if m.only_first.n else "-"
    src = [m for m in strata if m.stratum[0] == "source"]
    bins = [m for m in strata if m.stratum[0] == "tokens" and m.only_first.n]
    out = "by source " + ", ".join(f"{share(m)} ({m.stratum[1]})" for m in src)
    if bins:
        lo, hi = min(bins, key=lambda m: m.only_first.k / m.only_first.n), max(bins, key=lambda m: m.only_first.k / m.only_first.n)
        out += (f"; by token count {share(lo)} ({lo.stratum[1]})" if lo is hi else
                f"; by token count from {share(lo)} ({lo.stratum[1]}) to {share(hi)} ({hi.stratum[1]})")
    return out


def slack_row(name: str, size: Any) -> list:
    c = size.chain
    diff = c.difference
    d = "-" if diff is None else (f"{diff.statistic:+.2f} [{diff.interval[0]:+.2f}, {diff.interval[1]:+.2f}]")
    return [SHORT.get(name, name), count_cell(size.means.strict), median_text(size.means.median),
            "-" if size.means.max is None else f"{size.means.max:.2g}", median_text(c.model), median_text(c.null), d]


def layer_row(short: str, layer: Any, s: Slack) -> list:
    return [short, layer, count_cell(s.strict), median_text(s.median), quartiles(s.q25, s.q75),
            "-" if s.max is None else f"{s.max:.2g}"]


def size_part(part: Part, found: Findings) -> None:
    """Data tables ``trained-size``, ``trained-slack-layers``, ``trained-mechanism`` and
    ``trained-mechanism-strata`` and per model word W the macros
    ``\\WRelSlackMedian`` (median [95% CI] of the strict head means' relative slack), ``\\WRelSlackMax``,
    ``\\WRelSlackStrict`` (k/N), ``\\WRelSlackHeads``, ``\\WChainModel``, ``\\WChainNull`` (median
    [95% CI]), ``\\WChainWord`` ("above", "below", "not separable from": the paired difference's
    interval), ``\\WChainDiff``, ``\\WSinkLayers`` / ``Count`` / ``Rest``, ``\\WStrataSentence``,
    ``\\WControlColumnsBound``; ``\\ChainNullDraws``, ``\\NearlyExactLevel``, ``\\TrainedSizeAbstract``
    (the abstract's sentence); guards ``FactorBoundNearlyExact``, ``ColumnsChanceLevel``, ``WSinkMost``."""
    rows, lrows, mrows, srows = [], [], [], []
    exact, chance = [], []
    for name, m in found.models.items():
        size, word, short = m.size, MODELS.get(name, name), SHORT.get(name, name)
        if size is None:
            continue
        rows.append(slack_row(name, size))
        part.macro(median_text(size.means.median), word, "rel slack median")
        part.macro("-" if size.means.max is None else f"{size.means.max:.2g}", word, "rel slack max")
        part.macro(count_cell(size.means.strict), word, "rel slack strict")
        part.macro(median_text(size.heads.median), word, "rel slack heads")
        c = size.chain
        part.macro(median_text(c.model), word, "chain model")
        part.macro(median_text(c.null), word, "chain null")
        side = 0 if c.difference is None or c.difference.outcome != "supported" else (1 if c.difference.statistic > 0 else -1)
        part.macro(SIDE[side], word, "chain word")
        part.macro(slack_row(name, size)[-1], word, "chain diff")
        if size.means.median is not None:
            exact.append((short, size.means.median.value))
        lrows += [layer_row(short, s.layer, s) for s in size.layers if s.strict.k]
        lrows += [layer_row(short, "all (head means)", size.means), layer_row(short, "all (every head)", size.heads)]
        if m.findings.causal:
            continue
        for x in size.mechanism:
            mrows.append([short, x.layer, share_text(x.tight), count_cell(x.only_first), share_text(x.offdiagonal),
                          share_text(x.columns)])
        for x in size.strata:
            srows.append([short, x.stratum[1], x.inputs, share_text(x.tight), count_cell(x.only_first),
                          share_text(x.offdiagonal), share_text(x.columns)])
        part.guard(sink_macros(part, word, size.mechanism), word, "sink most")
        part.macro(strata_sentence(size.strata), word, "strata sentence")
        cols = m.controls.shares["columns"]
        chance.append((short, cols))
    part.macro(str(found.models[next(iter(found.models))].size.chain.draws) if found.models else "-", "chain null draws")
    part.macro(f"{NEARLY_EXACT:g}", "nearly exact level")
    part.guard(bool(exact) and all(v <= NEARLY_EXACT for _, v in exact), "factor bound nearly exact",
               detail=", ".join(f"{n}: median relative slack {v:.3g}" for n, v in exact))
    # Proposition (appendix): a uniform column permutation of a fixed matrix is tight with probability at
    # most 1/2 (unique maximising pair, rows tied in at most one column): the pooled share's interval must reach it
    part.guard(bool(chance) and all(s is not None and s.lo <= 0.5 for _, s in chance), "columns chance level",
               detail=", ".join(f"{n}: {s.value:.2f} [{s.lo:.2f}, {s.hi:.2f}]" for n, s in chance if s is not None))
    part.macro(abstract_sentence(found), "trained size abstract")
    camps = tuple(m.campaign for m in found.models.values())
    made = dict(campaigns=camps, command=part.commands[0])
    prov = ("campaigns " + ", ".join(camps) + "; relative slack = (bound - value)/bound of the stored strict D1 "
            "verdicts; medians with 95% order-statistic intervals; D2 ratio: the stored "
            "chain ratio at the last layer; random stacks: verification.measure.baselines.chain_ratio_null, "
            f"{found.models[next(iter(found.models))].size.chain.draws if found.models else 0} stacks per token count "
            "(Dirichlet(1) rows; the causal family for causal models), generator chunk 3,000,000 + L, the plan's seed")
    part.data_tables.append(Table("trained-size", frame(rows, SIZE_COLUMNS),
        "How large the slack is. Left: the relative slack (slack divided by the bound) of the strict D1 verdicts, "
        "head-averaged attention, all tokens, pooled over layers and inputs (per layer and on every head: the data "
        "table trained-slack-layers). Right: "
        f"{CHAIN_RATIO_LAST} at the last layer, median over inputs, beside random stacks of the same sizes "
        "(n, L): Dirichlet(1) rows (the causal family for the causal decoders), residual factors multiplied as "
        "rollout multiplies them; difference: the median over inputs of the model's ratio minus the random "
        "stacks' median at that input's n, with its 95% order-statistic interval. The text calls the factor bound nearly "
        f"exact when every model's median relative slack is at most {NEARLY_EXACT:g}.", prov, **made))
    part.data_tables.append(Table("trained-slack-layers", frame(lrows, LAYER_COLUMNS),
        "The relative slack of the strict D1 verdicts on the head-averaged attention (all tokens), per model and "
        "layer (layers with a strict verdict), and pooled over layers on the head means and on every head: median "
        "with its 95% order-statistic interval, quartiles, maximum.", prov, **made))
    mprov = ("campaigns " + ", ".join(camps) + "; D1 verdicts and both controls exact; tight only via token 0: "
             "every mutually self-dominant maximising pair contains token 0; shares per layer: 95% Wilson "
             "intervals; per stratum, pooled over layers: " + CLUSTER_NOTE)
    part.data_tables.append(Table("trained-mechanism", frame(mrows, MECH_COLUMNS),
        "How D1's equality comes about, per bidirectional model and layer (head-averaged attention, all tokens): "
        "the tight verdicts, those tight only through token 0 (of the tight ones), and the two controls' tight "
        "verdicts (off-diagonal entries shuffled; columns permuted).", mprov, **made))
    part.data_tables.append(Table("trained-mechanism-strata", frame(srows, STRATA_COLUMNS),
        "How D1's equality comes about, by stratum of the inputs (their source; their kept token count n), "
        "pooled over layers: the tight head means (all tokens), those tight only through token 0 (of the tight "
        "ones), and the two controls, with 95% intervals by a " + CLUSTER_NOTE + ".", mprov, **made))


def abstract_sentence(found: Findings) -> str:
    """The abstract's one sentence on the mechanism and the slack, of the first model with strict verdicts
    (MiniLM in the main job): where its tight head means are tight only through token 0, the strict
    verdicts' median relative slack (so the rollout bound's slack is D2's); "-" where the store has none."""
    sized = {n: m for n, m in found.models.items() if m.size is not None and m.size.means.median is not None}
    if not sized:
        return "-"
    name, m = next(iter(sized.items()))
    word = LEGEND.get(name, name)
    most = [x for x in m.size.mechanism if x.only_first.n and 2 * x.only_first.k > x.only_first.n]
    sink = (f"In {word}'s {layer_range([x.layer for x in most])}, {sum(x.only_first.k for x in most)} of "
            f"{sum(x.only_first.n for x in most)} tight head means are tight only through token 0; "
            if most else "")
    return (sink + ("w" if sink else "W") + f"here strict, the factor bound is nearly exact (median relative slack "
            f"{median_text(m.size.means.median)}), so the rollout bound's slack lies mostly in submultiplicativity.")
