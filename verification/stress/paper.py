"""The stress family's part of the paper, read from the stored campaigns only: the sweep of
Theorem D1 (``stress.dobrushin.factor``) and the guided search (``stress-search.dobrushin.factor``).

Table ``stress-factor`` (per family and n: instances, tight share, exact-path verdicts, smallest
strict slack, violations), figures ``stress-factor-slack`` (histogram of log10 strict slack) and
``stress-factor-share`` (the tight share against n per family),
macros: instances, chunks, violated, undecided, the smallest strict slack, the tight share per
cell, bytes per stored chunk, and from the search its budget and what it found.

And the rollout sweep (``stress.dobrushin.rollout``, Theorem D2 at every step of attention
rollout): table ``stress-rollout`` and the ``StressRollout...`` macros.

Every function here reads the plan it is given (a :class:`verification.stress.checks.Plan`): the
main job's (:meth:`~verification.stress.checks.Plan.for_verify`), or a user's own sweep
(``attnbounds paper --from "stress THEOREM [options]"``), which replaces the main job's sweep of its
theorem; a theorem the plan has no sweep of is read from the main job's sweep at the plan's seed,
and so is the guided search when the plan has none (:meth:`~verification.stress.checks.Plan.shown_sweep`,
:meth:`~verification.stress.checks.Plan.shown_search`).
:func:`needs` asks for exactly those chunks, each with its plan's ``command()``.
"""
from __future__ import annotations

from typing import Any

from verification.paper.notation import stress as N
from verification.report.figures import COLUMN_LOW
from verification.report.part import Figure, MissingCampaign, Need, Part, Table
from verification.report.tables import fmt
from verification.stress import checks
from verification.stress.checks.campaigns import sampler_text
from verification.stress.checks.plan import chunk_size
from verification.stress.checks.summaries import EDGES
from verification.stress.findings import Search, Sweep, findings
from verification.stress.findings.cells import STEP_VERDICTS
from verification.stress.report import cell_table


def share_curve(sweep: Sweep):
    """The figure ``stress-factor-share``: the tight share against n per family with its 95% Wilson
    bars (each cell's :class:`~verification.findings.Share`)."""
    lines = {}
    for c in sorted(sweep.cells, key=lambda c: (c.family, c.n)):
        share = c.counts.tight
        lines.setdefault(c.family, []).append((c.n, share.value, share.lo, share.hi))

    def draw(ax: Any) -> None:
        for i, (family, pts) in enumerate(lines.items()):
            xs = [p[0] * (1 + 0.03 * (i - 1.5)) for p in pts]          # offset the families a little along n
            ys = [p[1] for p in pts]
            ax.errorbar(xs, ys, yerr=[[y - p[2] for y, p in zip(ys, pts)], [p[3] - y for y, p in zip(ys, pts)]],
                        fmt="o-", ms=3, capsize=2,
                        label=family.replace("softmax-T", "softmax, T = ").replace("dirichlet", "Dirichlet(1)"))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("$n$ (tokens)")
        ax.set_ylabel("share with D1 equality")
        ax.figure.set_size_inches(4.6, 2.9)    # the legend beside the plot, at the figure's font size:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)  # never over data
    return draw


# the sweep's table in the paper: these columns of the report's table (verification.stress.report.cell_table)
FACTOR_COLUMNS = ["family", "n", "instances", "chunks", "holds", "tight", "tight share [95%]", "violated",
                  "exact path", "smallest strict slack"]


def check_plan(plan: Any) -> None:
    """``attnbounds paper --from "stress ..."``: the paper's stress section shows the sweeps of
    Theorem D1 and of the rollout chain; a search or another theorem's sweep is refused."""
    from theory.errors import InvalidInput

    if plan.search is not None:
        raise InvalidInput("the paper reads a sweep; its guided search stays the main job's (drop --search)")
    for s in plan.sweeps:
        if s.spec.kind == "expr":       # your own theorem: its own document (verification.paper.own)
            continue
        if s.theorem not in (checks.THEOREM, checks.ROLLOUT):
            raise InvalidInput(f"the paper's stress section shows the sweeps of {checks.THEOREM} and "
                               f"{checks.ROLLOUT}, not {s.theorem}")


def needs(store: Any, plan: checks.Plan) -> list[Need]:
    """The sweep of Theorem D1, the guided search and the rollout sweep that ``plan``'s part reads
    (:meth:`~verification.stress.checks.Plan.shown_sweep`, ``shown_search``), each with the chunk
    keys and the command of its plan."""
    def need(read: Any) -> Need:
        return Need("stress", read.campaign, frozenset(read.chunk_keys()), read.command())

    own = [need(s) for s in plan.sweeps if s.spec.kind == "expr"]     # a theorem over theory.expr: its own
    return [need(plan.shown_sweep(checks.THEOREM)), need(plan.shown_search()),
            need(plan.shown_sweep(checks.ROLLOUT))] + own


def own_theorem(plan: checks.Plan) -> bool:
    """Whether ``plan`` sweeps a theorem over theory.expr (a user's): ``paper --from`` then writes the
    document of that run alone (:mod:`verification.paper.own`), whatever else the store holds."""
    return any(s.spec.kind == "expr" for s in plan.sweeps)


def rollout_part(part: Part, sweep: Sweep) -> None:
    """Add the rollout sweep the plan shows (:meth:`~verification.stress.checks.Plan.shown_sweep`)
    to ``part``: its table and macros."""
    import pandas as pd

    if not sweep.cells or not sweep.complete:   # all of the plan's chunks
        raise MissingCampaign(sweep.campaign, sweep.command)
    part.commands.append(sweep.command)
    t = sweep.total
    table = []
    steps = {k: 0 for k in STEP_VERDICTS}
    for c in sweep.cells:
        later = c.later_steps()                 # steps l >= 2
        got = {k: later.count(k) for k in steps}
        steps = {k: steps[k] + got[k] for k in steps}
        table.append([c.family, c.n, c.layers, c.counts.instances, sum(got.values()), got["holds"], got["tight"],
                      got["violated"], got["undecided"], slack_text(c.counts.smallest)])
    frame = pd.DataFrame(table, columns=["family", "n", "layers", "stacks", "steps checked", "strict", "tight",
                                         "violated", "undecided", "smallest strict slack"])
    part.tables.append(Table("stress-rollout", frame,
                             f"Theorem D2 at every step {N.LATER_STEPS} of attention rollout, {N.D2_STEP} with "
                             f"{N.A_HAT}, on random stacks of $L$ layers: verdict counts over all steps and the "
                             "smallest certified strict slack.",
                             f"campaign {sweep.campaign}; {sampler_text(sweep.campaign, rollout=True)}; per-chunk summaries; "
                             "verdicts exact",
                             campaigns=(sweep.campaign,), command=sweep.command))
    part.macro(int(t.instances), "stress rollout instances")
    part.macro(int(sum(steps.values())), "stress rollout steps")
    for k, v in steps.items():
        part.macro(int(v), "stress rollout", k)
    part.macro(str(max(c.layers for c in sweep.cells)), "stress rollout max layers")
    part.macro(slack_text(t.smallest), "stress rollout min slack")


def slack_text(smallest: Any) -> str:
    """The smallest strict slack as the paper prints it, ``-`` where there is none."""
    return fmt(smallest.value) if smallest is not None else "-"


def paper_part(store: Any, plan: checks.Plan) -> Part:
    """Tables, figure and macros of ``plan``'s stress section (see the module docstring), rendered
    from the findings of what it shows (:meth:`~verification.stress.checks.Plan.shown`)."""
    found = findings(store, plan.shown())
    sweep = found.sweep(checks.THEOREM)
    if not sweep.cells or not sweep.complete:   # all of the plan's chunks
        raise MissingCampaign(sweep.campaign, sweep.command)
    asked = plan.shown_sweep(checks.THEOREM)
    part = Part("stress", commands=[sweep.command])
    t = sweep.total
    sizes = sorted({c.n for c in sweep.cells})
    prov = (f"campaign {sweep.campaign}; chunks of {', '.join(f'{chunk_size(n)} (n = {n})' for n in sizes)}; "
            f"{sampler_text(sweep.campaign)}; per-chunk summaries, kept instances in full; verdicts exact")
    part.macro(int(t.instances), "stress instances")
    part.macro(int(asked.instances), "stress instances requested")   # the command's --instances; chunks round it up
    part.macro(str(t.chunks), "stress chunks")
    part.macro(", ".join(f.replace("softmax-T", "softmax rows at T = ").replace("dirichlet", "Dirichlet(1) rows")
                         for f in asked.families), "stress families")
    part.macro(", ".join(map(str, sorted(asked.sizes))), "stress sizes")
    part.macro(str(t.count("violated")), "stress violated")
    part.macro(str(t.count("undecided")), "stress undecided")
    part.guard(t.count("violated") == 0 and t.count("undecided") == 0, "stress sweep no counterexample",
               detail=f"{t.count('violated')} violated, {t.count('undecided')} undecided")
    part.macro(str(t.exact), "stress exact path")
    part.macro("none did" if t.exact == 0 else f"{t.exact} {'verdict' if t.exact == 1 else 'verdicts'} did",
               "stress exact path sentence")
    part.macro(slack_text(t.smallest), "stress min slack")
    part.macro(round(sweep.payload_bytes / max(t.chunks, 1)), "stress bytes per chunk")
    for c in sweep.cells:
        part.macro(f"{c.counts.tight.value:.3f}", "stress tight share", c.family, "n", c.n)
    view = cell_table(sweep).select(
        FACTOR_COLUMNS, provenance=prov,     # the report's table, its name (stress-factor): its columns
        caption="Theorem D1 stress sweep: per family and n, the verdict counts of every instance "
                "(from per-chunk summaries), the share with exact equality (95% Wilson interval), "
                "verdicts that needed the exact path, and the smallest certified strict slack.")
    frame = view.frame.copy()
    frame["smallest strict slack"] = [fmt(x) for x in frame["smallest strict slack"]]
    view.frame = frame.infer_objects()      # integer columns as integers: right-aligned in LaTeX
    part.tables.append(view)
    hist = list(t.hist)

    def draw(ax: Any) -> None:
        xs = [EDGES[0] - 0.5] + [float(e) for e in EDGES]
        ax.bar(xs, hist, width=0.45, align="edge", color="C0")
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel(f"{N.LOG10} of the strict slack (leftmost bin: below {N.SLACK_FLOOR})")
        ax.set_ylabel("instances")
    part.figures.append(Figure("stress-factor-slack", draw,
                               "Distribution of the certified strict slack of Theorem D1 over the sweep "
                               "(tight instances, slack exactly 0, are counted in the table).", prov))
    part.figures.append(Figure("stress-factor-share", share_curve(sweep),
                               "Theorem D1 on random matrices, the large campaign: share of instances with exact "
                               "equality against $n$ per family (95% Wilson bars).",
                               prov, size=COLUMN_LOW))
    big = [c.counts.tight for c in sweep.cells if c.n >= 3]
    shares = [s.value for s in big]
    part.macro(f"{min(shares):.2f}" if shares else "-", "stress share min")
    part.macro(f"{max(shares):.2f}" if shares else "-", "stress share max")
    half = [(s.hi - s.lo) / 2 for s in big]
    part.macro(f"{max(half):.3f}" if half else "-", "stress share half width")
    per = [c.counts.instances for c in sweep.cells if c.n >= 3]
    part.macro(f"{min(per):,}" if per else "-", "stress share per cell")
    part.macro(str(min(c.n for c in sweep.cells if c.n >= 3)) if big else "-", "stress share smallest n")
    part.macro(str(max(c.n for c in sweep.cells if c.n >= 3)) if big else "-", "stress share largest n")
    chance_part(part, sweep)
    two = [c.counts.tight.value for c in sweep.cells if c.n == 2]
    part.macro(f"{min(two):.2f}-{max(two):.2f}" if two else "-", "stress share n two")
    part.macro(f"{t.tight.value:.3f}", "stress tight share")
    part.macro(f"[{t.tight.lo:.3f}, {t.tight.hi:.3f}]", "stress tight interval")
    search_part(part, found.search)
    rollout_part(part, found.sweep(checks.ROLLOUT))
    return part


def chance_part(part: Part, sweep: Any) -> None:
    """The chance level at large n, from the data per family: ``\\StressChanceLargestN`` (each family's
    share with its Wilson interval at the sweep's largest n) and the guard ``StressChanceFamilyDependent``
    (two families there whose intervals are disjoint: the level depends on the family)."""
    if not sweep.cells:
        return
    largest = max(c.n for c in sweep.cells)
    at = [c for c in sweep.cells if c.n == largest]
    label = lambda f: f.replace("softmax-T", "softmax, temperature ").replace("dirichlet", "Dirichlet(1)")  # noqa: E731
    part.macro(str(largest), "stress chance n")
    part.macro("; ".join(f"{c.counts.tight.value:.3f} [{c.counts.tight.lo:.3f}, {c.counts.tight.hi:.3f}] ({label(c.family)})"
                         for c in at), "stress chance largest n")
    apart = [(a.family, b.family) for a in at for b in at if a.counts.tight.hi < b.counts.tight.lo]
    part.guard(bool(apart), "stress chance family dependent",
               detail=", ".join(f"{a} below {b}" for a, b in apart) or "every interval overlaps")


def search_part(part: Part, search: Search) -> None:
    """Add the guided search the plan shows (:meth:`~verification.stress.checks.Plan.shown_search`)
    to ``part``: its macros and its guard."""
    if not search.complete:
        raise MissingCampaign(search.campaign, search.command)
    part.commands.append(search.command)
    if search.found:
        part.macro(str(search.found), "stress search found")
        part.macro(str(search.tight), "stress search tight")
        part.macro(str(search.violated), "stress search violated")
        part.macro(fmt(search.smallest) if search.smallest is not None else "-", "stress search min slack")
        part.macro(str(search.budget), "stress search budget")
    part.guard(search.bad == 0, "stress search no counterexample",
               detail=f"{search.bad} found instances violated or undecided")
