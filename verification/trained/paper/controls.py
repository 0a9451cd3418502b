"""The controls of D1's equality share in the paper, rendered from each model's
:class:`verification.trained.findings.Controls`: the table ``trained-controls`` (the head means
beside their column-permuted and off-diagonal-shuffled copies and random matrices of the same token
counts), the data table ``trained-pairs`` (which pair attains delta(A)), the comparisons' words and
intervals, and their macros.
"""
from __future__ import annotations

from verification.paper.notation.trained import DELTA_A
from verification.report.part import Part, Table, frame
from verification.stats import BOOTSTRAP_RESAMPLES
from verification.trained.paper.across import random_cell
from verification.trained.paper.names import MODELS, SHORT
from verification.trained.findings import MIN_INPUTS, PAIR_KINDS, Comparison, Findings
from verification.trained.report.tables import CLUSTER_NOTE, CLUSTER_SHORT, interval_cell, ratio, value_interval

CONTROLS = (("real", "D1 tight, trained [95% CI]"), ("columns", "columns permuted [95% CI]"),
            ("offdiagonal", "off-diagonal shuffled [95% CI]"))
CONTROLS_COLUMNS = (["model", "attention", "head means"] + [c[1] for c in CONTROLS]
                    + ["random Dirichlet, matched n [95% CI]", "every pair self-dominant"])
PAIRS_COLUMNS = ["model", "head means", "maximiser: special token", "maximiser: adjacent", "maximiser: other",
                 "tight: special token", "tight: adjacent", "tight: other",
                 "every pair self-dominant (input, layer)", "inputs: in every layer", "inputs: in some layer"]
REFERENCE_WORDS = {"columns": "the share with the columns permuted",
                   "offdiagonal": "the share with the off-diagonal entries shuffled", "random": "the random share"}
SIDE_WORDS = {1: "above", -1: "below", 0: "not separable from"}


def word_of(c: Comparison) -> str:
    """The word a comparison allows: "above", "below", or "not separable from" where its interval holds 0."""
    return SIDE_WORDS[c.side]


def comparison_macros(part: Part, found: Findings) -> None:
    """The trained head mean's pooled D1 share against each reference (its two controls, random
    Dirichlet matrices of the same token counts), per bidirectional model with at least
    :data:`~verification.trained.findings.MIN_INPUTS` inputs: macros ``\\WControlXDiff``,
    ``...DiffInterval``, ``...Word`` (X: Columns, Offdiagonal, Random; "-" where not compared),
    ``\\WControlSentence`` (the comparisons of W as one clause, or why none) and
    ``\\ControlComparisons``, ``\\ControlLevel``, ``\\ControlMinInputs``; and, on the models compared
    (``\\ControlsTestedModels``), the guard that the column-permuted share's interval lies below the
    shuffled one's and not above the random one's."""
    part.macro(str(found.comparisons), "control comparisons")
    part.macro(f"{100 * found.level:.1f}", "control level")
    part.macro(str(MIN_INPUTS), "control min inputs")
    part.macro(str(BOOTSTRAP_RESAMPLES), "trained bootstrap resamples")
    for name, m in found.models.items():
        if m.findings.causal:
            continue
        word, c = MODELS.get(name, name), m.controls
        if c.comparisons is None:
            for ref in ("columns", "offdiagonal", "random"):
                for key in ("diff", "diff interval", "word"):
                    part.macro("-", word, "control", ref, key)
            part.macro(f"{SHORT.get(name, name)}: {m.findings.inputs} inputs, too few to compare (at least "
                       f"{MIN_INPUTS})", word, "control sentence")
            continue
        clauses = []
        for cmp in c.comparisons:
            d, (lo, hi) = cmp.difference, cmp.decision.interval
            part.macro(f"{d:+.2f}", word, "control", cmp.reference, "diff")
            part.macro(f"[{lo:+.2f}, {hi:+.2f}]", word, "control", cmp.reference, "diff interval")
            part.macro(word_of(cmp), word, "control", cmp.reference, "word")
            clauses.append(f"{word_of(cmp)} {REFERENCE_WORDS[cmp.reference]} ({d:+.2f} [{lo:+.2f}, {hi:+.2f}])")
        part.macro(f"{SHORT.get(name, name)}: " + ", ".join(clauses), word, "control sentence")
    # the diagonal-mass sentence names the models it was tested on: those compared (bidirectional, enough inputs);
    # on each the column-permuted share's interval lies below the shuffled one's and not above the random one's
    tested = {name: m.controls for name, m in found.models.items() if not m.findings.causal and m.controls.comparisons}
    names = [SHORT.get(n, n) for n in tested]
    listed = "-" if not names else names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    part.macro(listed, "controls tested models")
    ok = bool(tested) and all(c.shares["columns"].hi < c.shares["offdiagonal"].lo and c.shares["columns"].lo <= c.random.hi
                              for c in tested.values())
    part.guard(ok, "controls diagonal mass", detail="; ".join(
        f"{n}: columns {c.shares['columns'].value:.2f} [{c.shares['columns'].lo:.2f}, {c.shares['columns'].hi:.2f}], "
        f"off-diagonal lower end {c.shares['offdiagonal'].lo:.2f}, random upper end {c.random.hi:.2f}"
        for n, c in tested.items()) or "no model compared")


def controls_part(part: Part, found: Findings) -> None:
    """The table ``trained-controls`` (D1's pooled equality share on the head mean beside its two
    controls and matched random matrices, Wilson intervals with the design effect of the inputs) and the data table
    ``trained-pairs`` (the kind of the maximising pair; every pair mutually self-dominant), with
    their macros per model word W: ``\\WControlReal`` / ``Columns`` / ``Offdiagonal`` (share) and
    ``...Interval``, ``\\WControlRandom(Interval)``, ``\\WEveryPairCells`` (k/N of the (input, layer)
    head means), ``\\WEveryPairInputsAll`` / ``...Some`` (inputs where it holds in every / some layer),
    ``\\WPairSpecial`` / ``Adjacent`` / ``Other`` (k/N of the head means) and ``\\WTightPairSpecial`` ...
    (of the tight ones); ``\\WModelsMeanWilson``: the Wilson interval the pooled head-mean share had
    without the design effect (verdicts counted as independent), for comparison."""
    from numerics.dobrushin.controls import GENERATOR

    rows, prows = [], []
    comparison_macros(part, found)
    for name, m in found.models.items():
        word, c = MODELS.get(name, name), m.controls
        row = [SHORT.get(name, name), "causal" if m.findings.causal else "bidirectional", c.means]
        for key, _ in CONTROLS:
            s = c.shares[key]
            row.append(value_interval(s))
            part.macro(ratio(s), word, "control", key)
            part.macro(interval_cell(s), word, "control", key, "interval")
        part.macro(interval_cell(c.real_wilson), word, "models mean Wilson")
        part.macro(ratio(c.random), word, "control random")
        part.macro(random_cell(c.random), word, "control random", "interval")
        every, inputs_all, inputs_some = (f"{s.k}/{s.n}" for s in (c.every_pair, c.inputs_all, c.inputs_some))
        part.macro(every, word, "every pair cells")
        part.macro(inputs_all, word, "every pair inputs all")
        part.macro(inputs_some, word, "every pair inputs some")
        rows.append(row + [f"{ratio(c.random)} {random_cell(c.random)}", every])
        kinds = [f"{c.pairs[k].k}/{c.pairs[k].n}" for k in PAIR_KINDS]
        tkinds = [f"{c.tight_pairs[k].k}/{c.tight_pairs[k].n}" for k in PAIR_KINDS]
        for kind, cell, tcell in zip(PAIR_KINDS, kinds, tkinds):
            part.macro(cell, word, "pair", kind)
            part.macro(tcell, word, "tight pair", kind)
        prows.append([SHORT.get(name, name), c.means] + kinds + tkinds + [every, inputs_all, inputs_some])
    camps = tuple(m.campaign for m in found.models.values())
    prov = ("campaigns " + ", ".join(camps) + f"; random baselines: campaign {found.baselines}; controls drawn by "
            f"{GENERATOR}, control seed 0 (numerics.dobrushin.controls); D1 verdicts exact; {CLUSTER_NOTE}")
    part.tables.append(Table("trained-controls", frame(rows, CONTROLS_COLUMNS),
        "Controls for D1's equality share (head-averaged attention, all tokens, pooled over layers and inputs, "
        "every verdict exact): the same matrices with their columns permuted (one uniform permutation per input) "
        "and with each row's off-diagonal entries shuffled (diagonal mass and row entropy kept), and random "
        "Dirichlet(1) matrices of the same token counts. Last column: head means on which every pair is mutually "
        "self-dominant, which forces equality. 95% " + CLUSTER_SHORT + "; causal models: every real verdict tight "
        "by the causal corollary.",
        prov, campaigns=camps + (found.baselines,), command=part.commands[0]))
    part.data_tables.append(Table("trained-pairs", frame(prows, PAIRS_COLUMNS),
        f"Which pair attains {DELTA_A} (the maximising pair the exact check reports) on the head-averaged attention, all "
        "tokens: a pair with a special token (CLS, SEP, BOS, ...), two adjacent tokens, or another pair; over every "
        "head mean and over the tight ones; and the head means on which every pair is mutually self-dominant, with "
        "the inputs on which that holds in every layer and in some layer.", prov, campaigns=camps,
        command=part.commands[0]))
