"""The Dobrushin family's part of the paper: Theorems D1/D2 on random row-stochastic matrices,
rendered from its findings (:func:`verification.dobrushin.findings.findings`: the stored campaign only,
never recomputed),
and there only the chunks of the plan it is given (the main job's, or a user's through ``attnbounds
paper --from "dobrushin ..."``: other families or sizes stored in the same campaign are never read);
every command it prints is the plan's ``command()``.

Tables: ``dobrushin-d1-share`` and ``dobrushin-d2-share`` (share of instances with exact equality,
family x n), ``dobrushin-summary`` (per family: instances, ranges of the shares, smallest strict
slack, violated / undecided). Figures: ``dobrushin-d1-frequency``, ``dobrushin-d2-frequency``
(share against n with 95% Wilson bands). Macros: every share per family and n
(``\\DOneShareDirichletNTwo``), and the ranges the prose quotes.
"""
from __future__ import annotations

from typing import Any, Optional

from verification.dobrushin.checks import CAUSAL_MARGIN, Plan
from verification.dobrushin.findings import Findings, findings
from verification.dobrushin.report import causal_provenance, provenance, share_cell
from verification.findings import Share
from verification.paper.notation import dobrushin as notation
from verification.report.part import Figure, MissingCampaign, Need, Part, Table
from verification.report.tables import fmt

CONTINUOUS = ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4")   # positive entries a.s.
ZEROS = ("sparse", "hard")                                                # exact zeros, not causal
LABELS = {"dirichlet": "Dirichlet(1)", "softmax-T0.25": "softmax T=0.25", "softmax-T1": "softmax T=1",
          "softmax-T4": "softmax T=4", "sparse": "sparse", "hard": "hard (one-hot rows)",
          "causal": "causal softmax"}


def needs(store: Any, plan: Plan) -> list[Need]:
    """The campaigns of ``plan`` (the main job's, or a user's: ``attnbounds paper --from "dobrushin
    ..."``) and every chunk of that plan (:meth:`Plan.chunks`), filled by ``plan.command()``."""
    cmd = plan.command()
    out = [Need("dobrushin", plan.campaign, frozenset(c.key for c in plan.chunks()), cmd)]
    if plan.causal_sizes():
        out.append(Need("dobrushin", plan.causal_campaign, frozenset(c.key for c in plan.causal_chunks()), cmd))
    return out


def share2(s: Share) -> str:
    """A share as a fixed two-decimal string ("-" without instances; "1 (forced)" where a theorem forces it)."""
    if s.forced:
        return "1 (forced)"
    return f"{s.value:.2f}" if s.n else "-"


def count(s: Share) -> str:
    """A share as its count, "k/n"."""
    return f"{s.k}/{s.n}"


def _pivot(found: Findings, which: str) -> Any:
    import pandas as pd

    sizes = found.sizes
    rows = [[LABELS.get(f, f)] + [share2(getattr(c, which)) if c is not None else "-"
                                  for c in (found.cell(f, n) for n in sizes)] for f in found.families]
    return pd.DataFrame(rows, columns=["family"] + [f"n={n}" for n in sizes])


def _range(span: Optional[tuple[float, float]]) -> tuple[str, str]:
    return (f"{span[0]:.2f}", f"{span[1]:.2f}") if span else ("-", "-")


def _curve(found: Findings, which: str, ylabel: str):
    series: dict = {}
    for c in found.cells:
        s = getattr(c, which)
        if s.n:
            lo, hi = (s.value, s.value) if s.forced else (s.lo, s.hi)      # forced: a point, no band
            series.setdefault(c.family, []).append((c.n, s.value, lo, hi))

    def draw(ax: Any) -> None:
        for f, pts in series.items():
            xs = [p[0] for p in pts]
            line, = ax.plot(xs, [p[1] for p in pts], "o-", ms=3, lw=1, label=LABELS.get(f, f))
            ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], color=line.get_color(), alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("$n$ (tokens)")
        ax.set_ylabel(ylabel)
        # seven families: the legend goes beside the plot, the figure widened to the text width for it
        ax.figure.set_size_inches(5.0, 2.9)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
    return draw


def paper_part(store: Any, plan: Plan) -> Part:
    """Tables, figures and macros of ``plan``'s random-matrix campaign (see the module docstring):
    the main job's plan, or a user's (``--from``), rendered from its findings."""
    import pandas as pd

    cmd = plan.command()
    found = findings(store, plan)
    if not found.cells:
        raise MissingCampaign(plan.campaign, cmd)
    cells = found.cells
    part = Part("dobrushin", commands=[cmd])
    prov = provenance(plan)

    for c in cells:
        part.macro(share2(c.d1), "D1 share", c.family, "n", c.n)
        part.macro(share2(c.d2), "D2 share", c.family, "n", c.n)
    part.macro(str(sum(c.d1.n for c in cells)), "D1 random instances")
    part.macro(str(sum(c.d2.n for c in cells)), "D2 random pairs")
    part.macro(str(len(found.families)), "random families")
    sizes = found.sizes
    part.macro(str(min(sizes)), "random smallest n")
    part.macro(str(max(sizes)), "random largest n")
    viol, und = sum(c.violated for c in cells), sum(c.undecided for c in cells)
    part.macro(str(viol), "random violated")
    part.macro(str(und), "random undecided")
    part.macro(str(sum(c.d1_exact for c in cells)), "D1 random exact path")
    # the prose's qualitative sentences (\Guard{Key}{...} in paper/sections/dobrushin.tex), checked here
    part.guard(viol == 0 and und == 0, "dobrushin no counterexample", detail=f"{viol} violated, {und} undecided")
    for name, fams, which, cond in (
            ("D1 continuous n two", CONTINUOUS, "d1", lambda n: n == 2),
            ("D1 continuous", CONTINUOUS, "d1", lambda n: n >= 3),
            ("D1 zeros", ZEROS, "d1", lambda n: True),
            ("D1 zeros large", ZEROS, "d1", lambda n: n >= 8),
            ("D2 zeros", ZEROS, "d2", lambda n: n >= 3),
            ("D2 hard", ("hard",), "d2", lambda n: n >= 3),
            ("D2 sparse", ("sparse",), "d2", lambda n: n >= 3),
            ("D2 sparse large", ("sparse",), "d2", lambda n: n >= 16),
            ("D2 causal", ("causal",), "d2", lambda n: n >= 3),
            ("D2 causal large", ("causal",), "d2", lambda n: n >= 8)):
        lo, hi = _range(found.span(which, fams, cond))
        part.macro(lo, name, "min")
        part.macro(hi, name, "max")
    causal_d1 = found.pooled("d1", ("causal",))
    part.macro(count(causal_d1), "D1 causal tight")
    part.guard(causal_d1.k == causal_d1.n > 0, "dobrushin D1 causal always tight",
               detail=f"{causal_d1.k} of {causal_d1.n} causal instances tight")
    continuous_d2 = found.pooled("d2", CONTINUOUS, lambda n: n >= 3)
    part.guard(continuous_d2.k == 0, "dobrushin D2 continuous never tight",
               detail=f"{continuous_d2.k} of {continuous_d2.n} positive pairs with n >= 3 tight")
    span = found.span("d1", CONTINUOUS, lambda n: n >= 3)
    part.guard(span is not None and round(span[0], 2) >= 0.1, "dobrushin D1 tight not rare",
               detail=f"smallest share of tight positive matrices with n >= 3: {_range(span)[0]} (the sentence needs "
                      "at least 0.10)")
    part.macro(count(found.pooled("d2", tuple(LABELS), lambda n: n == 2)), "D2 n two tight")
    part.macro(count(continuous_d2), "D2 continuous tight")
    full_sizes = [n for n in sizes if n >= 8 and all(c.d1.k == c.d1.n for c in found.select(ZEROS, lambda m: m == n))]
    part.macro(str(len(full_sizes)), "D1 zeros sizes all tight")
    part.macro(str(len([n for n in sizes if n >= 8])), "sizes from eight")

    if plan.causal_sizes():
        _causal(part, found, plan)
    part.tables.append(Table("dobrushin-d1-share", _pivot(found, "d1"),
                             notation.d1_share_caption(min(c.d1.n for c in cells), max(c.d1.n for c in cells)), prov))
    part.tables.append(Table("dobrushin-d2-share", _pivot(found, "d2"), notation.D2_SHARE_CAPTION, prov))
    rows = []
    for f in found.families:
        mine = found.select((f,))
        slacks = [c.min_slack for c in mine if c.min_slack is not None]
        rows.append([LABELS.get(f, f), sum(c.d1.n for c in mine), "-".join(_range(found.span("d1", (f,)))),
                     count(found.pooled("d1_first", (f,))), sum(c.d1_exact for c in mine), sum(c.d2.n for c in mine),
                     "-".join(_range(found.span("d2", (f,)))), fmt(min(slacks)) if slacks else "-",
                     sum(c.violated for c in mine), sum(c.undecided for c in mine)])
    cols = ["family", "D1 instances", "D1 equality share (range over n)", "D1 tight only via token 0",
            "D1 decided on the exact path", "D2 pairs", "D2 equality share (range over n)",
            "smallest strict D1 slack", "violated", "undecided"]
    part.tables.append(Table("dobrushin-summary", pd.DataFrame(rows, columns=cols),
                             "Per family, over every size: instances, the range of the equality shares, how "
                             "many D1 verdicts needed the exact rational path, the smallest strict slack.", prov))
    part.figures.append(Figure("dobrushin-d1-frequency", _curve(found, "d1", "share with D1 equality"),
                               "Theorem D1 on random matrices: share of instances with exact equality against n "
                               "(95% Wilson bands).", prov))
    part.figures.append(Figure("dobrushin-d2-frequency", _curve(found, "d2", "share with D2 equality"),
                               "Theorem D2 on random pairs: share with exact equality against n (95% Wilson bands).",
                               prov))
    return part


CAUSAL_PAPER_COLUMNS = ["$n$", "tight (campaign)", notation.PREDICTED_PI_N_SQUARED, "binomial $p$ (Holm)",
                        "tight (check)", "verdicts predicted", "agreement"]


def _causal(part: Part, found: Findings, plan: Plan) -> None:
    """The causal-D2 prediction (table ``dobrushin-causal-share``) and the numbers the prose quotes."""
    if not found.causal:
        raise MissingCampaign(plan.causal_campaign, plan.command())
    rows = [[s.n, share_cell(s.campaign), f"{s.predicted.value:.3f} [{s.predicted.lo:.3f}, {s.predicted.hi:.3f}]",
             f"{s.binomial.p:.3g}" if s.binomial else "-", share_cell(s.check),
             count(s.verdicts_predicted), s.agreement.outcome] for s in found.causal]
    pairs = ", ".join(sorted({str(s.campaign.n) for s in found.causal}))
    check_pairs = ", ".join(sorted({str(s.check.n) for s in found.causal}))
    part.tables.append(Table.from_rows(
        "dobrushin-causal-share", rows, CAUSAL_PAPER_COLUMNS,
        notation.causal_caption(pairs, check_pairs, CAUSAL_MARGIN), causal_provenance(plan),
        campaigns=(plan.campaign, plan.causal_campaign)))
    by_n = {s.n: s for s in found.causal}
    for n in (3, 4, 5):              # the sizes the prose quotes ("-" where the plan has no such size)
        part.macro(f"{by_n[n].predicted.value:.3f}" if n in by_n else "-", "D2 causal predicted", "n", n)
    agrees = sum(s.verdicts_predicted.k for s in found.causal)
    pairs = sum(s.verdicts_predicted.n for s in found.causal)
    part.macro(f"{agrees}/{pairs}", "D2 causal verdicts predicted")
    supported = sum(s.agreement.outcome == "supported" for s in found.causal)
    part.macro(f"{supported}/{len(found.causal)}", "D2 causal shares agree")
    part.macro(f"{CAUSAL_MARGIN:g}", "D2 causal margin")
    part.macro(", ".join(map(str, sorted(by_n))), "D2 causal check sizes")
    part.guard(agrees == pairs > 0, "dobrushin D2 causal verdicts all predicted",
               detail=f"the condition predicts {agrees} of {pairs} exact verdicts")
    part.guard(supported == len(found.causal) > 0, "dobrushin D2 causal shares agree",
               detail=f"{supported} of {len(found.causal)} sizes with the shares shown equivalent")
