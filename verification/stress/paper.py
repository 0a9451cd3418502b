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

from verification.report.part import Figure, MissingCampaign, Need, Part, Table
from verification.stats import wilson
from verification.report.tables import fmt
from verification.stress import checks
from verification.stress.checks.plan import chunk_size, sampler_text
from verification.stress.checks.summaries import EDGES
from verification.stress.report import cell_parts, cell_table, tally, total

def share_curve(cells: dict):
    """The figure ``stress-factor-share``: the tight share against n per family with 95% Wilson
    bars. (No band of a "range quoted before": the 24-30% once drawn here had no source that could be
    identified, so it is neither drawn nor compared.)"""
    lines = {}
    for cell, c in sorted(cells.items(), key=lambda kv: cell_parts(kv[0])[:2]):
        family, n, _ = cell_parts(cell)
        k = c.count("tight")
        lo, hi = wilson(k, c.n)
        lines.setdefault(family, []).append((n, k / c.n, lo, hi))

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


def rollout_part(part: Part, store: Any, plan: checks.Plan) -> None:
    """Add the rollout sweep ``plan`` shows (:meth:`~verification.stress.checks.Plan.shown_sweep`)
    to ``part``: its table and macros."""
    import pandas as pd

    sweep = plan.shown_sweep(checks.ROLLOUT)
    campaign, cmd = sweep.campaign, sweep.command()
    cells = tally(store, campaign, sweep.stored_as, sweep.chunk_keys())
    if not cells or not set(sweep.chunk_keys()) <= store.done_chunks(campaign):   # all of the plan's chunks
        raise MissingCampaign(campaign, cmd)
    part.commands.append(cmd)
    t = total(cells)
    table = []
    steps = {"holds": 0, "tight": 0, "violated": 0, "undecided": 0}
    for cell, c in sorted(cells.items(), key=lambda kv: (cell_parts(kv[0])[0], cell_parts(kv[0])[1],
                                                         cell_parts(kv[0])[2])):
        family, n, L = cell_parts(cell)
        got = {k: sum(st["counts"].get(k, 0) for st in c.steps[1:]) for k in steps}   # steps l >= 2
        steps = {k: steps[k] + got[k] for k in steps}
        table.append([family, n, L, c.n, sum(got.values()), got["holds"], got["tight"], got["violated"],
                      got["undecided"], fmt(c.min_slack) if c.min_slack is not None else "-"])
    frame = pd.DataFrame(table, columns=["family", "n", "layers", "stacks", "steps checked", "strict", "tight",
                                         "violated", "undecided", "smallest strict slack"])
    part.tables.append(Table("stress-rollout", frame,
                             r"Theorem D2 at every step $l \ge 2$ of attention rollout, $\delta(R_l) \le "
                             r"\delta(\hat A_l)\,\delta(R_{l-1})$ with $\hat A_l = (I + A_l)/2$, on random stacks of "
                             "$L$ layers: verdict counts over all steps and the smallest certified strict slack.",
                             f"campaign {campaign}; {sampler_text(campaign, rollout=True)}; per-chunk summaries; "
                             "verdicts exact",
                             campaigns=(campaign,), command=cmd))
    part.macro(int(t.n), "stress rollout instances")
    part.macro(int(sum(steps.values())), "stress rollout steps")
    for k, v in steps.items():
        part.macro(int(v), "stress rollout", k)
    part.macro(str(max(cell_parts(c)[2] for c in cells)), "stress rollout max layers")
    part.macro(fmt(t.min_slack) if t.min_slack is not None else "-", "stress rollout min slack")


def paper_part(store: Any, plan: checks.Plan) -> Part:
    """Tables, figure and macros of ``plan``'s stress section (see the module docstring)."""
    sweep = plan.shown_sweep(checks.THEOREM)
    campaign, cmd = sweep.campaign, sweep.command()
    cells = tally(store, campaign, sweep.stored_as, sweep.chunk_keys())
    if not cells or not set(sweep.chunk_keys()) <= store.done_chunks(campaign):   # all of the plan's chunks
        raise MissingCampaign(campaign, cmd)
    part = Part("stress", commands=[cmd])
    t = total(cells)
    sizes = sorted({int(c.split("/n")[1]) for c in cells})
    prov = (f"campaign {campaign}; chunks of {', '.join(f'{chunk_size(n)} (n = {n})' for n in sizes)}; "
            f"{sampler_text(campaign)}; per-chunk summaries, kept instances in full; verdicts exact")
    part.macro(int(t.n), "stress instances")
    part.macro(int(sweep.instances), "stress instances requested")   # the command's --instances; chunks round it up
    part.macro(str(t.chunks), "stress chunks")
    part.macro(", ".join(f.replace("softmax-T", "softmax rows at T = ").replace("dirichlet", "Dirichlet(1) rows")
                         for f in sweep.families), "stress families")
    part.macro(", ".join(map(str, sorted(sweep.sizes))), "stress sizes")
    part.macro(str(t.count("violated")), "stress violated")
    part.macro(str(t.count("undecided")), "stress undecided")
    part.guard(t.count("violated") == 0 and t.count("undecided") == 0, "stress sweep no counterexample",
               detail=f"{t.count('violated')} violated, {t.count('undecided')} undecided")
    part.macro(str(t.exact), "stress exact path")
    part.macro("here none did" if t.exact == 0 else f"here {t.exact} {'verdict' if t.exact == 1 else 'verdicts'} did",
               "stress exact path sentence")
    part.macro(fmt(t.min_slack) if t.min_slack is not None else "-", "stress min slack")
    part.macro(round(store.payload_bytes(campaign, sweep.chunk_keys()) / max(t.chunks, 1)), "stress bytes per chunk")
    for cell, c in cells.items():
        family, n = cell.split("/n")
        part.macro(f"{c.count('tight') / c.n:.3f}", "stress tight share", family, "n", n)
    view = cell_table(cells, campaign, checks.THEOREM, cmd).select(
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
        ax.set_xlabel(r"$\log_{10}$ of the strict slack (leftmost bin: below $10^{-18}$)")
        ax.set_ylabel("instances")
    part.figures.append(Figure("stress-factor-slack", draw,
                               "Distribution of the certified strict slack of Theorem D1 over the sweep "
                               "(tight instances, slack exactly 0, are counted in the table).", prov))
    part.figures.append(Figure("stress-factor-share", share_curve(cells),
                               "Theorem D1 on random matrices, the large campaign: share of instances with exact "
                               "equality against $n$ per family (95% Wilson bars).",
                               prov))
    big = {cell: c for cell, c in cells.items() if cell_parts(cell)[1] >= 3}
    shares = [c.count("tight") / c.n for c in big.values()]
    part.macro(f"{min(shares):.2f}" if shares else "-", "stress share min")
    part.macro(f"{max(shares):.2f}" if shares else "-", "stress share max")
    half = [(lambda lo, hi: (hi - lo) / 2)(*wilson(c.count("tight"), c.n)) for c in big.values()]
    part.macro(f"{max(half):.3f}" if half else "-", "stress share half width")
    per = [c.n for c in big.values()]
    part.macro(f"{min(per):,}" if per else "-", "stress share per cell")
    part.macro(str(min(cell_parts(c)[1] for c in big)) if big else "-", "stress share smallest n")
    part.macro(str(max(cell_parts(c)[1] for c in big)) if big else "-", "stress share largest n")
    two = [c.count("tight") / c.n for cell, c in cells.items() if cell_parts(cell)[1] == 2]
    part.macro(f"{min(two):.2f}-{max(two):.2f}" if two else "-", "stress share n two")
    tight, n = t.count("tight"), t.n
    lo, hi = wilson(tight, n)
    part.macro(f"{tight / n:.3f}", "stress tight share")
    part.macro(f"[{lo:.3f}, {hi:.3f}]", "stress tight interval")

    main = plan.shown_search()
    sc, wanted = main.campaign, main.chunk_keys()
    found = [r for r in store.records(sc, checks.THEOREM) if r["chunk"] in wanted]   # the plan's search only
    if not wanted <= store.done_chunks(sc):
        raise MissingCampaign(sc, main.command())
    part.commands.append(main.command())
    budget = main.budget
    if found:
        part.macro(str(len(found)), "stress search found")
        part.macro(str(sum(r["verdict"] == "tight" for r in found)), "stress search tight")
        part.macro(str(sum(r["verdict"] == "violated" for r in found)), "stress search violated")
        strict = [r["slack"] for r in found if r["verdict"] == "holds" and r["slack"] is not None]
        part.macro(fmt(min(strict)) if strict else "-", "stress search min slack")
        part.macro(str(budget), "stress search budget")
    bad = sum(r["verdict"] in ("violated", "undecided") for r in found)
    part.guard(bad == 0, "stress search no counterexample", detail=f"{bad} found instances violated or undecided")
    rollout_part(part, store, plan)
    return part
