"""Stress campaigns, read back: per-cell tallies from the stored chunk summaries, the kept
instances, the progress line while a sweep runs, and what a stored chunk costs on disk.
Aggregates stored rows only; never recomputes."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Iterable, Optional

from verification.stats import share_text
from verification.report.tables import Table, print_table
from verification.stress.checks.plan import cell_chunk_size, sampler_text
from verification.stress.checks.summaries import Tally, merge

COLUMNS = ["family", "n", "instances", "chunks", "holds", "tight", "tight share [95%]", "violated",
           "undecided", "not applicable", "exact path", "smallest strict slack", "at (chunk, index)"]
# the verdicts the table has a column for, in order (the store's words; "not-applicable" is headed
# "not applicable"): every instance is counted under exactly one, so a row's verdict columns add up to
# its instances; a verdict a summary counts beyond these gets a column of its own (:func:`verdict_names`)
VERDICTS = ("holds", "tight", "violated", "undecided", "not-applicable")
STEP_VERDICTS = VERDICTS[:4]     # a rollout step is never not-applicable


def tally(store: Any, campaign: str, theorem: str, chunks: Optional[Iterable[str]] = None) -> dict[str, Tally]:
    """One :class:`Tally` per cell ``'<family>/n<n>'`` (rollout: ``'<family>/n<n>/L<L>'``), over
    the stored chunks of ``chunks`` only (a plan's :meth:`~verification.stress.checks.plan.StressPlan.chunk_keys`:
    a report reads exactly what its plan defines, not chunks a larger run added), or all."""
    rows = store.summaries(campaign, theorem)
    if chunks is not None:
        keep = set(chunks)
        rows = (r for r in rows if r["chunk"] in keep)
    return merge(rows)


def cell_parts(cell: str) -> tuple[str, int, Optional[int]]:
    """``'dirichlet/n16'`` -> ('dirichlet', 16, None); ``'dirichlet/n16/L12'`` -> (..., 12); a cell of a
    statement with a tokens matrix ``'gauss-1/n4/d2'`` -> ('gauss-1', 4, None) (its d: :func:`cell_dim`)."""
    family, rest = cell.split("/n")
    rest = rest.partition("/d")[0]
    n, _, L = rest.partition("/L")
    return family, int(n), int(L) if L else None


def cell_dim(cell: str) -> Optional[int]:
    """d of a cell ``'<family>/n<n>/d<d>'`` (a statement with a tokens matrix), else None."""
    d = cell.partition("/n")[2].partition("/d")[2]
    return int(d) if d else None


def cell_order(cell: str) -> tuple:
    """A cell's place in its table: family, n, L, d."""
    family, n, L = cell_parts(cell)
    return family, n, L or 0, cell_dim(cell) or 0


def verdict_names(cells: dict[str, Tally]) -> list[str]:
    """The verdicts the cells' table counts: :data:`VERDICTS`, then any other verdict a summary counts."""
    extra = sorted({k for t in cells.values() for k in t.counts} - set(VERDICTS))
    return list(VERDICTS) + extra


def columns(cells: dict[str, Tally]) -> list[str]:
    """The columns of the cells' table: :data:`COLUMNS` (rollout cells: ``layers`` after ``n``), and a
    column for every other verdict a summary counts, after ``not applicable``."""
    rollout = any(cell_parts(c)[2] is not None for c in cells)
    cols = COLUMNS[:2] + ["layers"] + COLUMNS[2:] if rollout else list(COLUMNS)
    if any(cell_dim(c) is not None for c in cells):
        cols = cols[:2] + ["d"] + cols[2:]
    at = cols.index("not applicable") + 1
    return cols[:at] + verdict_names(cells)[len(VERDICTS):] + cols[at:]


def applicable(t: Tally) -> int:
    """Instances the statement applies to: every instance but the not-applicable ones (the share of
    tight instances is over these)."""
    return t.n - t.count("not-applicable")


def rows(cells: dict[str, Tally]) -> list[list[Any]]:
    """One row per cell (:func:`columns`; rollout cells: ``layers`` after ``n``): its verdict columns
    add up to its instances."""
    out = []
    extra = verdict_names(cells)[len(VERDICTS):]
    for cell, t in sorted(cells.items(), key=lambda kv: cell_order(kv[0])):
        family, n, L = cell_parts(cell)
        d = cell_dim(cell)
        out.append([family, n] + ([L] if L is not None else []) + ([d] if d is not None else []) +
                   [t.n, t.chunks, t.count("holds"), t.count("tight"),
                    share_text(t.count("tight"), applicable(t)), t.count("violated"), t.count("undecided"),
                    t.count("not-applicable")] + [t.count(k) for k in extra] +
                   [t.exact, t.min_slack, f"{t.min_at[0]}, {t.min_at[1]}" if t.min_at else "-"])
    return out


STEP_COLUMNS = ["family", "n", "layers", "step l", "holds", "tight", "violated", "undecided",
                "smallest strict slack", "at (chunk, index)"]


def step_rows(cells: dict[str, Tally]) -> list[list[Any]]:
    """Rollout campaigns: one row per cell and step l (Theorem D2 for Ahat_l and R_{l-1})."""
    out = []
    for cell, t in sorted(cells.items(), key=lambda kv: cell_parts(kv[0])[:2] + (cell_parts(kv[0])[2] or 0,)):
        family, n, L = cell_parts(cell)
        for l, st in enumerate(t.steps):
            c = st["counts"]
            out.append([family, n, L, l + 1] + [c.get(k, 0) for k in STEP_VERDICTS] +
                       [st["min_slack"], f"{st['min_at'][0]}, {st['min_at'][1]}" if st["min_at"] else "-"])
    return out


def total(cells: dict[str, Tally]) -> Tally:
    out = Tally()
    for t in cells.values():
        out.n += t.n
        out.chunks += t.chunks
        out.exact += t.exact
        for k, v in t.counts.items():
            out.counts[k] = out.counts.get(k, 0) + v
        if t.min_slack is not None and (out.min_slack is None or t.min_slack < out.min_slack):
            out.min_slack, out.min_at = t.min_slack, t.min_at
        out.hist = [a + b for a, b in zip(out.hist, t.hist)]
    return out


def kept(store: Any, campaign: str, theorem: str, limit: int = 10) -> list[dict]:
    """The stored instances (violated and undecided first, then by slack), at most ``limit``."""
    recs = [r for r in store.records(campaign, theorem)]
    order = {"violated": 0, "undecided": 1, "holds": 2, "tight": 3}
    recs.sort(key=lambda r: (order.get(r["verdict"], 4), r["slack"] if r["slack"] is not None else 0.0))
    return recs[:limit]


def store_bytes(path: str) -> Optional[int]:
    """Size on disk of a store file (with its write-ahead log), None for ``:memory:``."""
    if path == ":memory:":
        return None
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def table_name(target: str) -> str:
    """The table of a sweep of ``target``, named as the paper names it: ``stress-`` and the theorem
    id without its family (``dobrushin.``), dots as hyphens.

    >>> table_name("dobrushin.factor"), table_name("dobrushin.product.causal")
    ('stress-factor', 'stress-product-causal')
    """
    family, _, rest = target.partition(".")
    return "stress-" + (rest if family == "dobrushin" and rest else target).replace(".", "-")


def cell_table(cells: dict[str, Tally], campaign: str, target: str, command: str = "") -> Table:
    """The campaign's table :func:`table_name` (``stress-factor`` for ``dobrushin.factor``): one row
    per cell (:func:`columns`: a column for every verdict counted; rollout cells: ``layers`` after
    ``n``), the numbers as stored (the paper selects its columns by name)."""
    return Table.from_rows(table_name(target), rows(cells), columns(cells),
                           f"Stress sweep of {target}: campaign {campaign}", provenance(cells, campaign),
                           campaigns=(campaign,), command=command)


def step_table(cells: dict[str, Tally], campaign: str, target: str, command: str = "") -> Table:
    """Rollout campaigns: the table ``<table_name>-steps``, one row per cell and step l."""
    return Table.from_rows(f"{table_name(target)}-steps", step_rows(cells), STEP_COLUMNS,
                           f"Theorem D2 at every rollout step: campaign {campaign}", provenance(cells, campaign),
                           campaigns=(campaign,), command=command)


def provenance(cells: dict[str, Tally], campaign: str) -> str:
    """The campaign, its chunk sizes, how its instances were drawn (the sampler its version names)."""
    rollout = any(cell_parts(c)[2] is not None for c in cells)
    sizes = sorted({cell_parts(c)[1:] for c in cells}, key=lambda nl: (nl[0], nl[1] or 0))
    held = {cell_parts(c)[1:]: t.n // t.chunks for c, t in cells.items() if t.chunks}   # as stored
    return (f"campaign {campaign}; chunks of "
            f"{', '.join(f'{held.get((n, L)) or cell_chunk_size(n, L)} at n = {n}' + (f', L = {L}' if L else '') for n, L in sizes)}; "
            f"{sampler_text(campaign, rollout)}; verdicts exact")


def report(store: Any, plan: Any, out_dir: Path, console: Any) -> dict[str, dict[str, Tally]]:
    """Every sweep of ``plan`` (:class:`verification.stress.checks.Plan`): its tables under
    ``out_dir/tables`` and on the console, over exactly the sweep's chunks (:func:`report_sweep`);
    the cells of each sweep's campaign."""
    return {s.campaign: report_sweep(store, s.campaign, s.stored_as, Path(out_dir) / "tables", console,
                                     target=s.theorem, chunks=s.chunk_keys(), command=s.command())
            for s in plan.sweeps}


def report_sweep(store: Any, campaign: str, theorem: str, out_dir: Path, console: Any,
                 target: Optional[str] = None, chunks: Optional[Iterable[str]] = None,
                 command: str = "") -> dict[str, Tally]:
    """Print and write the campaign's table (:func:`cell_table`; ``target`` defaults to the
    theorem; the rollout target also writes its per-step table, :func:`step_table`), over
    ``chunks`` (the plan's chunk keys) when given; ``command`` is what fills the campaign."""
    cells = tally(store, campaign, theorem, chunks)
    if not cells:
        return cells
    tables = [cell_table(cells, campaign, target or theorem, command)]
    if any(cell_parts(c)[2] is not None for c in cells):
        tables.append(step_table(cells, campaign, target or theorem, command))
    for table in tables:
        print_table(console, table.rows(), table.columns(), table.caption)
        table.write(out_dir)
    t = total(cells)
    console.print(f"{t.n:,} instances in {t.chunks:,} chunks: {t.line()}")
    cond = condition_tally(store, campaign, theorem, chunks)
    if cond is not None:
        console.print(condition_line(cond), markup=False)
    for r in kept(store, campaign, theorem, 3):
        console.print(f"  kept {r['instance']}: {r['verdict']} ({r['extra'].get('kept')}), slack {r['slack']!r}")
    return cells


class Progress:
    """The progress line of a running sweep: instances/s, verdict shares, smallest slack so far
    (merged from each stored chunk's summary); ``status`` for :func:`verification.campaign.run`."""

    def __init__(self, theorem: str):
        self.theorem = theorem
        self.tally = Tally()
        self.start = time.perf_counter()

    def __call__(self, chunk: Any, records: Any) -> str:
        body = getattr(records, "summaries", {}).get(self.theorem)
        if body is not None:
            self.tally.add(chunk.key, body)
        rate = self.tally.n / max(time.perf_counter() - self.start, 1e-9)
        return f"{rate:,.0f} inst/s, {self.tally.line()}"


def simplicity(mats: dict) -> tuple[int, int, int]:
    """How simple an exact instance ({"A": rows of "p/q"}) is, smallest first: its size n, its largest
    denominator, the digits of all its denominators (a 0/1 matrix before one with 2^53 denominators)."""
    from fractions import Fraction

    matrices = [rows for rows in mats.values() if isinstance(rows, list)]
    dens = [Fraction(x).denominator for rows in matrices for row in rows for x in row]
    dens += [Fraction(v).denominator for v in mats.values() if not isinstance(v, list)]
    n = max((len(rows) for rows in matrices), default=0)
    return n, max(dens, default=1), sum(len(str(d)) for d in dens)


def instance_order(instance: str, order: Optional[dict]) -> tuple:
    """Where a record's instance sits in its plan: (chunk's place in the plan's order, index);
    ``<chunk>/i<index>`` (a sweep) or ``<chunk>/<index>`` (a search)."""
    chunk, _, last = instance.rpartition("/")
    index = int(last.lstrip("i")) if last.lstrip("i").isdigit() else 0
    return ((order or {}).get(chunk, 0), chunk if order is None else "", index)


def rechecked(theorem: str, mats: dict) -> bool:
    """Whether the exact instance ``mats`` ({"A": rows of "p/q", ..., "alpha": "p/q"}) satisfies the
    theorem's hypotheses (kinds, shapes, ``assume``, ``where=``) and violates its statement, in exact
    arithmetic or by a certified margin, checked again here from the stored rationals
    (:func:`verification.stress.checks.expr.recheck`)."""
    from numerics.expr import compile_statement
    from theory import get
    from verification.stress.checks.expr import recheck

    th = get(theorem)
    return recheck(compile_statement(th.statement, th.assume, th.where), mats, tuple(th.assume))[0]


def simplest_counterexample(store: Any, campaign: str, theorem: str,
                            chunks: Optional[Iterable[str]] = None) -> Optional[dict]:
    """The simplest stored counterexample of the campaign: among the records of ``chunks`` (the plan's;
    all when None) of a statement over theory.expr whose ``extra["counterexample"]`` holds the exact
    matrices ({"A": rows of "p/q"}), the smallest n, then the smallest denominators
    (:func:`simplicity`), then the plan's chunk order and the index; re-checked exactly here
    (:func:`rechecked`) before it is returned. None if there is none."""
    order = {c: k for k, c in enumerate(chunks)} if chunks is not None else None
    found = []
    for r in store.records(campaign, theorem):
        if "counterexample" not in r["extra"]:
            continue
        if order is not None and r["instance"].rpartition("/")[0] not in order:
            continue
        found.append((simplicity(r["extra"]["counterexample"]), instance_order(r["instance"], order), r))
    for _, _, r in sorted(found, key=lambda x: x[:2]):
        if rechecked(theorem, r["extra"]["counterexample"]):
            return r
    return None


def counterexample_sides(record: dict) -> dict:
    """The exact sides of a stored counterexample as the statement is written: ``{"lhs", "relation",
    "rhs"}``, ``lhs`` the side written left of the relation even for ``>=`` and ``>`` (a record stored
    before the sides were kept as written carries the normal form, ``<=`` or ``<``, and is shown so)."""
    ex = record["extra"]
    return {"lhs": ex["lhs"], "relation": ex.get("relation", "<="), "rhs": ex["rhs"]}


def counterexample_text(record: dict) -> str:
    """The counterexample of ``record`` as printed: each matrix's rows of exact rationals, both sides
    as the statement writes them (:func:`counterexample_sides`)."""
    ex = record["extra"]
    lines = [f"simplest kept counterexample ({record['instance']}), exact"
             + instance_lines(ex["counterexample"], stochastic_names(record["theorem"]))]
    sides = counterexample_sides(record)
    lines.append(f"  lhs = {sides['lhs']}, rhs = {sides['rhs']}: lhs {sides['relation']} rhs is false (re-checked in "
                 "exact arithmetic)")
    return "\n".join(lines)


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



def refutation(store: Any, campaign: str, theorem: str, chunks: Iterable[str], search: bool = False) -> Optional[dict]:
    """What the stored ``chunks`` of ``campaign`` (the verified chunks of a plan, however they got
    there: this run, an earlier one, another writer) say against ``theorem``: None when no instance
    violates it, else ``violated`` (instances on which the statement is false, from the chunk
    summaries: every one is counted), ``checked`` (instances of those chunks; a search: its finds),
    ``chunks`` (stored), ``kept`` (counterexamples kept as records with their matrices) and
    ``counterexample`` (:func:`simplest_counterexample`, None where no kept one re-checks)."""
    chunks = list(chunks)
    keep = set(chunks)
    rows = [r for r in store.summaries(campaign, theorem) if r["chunk"] in keep]
    if search:
        violated, checked = sum(r["body"].get("violated", 0) for r in rows), sum(r["body"].get("found", 0) for r in rows)
    else:
        t = total(merge(rows)) if rows else Tally()
        violated, checked = t.count("violated"), t.n
    if not violated:
        return None
    kept = sum(1 for r in store.records(campaign, theorem)
               if "counterexample" in r["extra"] and r["instance"].rpartition("/")[0] in keep)
    return {"violated": violated, "checked": checked, "chunks": len({r["chunk"] for r in rows}), "kept": kept,
            "counterexample": simplest_counterexample(store, campaign, theorem, chunks)}


def refutation_text(theorem: str, stop: dict, planned: int, per_chunk: int, search: bool = False) -> str:
    """The one message of a stop on a theorem filed as proved that is false: how many instances violate
    it of how many checked, how many are kept, and the simplest kept counterexample, exact."""
    what = (f"the guided search found {stop['violated']:,} violating instance(s) among its {stop['checked']:,} finds"
            if search else f"{stop['violated']:,} of the {stop['checked']:,} instances checked violate it")
    lines = [f"{theorem} is filed as proved (category='proved') but is false: {what} ({stop['chunks']:,} of the "
             f"plan's {planned:,} chunks stored; the run stops at the first chunk with a violation, and a resumed "
             "run stops on the stored chunks without computing more)",
             f"{stop['kept']:,} of them kept as records with their exact matrices"
             + ("" if search else f" (at most {per_chunk} per chunk; the chunk summaries count every one)")]
    cex = stop["counterexample"]
    lines.append(counterexample_text(cex) if cex is not None else "no kept counterexample re-checks exactly: a bug")
    return "\n".join(lines)


def sweep_json(theorem: str, campaign: str, cells: dict[str, Tally], cex: Optional[dict]) -> dict:
    """The ``--json`` object of a sweep: instances, verdict counts of the bound per instance
    (``violated``: every instance on which the statement is false, whatever the theorem's category),
    ``not_applicable`` (the instances count under exactly one of these: they add up to ``instances``),
    the simplest kept counterexample (exact, or None; :func:`simplest_counterexample`) and its exact
    ``sides`` as the statement writes them (:func:`counterexample_sides`, or None)."""
    t = total(cells) if cells else Tally()
    out = {"theorem": theorem, "campaign": campaign, "instances": t.n,
           "verdicts": {k: t.count(k) for k in ("holds", "tight", "violated", "undecided")},
           "not_applicable": t.count("not-applicable"),
           "counterexample": None if cex is None else cex["extra"]["counterexample"],
           "sides": None if cex is None else counterexample_sides(cex)}
    return out


def with_condition(out: dict, store: Any, campaign: str, theorem: str, chunks: Iterable[str]) -> dict:
    """``out`` with ``equality_condition`` (:func:`condition_tally`) when the theorem states one."""
    cond = condition_tally(store, campaign, theorem, chunks)
    return out if cond is None else {**out, "equality_condition": cond}


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
        cells = tally(store, s.campaign, s.stored_as, s.chunk_keys())
        t = total(cells) if cells else Tally()
        asked = (f" (`--instances {s.instances:,}` asked: split over {len(s.cells()):,} cells and rounded up to "
                 f"whole chunks)" if s.total() != s.instances else "")
        others = "".join(f", {t.count(k):,} {k}" for k in verdict_names(cells)[len(VERDICTS):])
        out += [f"### `{th.id}` ({th.category}): {th.title}", "", f"Hypotheses: {th.hypotheses_words()}.", "",
                f"$$ {latex(th.statement)} $$", "", f"Registered by `{source(th.id)}`.", "",
                f"{t.n:,} instances checked{asked}: {t.count('holds'):,} holds, {t.count('tight'):,} tight (share "
                f"{share_text(t.count('tight'), applicable(t))} of the applicable ones, 95% Wilson), "
                f"{t.count('violated'):,} violated, {t.count('undecided'):,} undecided, "
                f"{t.count('not-applicable'):,} not applicable{others}; {t.exact:,} decided past the float margin "
                "in exact arithmetic.", ""]
        cond = condition_tally(store, s.campaign, s.stored_as, s.chunk_keys())
        if cond is not None:
            out += [condition_line(cond) + ".", ""]
        cex = simplest_counterexample(store, s.campaign, s.stored_as, s.chunk_keys())
        if cex is None:
            out += ["No counterexample among these instances.", ""]
        else:
            out += ["```", counterexample_text(cex), "```", ""]
    return out


def condition_tally(store: Any, campaign: str, theorem: str, chunks: Optional[Iterable[str]] = None) -> Optional[dict]:
    """The equality condition against the exact tight verdicts, summed over the chunks (None: the
    theorem states no condition): checked, tight_said, tight_missed, said_not_tight."""
    keep = set(chunks) if chunks is not None else None
    out: Optional[dict] = None
    for row in store.summaries(campaign, theorem):
        cond = row["body"].get("condition")
        if cond is None or (keep is not None and row["chunk"] not in keep):
            continue
        out = out or {"checked": 0, "tight_said": 0, "tight_missed": 0, "said_not_tight": 0}
        for k in out:
            out[k] += cond.get(k, 0)
    return out


def condition_line(cond: dict) -> str:
    """The equality condition's agreement with the exact verdicts, in words."""
    agree = cond["tight_missed"] == 0 and cond["said_not_tight"] == 0
    return (f"equality condition on {cond['checked']:,} instances: {cond['tight_said']:,} tight and said, "
            f"{cond['tight_missed']:,} tight but not said, {cond['said_not_tight']:,} said but not tight: "
            + ("it agrees with every exact verdict" if agree else "it DISAGREES with the exact verdicts (records "
               "kept as condition-mismatch)"))


def mismatch_instance(campaign: str, record: dict) -> dict:
    """The exact matrices ({"A": rows of "p/q"}) of an equality-condition mismatch record: kept in the
    record, or (a record stored before they were) regenerated from its campaign, chunk and index."""
    if "instance" in record["extra"]:
        return record["extra"]["instance"]
    from verification.stress.checks.draws import exact_values
    from verification.stress.checks.expr import as_text
    from verification.stress.checks.plan import regenerate, spec_of

    chunk, index = record["instance"].rsplit("/", 2)[:2]
    got = regenerate(campaign, chunk, int(index.lstrip("i")))
    batch = {k: (v[None] if hasattr(v, "shape") else [v]) for k, v in got.items()}
    return as_text(exact_values(batch, spec_of(record["theorem"]).law, 0))


def condition_mismatch(store: Any, campaign: str, theorem: str, chunks: Iterable[str]) -> Optional[dict]:
    """Where the theorem's equality condition disagrees with the exact tight verdict, over the stored
    ``chunks``: None when it never does (or the theorem states none), else ``disagree`` (instances,
    from the chunk summaries), ``checked``, ``kept`` (records) and the simplest kept one
    (:func:`simplicity`): ``instance``, ``matrices`` (exact), ``said`` (what the condition said:
    tight or not) and ``lhs``, ``rhs``, ``tight`` (both sides computed again here, exactly)."""
    from numerics.expr import compare, compile_statement, sides
    from theory import get
    from verification.stress.checks.expr import exact_text

    chunks = list(chunks)
    cond = condition_tally(store, campaign, theorem, chunks)
    if cond is None or not cond["tight_missed"] + cond["said_not_tight"]:
        return None
    order = {c: k for k, c in enumerate(chunks)}
    kept = [r for r in store.records(campaign, theorem) if r["extra"].get("kept") == "condition-mismatch"
            and r["instance"].rsplit("/", 2)[0] in order]
    out = {"disagree": cond["tight_missed"] + cond["said_not_tight"], "checked": cond["checked"], "kept": len(kept),
           "instance": None}
    if not kept:
        return out
    mats = {id(r): mismatch_instance(campaign, r) for r in kept}
    r = min(kept, key=lambda r: (simplicity(mats[id(r)]), instance_order(r["instance"].rpartition("/")[0], order)))
    th = get(theorem)
    lhs, rhs = sides(compile_statement(th.statement, th.assume, th.where), mats[id(r)])
    said = r["extra"].get("condition_said", not r["extra"]["tight"])
    return {**out, "instance": r["instance"].rpartition("/")[0], "matrices": mats[id(r)], "said": bool(said),
            "lhs": exact_text(lhs), "rhs": exact_text(rhs), "tight": compare(lhs, rhs) == 0}


def mismatch_text(theorem: str, mismatch: dict) -> str:
    """The equality condition's disagreement with exact arithmetic, with the simplest kept instance."""
    from verification.stress.checks.expr import KEEP_MISMATCH

    lines = [f"{theorem}: its equality condition disagrees with the exact tight verdict on {mismatch['disagree']:,} "
             f"of {mismatch['checked']:,} instances checked ({mismatch['kept']:,} kept as records, at most "
             f"{KEEP_MISMATCH} per chunk)"]
    if mismatch["instance"] is not None:
        lines.append(f"simplest kept instance ({mismatch['instance']}), exact"
                     + instance_lines(mismatch["matrices"], stochastic_names(theorem)))
        lines.append(f"  the condition says {'tight' if mismatch['said'] else 'not tight'}; exact arithmetic says "
                     f"lhs = {mismatch['lhs']}, rhs = {mismatch['rhs']}: {'tight' if mismatch['tight'] else 'not tight'}")
    return "\n".join(lines)


def mismatch_json(mismatch: dict) -> dict:
    """The ``--json`` form of :func:`condition_mismatch`."""
    return {k: mismatch.get(k) for k in ("disagree", "checked", "kept", "instance", "matrices", "said", "lhs", "rhs",
                                         "tight")}
