"""Counterexamples a stress campaign stored, as typed values: the simplest kept one, re-checked
exactly (:class:`Counterexample`, :func:`simplest_counterexample`), what the stored chunks say
against a theorem filed as proved (:class:`Refutation`), and where a theorem's equality condition
disagrees with exact arithmetic (:class:`Mismatch`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from verification.stress.checks.summaries import merge
from verification.stress.findings.cells import cell, condition, total


@dataclass(frozen=True)
class Counterexample:
    """A kept counterexample of ``theorem``, re-checked exactly: ``instance`` (its name), ``values``
    (every symbol in exact rationals, ``{"A": rows of "p/q", "alpha": "p/q"}``) and both exact sides
    as the statement writes them (``lhs``, ``relation``, ``rhs``)."""

    theorem: str
    instance: str
    values: Mapping[str, Any]
    lhs: str
    relation: str
    rhs: str

    @classmethod
    def of(cls, record: dict) -> "Counterexample":
        """From a stored record (one stored before the sides were kept as written carries the normal
        form, ``<=`` or ``<``, and keeps it)."""
        ex = record["extra"]
        return cls(record["theorem"], record["instance"], ex["counterexample"], ex["lhs"], ex.get("relation", "<="),
                   ex["rhs"])


# -- the simplest -----------------------------------------------------------------------------------
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


def simplest_counterexample(records: Iterable[dict], theorem: str,
                            chunks: Optional[Iterable[str]] = None) -> Optional[Counterexample]:
    """The simplest counterexample among ``records`` (of ``theorem``, in ``chunks``: the plan's; all
    when None) of a statement over theory.expr whose ``extra["counterexample"]`` holds the exact
    matrices ({"A": rows of "p/q"}): the smallest n, then the smallest denominators
    (:func:`simplicity`), then the plan's chunk order and the index; re-checked exactly here
    (:func:`rechecked`). None if there is none."""
    order = {c: k for k, c in enumerate(chunks)} if chunks is not None else None
    found = []
    for r in records:
        if "counterexample" not in r["extra"]:
            continue
        if order is not None and r["instance"].rpartition("/")[0] not in order:
            continue
        found.append((simplicity(r["extra"]["counterexample"]), instance_order(r["instance"], order), r))
    for _, _, r in sorted(found, key=lambda x: x[:2]):
        if rechecked(theorem, r["extra"]["counterexample"]):
            return Counterexample.of(r)
    return None


def stored_counterexample(store: Any, campaign: str, theorem: str,
                          chunks: Optional[Iterable[str]] = None) -> Optional[Counterexample]:
    """:func:`simplest_counterexample` of the stored records of ``campaign``."""
    return simplest_counterexample(store.records(campaign, theorem), theorem, chunks)


@dataclass(frozen=True)
class Refutation:
    """What the stored chunks say against a theorem: ``violated`` instances (every one, from the chunk
    summaries), of ``checked`` (a search: its finds), in ``chunks`` stored chunks, ``kept`` as records
    with their matrices, and the simplest kept ``counterexample`` (None where none re-checks)."""

    violated: int
    checked: int
    chunks: int
    kept: int
    counterexample: Optional[Counterexample]


def refutation(store: Any, campaign: str, theorem: str, chunks: Iterable[str], search: bool = False) -> Optional[Refutation]:
    """What the stored ``chunks`` of ``campaign`` (the verified chunks of a plan, however they got
    there: this run, an earlier one, another writer) say against ``theorem``: None when no instance
    violates it, else its :class:`Refutation`."""
    chunks = list(chunks)
    keep = set(chunks)
    rows = [r for r in store.summaries(campaign, theorem) if r["chunk"] in keep]
    if search:
        violated, checked = sum(r["body"].get("violated", 0) for r in rows), sum(r["body"].get("found", 0) for r in rows)
    else:
        t = total(cell(key, m) for key, m in merge(rows).items())
        violated, checked = t.count("violated"), t.instances
    if not violated:
        return None
    records = list(store.records(campaign, theorem))
    kept = sum(1 for r in records if "counterexample" in r["extra"] and r["instance"].rpartition("/")[0] in keep)
    return Refutation(violated, checked, len({r["chunk"] for r in rows}), kept,
                      simplest_counterexample(records, theorem, chunks))


# -- the equality condition against exact arithmetic ---------------------------------------------------
@dataclass(frozen=True)
class Mismatch:
    """Where a theorem's equality condition disagrees with the exact tight verdict: ``disagree``
    instances (from the chunk summaries) of ``checked``, ``kept`` records, and the simplest kept one
    (None: none kept): its ``instance``, ``matrices`` (exact), ``said`` (what the condition said: tight
    or not), ``lhs``, ``rhs`` (exact, computed again) and ``tight``."""

    disagree: int
    checked: int
    kept: int
    instance: Optional[str] = None
    matrices: Optional[dict] = None
    said: Optional[bool] = None
    lhs: Optional[str] = None
    rhs: Optional[str] = None
    tight: Optional[bool] = None


def mismatch_instance(campaign: str, record: dict) -> dict:
    """The exact matrices ({"A": rows of "p/q"}) of an equality-condition mismatch record: kept in the
    record, or (a record stored before they were) regenerated from its campaign, chunk and index."""
    if "instance" in record["extra"]:
        return record["extra"]["instance"]
    from verification.stress.checks.draws import exact_values
    from verification.stress.checks.expr import as_text
    from verification.stress.checks.plan import regenerate
    from verification.stress.checks.specs import spec_of

    chunk, index = record["instance"].rsplit("/", 2)[:2]
    got = regenerate(campaign, chunk, int(index.lstrip("i")))
    batch = {k: (v[None] if hasattr(v, "shape") else [v]) for k, v in got.items()}
    return as_text(exact_values(batch, spec_of(record["theorem"]).law, 0))


def condition_mismatch(store: Any, campaign: str, theorem: str, chunks: Iterable[str]) -> Optional[Mismatch]:
    """The :class:`Mismatch` of the theorem's equality condition over the stored ``chunks``: None when
    it never disagrees with the exact tight verdict (or the theorem states none); the simplest kept
    instance by :func:`simplicity`, its sides computed again here, exactly."""
    from numerics.expr import compare, compile_statement, sides
    from theory import get
    from verification.stress.checks.expr import exact_text

    chunks = list(chunks)
    keep = set(chunks)
    cond = condition(r for r in store.summaries(campaign, theorem) if r["chunk"] in keep)
    if cond is None or not cond.disagree:
        return None
    order = {c: k for k, c in enumerate(chunks)}
    kept = [r for r in store.records(campaign, theorem) if r["extra"].get("kept") == "condition-mismatch"
            and r["instance"].rsplit("/", 2)[0] in order]
    if not kept:
        return Mismatch(cond.disagree, cond.checked, 0)
    mats = {id(r): mismatch_instance(campaign, r) for r in kept}
    r = min(kept, key=lambda r: (simplicity(mats[id(r)]), instance_order(r["instance"].rpartition("/")[0], order)))
    th = get(theorem)
    lhs, rhs = sides(compile_statement(th.statement, th.assume, th.where), mats[id(r)])
    said = r["extra"].get("condition_said", not r["extra"]["tight"])
    return Mismatch(cond.disagree, cond.checked, len(kept), r["instance"].rpartition("/")[0], mats[id(r)], bool(said),
                    exact_text(lhs), exact_text(rhs), compare(lhs, rhs) == 0)
