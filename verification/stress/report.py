"""Stress campaigns, rendered: the findings of a plan's sweeps (:mod:`verification.stress.findings`)
as tables (Markdown, CSV) and console lines, the progress line while a sweep runs, what a stored
chunk costs on disk, and the texts of a run of a user's theorem (its counterexample, a refutation,
an equality condition that disagrees with exact arithmetic, its ``--json`` object, its document's
lines). Renders stored values only; never recomputes.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Mapping, Optional

from verification.findings import Share
from verification.report.tables import Table, print_table
from verification.stress.checks.campaigns import sampler_text
from verification.stress.checks.plan import cell_chunk_size
from verification.stress.checks.summaries import Merged
from verification.stress.findings import Findings, Sweep, findings, sweep_findings
from verification.stress.findings.cells import STEP_VERDICTS, VERDICTS, Condition, Counts
from verification.stress.findings.counterexamples import Counterexample, Mismatch, Refutation

COLUMNS = ["family", "n", "instances", "chunks", "holds", "tight", "tight share [95%]", "violated",
           "undecided", "not applicable", "exact path", "smallest strict slack", "at (chunk, index)"]
STEP_COLUMNS = ["family", "n", "layers", "step l", "holds", "tight", "violated", "undecided",
                "smallest strict slack", "at (chunk, index)"]


def share_cell(share: Share) -> str:
    """A share as its table cell: ``0.262 [0.253, 0.271]`` (the share and its interval), ``-`` of none."""
    return f"{share.value:.3f} [{share.lo:.3f}, {share.hi:.3f}]" if share.n else "-"


def columns(sweep: Sweep) -> list[str]:
    """The columns of the sweep's table: :data:`COLUMNS` (rollout cells: ``layers`` after ``n``; a
    tokens matrix: ``d``), and a column for every other verdict a summary counts, after ``not applicable``."""
    cols = COLUMNS[:2] + ["layers"] + COLUMNS[2:] if sweep.rollout else list(COLUMNS)
    if any(c.d is not None for c in sweep.cells):
        cols = cols[:2] + ["d"] + cols[2:]
    at = cols.index("not applicable") + 1
    return cols[:at] + sweep.verdicts()[len(VERDICTS):] + cols[at:]


def rows(sweep: Sweep) -> list[list[Any]]:
    """One row per cell (:func:`columns`): its verdict columns add up to its instances."""
    extra = sweep.verdicts()[len(VERDICTS):]
    out = []
    for c in sweep.cells:
        k = c.counts
        out.append([c.family, c.n] + ([c.layers] if c.layers is not None else []) + ([c.d] if c.d is not None else [])
                   + [k.instances, k.chunks, k.count("holds"), k.count("tight"), share_cell(k.tight),
                      k.count("violated"), k.count("undecided"), k.count("not-applicable")]
                   + [k.count(v) for v in extra] + [k.exact] + smallest_cells(k.smallest))
    return out


def smallest_cells(smallest: Any) -> list[Any]:
    """The smallest strict slack and ``chunk, index`` (None and ``-`` where there is none)."""
    return [None, "-"] if smallest is None else [smallest.value, f"{smallest.chunk}, {smallest.index}"]


def step_rows(sweep: Sweep) -> list[list[Any]]:
    """Rollout campaigns: one row per cell and step l (Theorem D2 for Ahat_l and R_{l-1})."""
    return [[c.family, c.n, c.layers, l + 1] + [st.verdicts.count(v) for v in STEP_VERDICTS] + smallest_cells(st.smallest)
            for c in sweep.cells for l, st in enumerate(c.steps)]


def table_name(target: str) -> str:
    """The table of a sweep of ``target``, named as the paper names it: ``stress-`` and the theorem
    id without its family (``dobrushin.``), dots as hyphens.

    >>> table_name("dobrushin.factor"), table_name("dobrushin.product.causal")
    ('stress-factor', 'stress-product-causal')
    """
    family, _, rest = target.partition(".")
    return "stress-" + (rest if family == "dobrushin" and rest else target).replace(".", "-")


def cell_table(sweep: Sweep) -> Table:
    """The sweep's table :func:`table_name` (``stress-factor`` for ``dobrushin.factor``): one row
    per cell (:func:`columns`: a column for every verdict counted; rollout cells: ``layers`` after
    ``n``), the numbers as stored (the paper selects its columns by name)."""
    return Table.from_rows(table_name(sweep.theorem), rows(sweep), columns(sweep),
                           f"Stress sweep of {sweep.theorem}: campaign {sweep.campaign}", provenance(sweep),
                           campaigns=(sweep.campaign,), command=sweep.command)


def step_table(sweep: Sweep) -> Table:
    """Rollout campaigns: the table ``<table_name>-steps``, one row per cell and step l."""
    return Table.from_rows(f"{table_name(sweep.theorem)}-steps", step_rows(sweep), STEP_COLUMNS,
                           f"Theorem D2 at every rollout step: campaign {sweep.campaign}", provenance(sweep),
                           campaigns=(sweep.campaign,), command=sweep.command)


def provenance(sweep: Sweep) -> str:
    """The campaign, its chunk sizes (as stored), how its instances were drawn (the sampler its version names)."""
    sizes = sorted({(c.n, c.layers) for c in sweep.cells}, key=lambda nl: (nl[0], nl[1] or 0))
    held = {(c.n, c.layers): c.counts.instances // c.counts.chunks for c in sweep.cells if c.counts.chunks}
    return (f"campaign {sweep.campaign}; chunks of "
            f"{', '.join(f'{held.get((n, L)) or cell_chunk_size(n, L)} at n = {n}' + (f', L = {L}' if L else '') for n, L in sizes)}; "
            f"{sampler_text(sweep.campaign, sweep.rollout)}; verdicts exact")


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> Findings:
    """Every sweep of ``plan`` (:class:`verification.stress.checks.Plan`): its tables under
    ``out_dir/tables`` and on the console, over exactly the sweep's chunks (:func:`report_sweep`);
    the plan's findings."""
    found = findings(store, plan)
    for sweep in found.sweeps:
        report_sweep(sweep, Path(out_dir) / "tables", console)
    return found


def report_sweep(sweep: Sweep, out_dir: Path, console: Any) -> None:
    """Print and write the sweep's table (:func:`cell_table`; a rollout sweep also its per-step
    table, :func:`step_table`), its total, its equality condition, its first kept instances."""
    if not sweep.cells:
        return
    tables = [cell_table(sweep)] + ([step_table(sweep)] if sweep.rollout else [])
    for table in tables:
        print_table(console, table.rows(), table.columns(), table.caption)
        table.write(out_dir)
    t = sweep.total
    console.print(f"{t.instances:,} instances in {t.chunks:,} chunks: {counts_line(t)}")
    if sweep.condition is not None:
        console.print(condition_line(sweep.condition), markup=False)
    for k in sweep.kept:
        console.print(f"  kept {k.instance}: {k.verdict} ({k.why}), slack {k.slack!r}")


def line(instances: int, counts: Mapping[str, int], smallest: Optional[float]) -> str:
    """``holds 73.9% tight 26.1% violated 0 undecided 0, min slack 3.10e-07``."""
    def count(k: str) -> int:
        return counts.get(k, 0)

    shares = " ".join(f"{k} {100 * count(k) / instances:.1f}%" for k in ("holds", "tight") if instances)
    bad = f"violated {count('violated')} undecided {count('undecided')}" + (
        f" not applicable {count('not-applicable')}" if count("not-applicable") else "")
    ms = "-" if smallest is None else f"{smallest:.2e}"
    return f"{shares} {bad}, min slack {ms}"


def counts_line(t: Counts) -> str:
    """:func:`line` of a sweep's counts."""
    return line(t.instances, t.verdicts.counts, None if t.smallest is None else t.smallest.value)


class Progress:
    """The progress line of a running sweep: instances/s, verdict shares, smallest slack so far
    (merged from each stored chunk's summary); ``status`` for :func:`verification.campaign.run`."""

    def __init__(self, theorem: str):
        self.theorem = theorem
        self.tally = Merged()
        self.start = time.perf_counter()

    def __call__(self, chunk: Any, records: Any) -> str:
        body = getattr(records, "summaries", {}).get(self.theorem)
        if body is not None:
            self.tally.add(chunk.key, body)
        rate = self.tally.n / max(time.perf_counter() - self.start, 1e-9)
        return f"{rate:,.0f} inst/s, {line(self.tally.n, self.tally.counts, self.tally.min_slack)}"


def store_bytes(path: str) -> Optional[int]:
    """Size on disk of a store file (with its write-ahead log), None for ``:memory:``."""
    if path == ":memory:":
        return None
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


# -- a user's theorem: its counterexample, a refutation, its equality condition, --json, its document --
def counterexample_text(cex: Counterexample) -> str:
    """The counterexample as printed: each matrix's rows of exact rationals, both sides as the
    statement writes them."""
    lines = [f"simplest kept counterexample ({cex.instance}), exact"
             + instance_lines(cex.values, stochastic_names(cex.theorem))]
    lines.append(f"  lhs = {cex.lhs}, rhs = {cex.rhs}: lhs {cex.relation} rhs is false (re-checked in "
                 "exact arithmetic)")
    return "\n".join(lines)


def counterexample_sides(cex: Counterexample) -> dict:
    """The exact sides of a counterexample as the statement writes them: ``{"lhs", "relation", "rhs"}``."""
    return {"lhs": cex.lhs, "relation": cex.relation, "rhs": cex.rhs}


def stochastic_names(theorem: str) -> Optional[set]:
    """The names of the row-stochastic matrices of a registered statement over theory.expr (None: not one)."""
    from theory import expr, registry

    th = registry.REGISTRY.get(theorem)
    if th is None or not th.is_expr:
        return None
    return {m for m, kind in expr.normal_form(th.statement, th.assume).symbols if kind == "stochastic"}


def instance_lines(instance: dict, stochastic: Optional[set] = None) -> str:
    """One line per symbol of an exact instance ({"A": rows of "p/q", "alpha": "p/q"}): a matrix's rows,
    a parameter's value; after ``; every row sums to exactly 1:`` when every matrix is row-stochastic
    (``stochastic``: the names of those; every matrix when None)."""
    mats = {k: v for k, v in instance.items() if isinstance(v, list)}
    rowsum = stochastic is None or set(mats) <= stochastic
    lines = ["; every row sums to exactly 1:" if rowsum and mats else ":"]
    for name, v in instance.items():
        if isinstance(v, list):
            lines.append(f"  {name} = [" + ", ".join("[" + ", ".join(map(str, row)) + "]" for row in v) + "]")
        else:
            lines.append(f"  {name} = {v}")
    return "\n".join(lines)


def refutation_text(theorem: str, stop: Refutation, planned: int, per_chunk: int, search: bool = False) -> str:
    """The one message of a stop on a theorem filed as proved that is false: how many instances violate
    it of how many checked, how many are kept, and the simplest kept counterexample, exact."""
    what = (f"the guided search found {stop.violated:,} violating instance(s) among its {stop.checked:,} finds"
            if search else f"{stop.violated:,} of the {stop.checked:,} instances checked violate it")
    lines = [f"{theorem} is filed as proved (category='proved') but is false: {what} ({stop.chunks:,} of the "
             f"plan's {planned:,} chunks stored; the run stops at the first chunk with a violation, and a resumed "
             "run stops on the stored chunks without computing more)",
             f"{stop.kept:,} of them kept as records with their exact matrices"
             + ("" if search else f" (at most {per_chunk} per chunk; the chunk summaries count every one)")]
    cex = stop.counterexample
    lines.append(counterexample_text(cex) if cex is not None else "no kept counterexample re-checks exactly: a bug")
    return "\n".join(lines)


def refutation_json(stop: Refutation) -> dict:
    """The ``--json`` form of a :class:`~verification.stress.findings.counterexamples.Refutation`."""
    return {"violated": stop.violated, "checked": stop.checked, "chunks": stop.chunks, "kept": stop.kept}


def sweep_json(theorem: str, campaign: str, t: Counts, cex: Optional[Counterexample]) -> dict:
    """The ``--json`` object of a sweep: instances, verdict counts of the bound per instance
    (``violated``: every instance on which the statement is false, whatever the theorem's category),
    ``not_applicable`` (the instances count under exactly one of these: they add up to ``instances``),
    the simplest kept counterexample (exact, or None) and its exact ``sides`` as the statement writes
    them (:func:`counterexample_sides`, or None)."""
    return {"theorem": theorem, "campaign": campaign, "instances": t.instances,
            "verdicts": {k: t.count(k) for k in ("holds", "tight", "violated", "undecided")},
            "not_applicable": t.count("not-applicable"),
            "counterexample": None if cex is None else cex.values,
            "sides": None if cex is None else counterexample_sides(cex)}


def condition_json(cond: Condition) -> dict:
    """The ``--json`` form of the equality condition's tallies."""
    return asdict(cond)


def own_lines(store: Any, plan: Any) -> list[str]:
    """What the document of a run of a user's theorem (``paper --from``, :mod:`verification.paper.own`)
    says beyond its tables, for each sweep of a statement over theory.expr: the statement typeset from
    sympy, its category and source, the verdict counts with the tight share and its interval, and the
    simplest kept counterexample in exact rationals (or that there is none)."""
    from theory import get
    from theory.expr import latex
    from theory.plugins import source

    out: list[str] = []
    for s in plan.sweeps:
        if s.spec.kind != "expr":
            continue
        th = get(s.theorem)
        sweep = sweep_findings(store, s)
        t = sweep.total
        asked = (f" (`--instances {s.instances:,}` asked: split over {len(s.cells()):,} cells and rounded up to "
                 f"whole chunks)" if s.total() != s.instances else "")
        others = "".join(f", {t.count(k):,} {k}" for k in sweep.verdicts()[len(VERDICTS):])
        out += [f"### `{th.id}` ({th.category}): {th.named_title}", "", f"Hypotheses: {th.hypotheses_words()}.", "",
                f"$$ {latex(th.statement)} $$", "", f"Registered by `{source(th.id)}`.", "",
                f"{t.instances:,} instances checked{asked}: {t.count('holds'):,} holds, {t.count('tight'):,} tight (share "
                f"{share_cell(t.tight)} of the applicable ones, 95% Wilson), "
                f"{t.count('violated'):,} violated, {t.count('undecided'):,} undecided, "
                f"{t.count('not-applicable'):,} not applicable{others}; {t.exact:,} decided past the float margin "
                "in exact arithmetic.", ""]
        if sweep.condition is not None:
            out += [condition_line(sweep.condition) + ".", ""]
        if sweep.counterexample is None:
            out += ["No counterexample among these instances.", ""]
        else:
            out += ["```", counterexample_text(sweep.counterexample), "```", ""]
    return out


def condition_line(cond: Condition) -> str:
    """The equality condition's agreement with the exact verdicts, in words."""
    return (f"equality condition on {cond.checked:,} instances: {cond.tight_said:,} tight and said, "
            f"{cond.tight_missed:,} tight but not said, {cond.said_not_tight:,} said but not tight: "
            + ("it agrees with every exact verdict" if cond.agrees else "it DISAGREES with the exact verdicts (records "
               "kept as condition-mismatch)"))


def mismatch_text(theorem: str, mismatch: Mismatch) -> str:
    """The equality condition's disagreement with exact arithmetic, with the simplest kept instance."""
    from verification.stress.checks.expr import KEEP_MISMATCH

    lines = [f"{theorem}: its equality condition disagrees with the exact tight verdict on {mismatch.disagree:,} "
             f"of {mismatch.checked:,} instances checked ({mismatch.kept:,} kept as records, at most "
             f"{KEEP_MISMATCH} per chunk)"]
    if mismatch.instance is not None:
        lines.append(f"simplest kept instance ({mismatch.instance}), exact"
                     + instance_lines(mismatch.matrices, stochastic_names(theorem)))
        lines.append(f"  the condition says {'tight' if mismatch.said else 'not tight'}; exact arithmetic says "
                     f"lhs = {mismatch.lhs}, rhs = {mismatch.rhs}: {'tight' if mismatch.tight else 'not tight'}")
    return "\n".join(lines)


def mismatch_json(mismatch: Mismatch) -> dict:
    """The ``--json`` form of a :class:`~verification.stress.findings.counterexamples.Mismatch`."""
    return asdict(mismatch)
