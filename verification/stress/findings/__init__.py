"""What the stored chunks of a stress plan say, as typed values: built once by :func:`findings`
from the plan's chunks, rendered by the report (tables, console lines) and by the paper part
(macros, tables, figures) alike; nothing here is formatted.

Per sweep (:class:`Sweep`): one :class:`Cell` per family and n (and L for rollout stacks, d for a
statement with a tokens matrix), each with its :class:`Counts` (instances, chunks, the verdict counts
as a :class:`verification.findings.Tally`, verdicts decided on the exact path, the share of tight
instances among the applicable ones with its Wilson interval, a :class:`verification.findings.Share`,
the smallest strict slack and where, :class:`~verification.stress.findings.cells.Slack`, the histogram of log10 strict slack) and, for
rollout stacks, one :class:`~verification.stress.findings.cells.Step` per rollout step; the sweep's total over its cells; the equality
condition against the exact tight verdicts (:class:`Condition`); the kept instances (:class:`Kept`)
and the simplest kept counterexample, re-checked exactly (:class:`Counterexample`). Per guided search
(:class:`Search`): its finds.

Modules: cells (the tallies of a sweep's cells), counterexamples (the simplest kept counterexample,
what the stored chunks say against a theorem filed as proved, the equality condition's disagreement
with exact arithmetic); here the sweep's and the search's findings and :func:`findings`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from verification.stress.checks.summaries import merge
from verification.stress.findings.cells import VERDICTS, Cell, Condition, Counts, cell, condition, order, total
from verification.stress.findings.counterexamples import Counterexample, simplest_counterexample


@dataclass(frozen=True)
class Kept:
    """A stored instance kept in full: its name, verdict, why it was kept, its slack."""

    instance: str
    verdict: str
    why: Optional[str]
    slack: Optional[float]


@dataclass(frozen=True)
class Sweep:
    """What the stored chunks of one sweep (:class:`~verification.stress.checks.plan.StressPlan`)
    say: its ``cells`` in table order (family, n, L, d), their ``total``, whether every chunk of the
    plan is stored (``complete``), the bytes of its stored values (``payload_bytes``), the equality
    condition (None: the theorem states none), the first kept instances and the simplest kept
    counterexample (None: none re-checks)."""

    theorem: str
    stored_as: str
    campaign: str
    command: str
    complete: bool
    cells: tuple[Cell, ...]
    total: Counts
    payload_bytes: int
    condition: Optional[Condition]
    kept: tuple[Kept, ...]
    counterexample: Optional[Counterexample]

    @property
    def rollout(self) -> bool:
        return any(c.layers is not None for c in self.cells)

    def verdicts(self) -> list[str]:
        """The verdicts the cells count: :data:`VERDICTS`, then any other verdict a summary counts."""
        extra = sorted({k for c in self.cells for k in c.counts.verdicts.counts} - set(VERDICTS))
        return list(VERDICTS) + extra


@dataclass(frozen=True)
class Search:
    """What the stored chunks of a guided search (:class:`~verification.stress.checks.Search`) found:
    ``found`` instances kept, of them ``tight`` and ``violated``, ``bad`` (violated or undecided), the
    smallest strict slack among the holding finds (None: none), whether every chunk is stored."""

    campaign: str
    command: str
    budget: int
    complete: bool
    found: int
    tight: int
    violated: int
    bad: int
    smallest: Optional[float]


@dataclass(frozen=True)
class Findings:
    """The findings of a plan: one :class:`Sweep` per sweep, the guided search's (None: none)."""

    sweeps: tuple[Sweep, ...]
    search: Optional[Search]

    def sweep(self, theorem: str) -> Sweep:
        """The sweep of ``theorem``."""
        return next(s for s in self.sweeps if s.theorem == theorem)


def findings(store: Any, plan: Any) -> Findings:
    """The findings of ``plan`` (:class:`verification.stress.checks.Plan`) from ``store``: every
    sweep over exactly its chunks (:func:`sweep_findings`), the guided search's (:func:`search_findings`)."""
    return Findings(tuple(sweep_findings(store, s) for s in plan.sweeps),
                    None if plan.search is None else search_findings(store, plan.search))


def sweep_findings(store: Any, plan: Any) -> Sweep:
    """The :class:`Sweep` of ``plan`` (a :class:`~verification.stress.checks.plan.StressPlan`) over
    exactly its chunks (:meth:`~verification.stress.checks.plan.StressPlan.chunk_keys`, never chunks a
    larger run added); its kept instances: the first three of the campaign's records (violated and
    undecided first, then by slack)."""
    keys = plan.chunk_keys()
    keep = set(keys)
    rows = [r for r in store.summaries(plan.campaign, plan.stored_as) if r["chunk"] in keep]
    cells = tuple(sorted((cell(key, t) for key, t in merge(rows).items()), key=order))
    records = list(store.records(plan.campaign, plan.stored_as))
    return Sweep(plan.theorem, plan.stored_as, plan.campaign, plan.command(),
                 keep <= store.done_chunks(plan.campaign), cells, total(cells),
                 store.payload_bytes(plan.campaign, keys), condition(rows), kept(records, 3),
                 simplest_counterexample(records, plan.stored_as, keys))


def search_findings(store: Any, search: Any) -> Search:
    """The :class:`Search` of the guided search ``search`` over exactly its chunks."""
    wanted = search.chunk_keys()
    found = [r for r in store.records(search.campaign, search.theorem) if r["chunk"] in wanted]
    strict = [r["slack"] for r in found if r["verdict"] == "holds" and r["slack"] is not None]
    return Search(search.campaign, search.command(), search.budget, wanted <= store.done_chunks(search.campaign),
                  len(found), sum(r["verdict"] == "tight" for r in found), sum(r["verdict"] == "violated" for r in found),
                  sum(r["verdict"] in ("violated", "undecided") for r in found), min(strict) if strict else None)


def kept(records: Iterable[dict], limit: int) -> tuple[Kept, ...]:
    """The stored instances, violated and undecided first, then by slack: at most ``limit``."""
    rank = {"violated": 0, "undecided": 1, "holds": 2, "tight": 3}
    recs = sorted(records, key=lambda r: (rank.get(r["verdict"], 4), r["slack"] if r["slack"] is not None else 0.0))
    return tuple(Kept(r["instance"], r["verdict"], r["extra"].get("kept"), r["slack"]) for r in recs[:limit])
