"""The tallies of a stress sweep's cells as typed values: per cell (family, n, L or d) its
:class:`Counts` (instances, chunks, verdict counts, verdicts the exact path decided, the Wilson share
of tight instances among the applicable ones, the smallest strict slack and where, the histogram of
log10 strict slack), per rollout step its :class:`Step`, the total over cells, and the equality
condition against the exact tight verdicts (:class:`Condition`); merged from the stored chunk
summaries (:func:`verification.stress.checks.summaries.merge`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from verification.findings import Share, Tally
from verification.stress.checks.campaigns import chunk_dim, chunk_layers, parse_chunk
from verification.stress.checks.summaries import EDGES
from verification.stress.checks.summaries import Merged

# the verdicts of a sweep's instances, in the order its tables give them (the store's words): every
# instance is counted under exactly one; a rollout step is never not-applicable
VERDICTS = ("holds", "tight", "violated", "undecided", "not-applicable")
STEP_VERDICTS = VERDICTS[:4]


@dataclass(frozen=True)
class Slack:
    """The smallest strict slack of a cell (or step) and where: its chunk and the index in it."""

    value: float
    chunk: str
    index: int


@dataclass(frozen=True)
class Counts:
    """The tallies of a set of instances: ``instances``, ``chunks``, ``verdicts`` (count per verdict),
    ``exact`` (verdicts the exact path decided), ``tight`` (the share of tight instances among the
    applicable ones, 95% Wilson), ``smallest`` (the smallest strict slack, None: no strict instance),
    ``hist`` (strict instances per bin of log10 slack, :data:`~verification.stress.checks.summaries.EDGES`)."""

    instances: int
    chunks: int
    verdicts: Tally
    exact: int
    tight: Share
    smallest: Optional[Slack]
    hist: tuple[int, ...]

    def count(self, *verdicts: str) -> int:
        return self.verdicts.count(*verdicts)

    @property
    def applicable(self) -> int:
        """Instances the statement applies to: all but the not-applicable ones."""
        return self.instances - self.count("not-applicable")

    @classmethod
    def of(cls, instances: int, chunks: int, counts: Mapping[str, int], exact: int, smallest: Optional[Slack],
           hist: Iterable[int]) -> "Counts":
        verdicts = Tally(dict(sorted(counts.items())))
        return cls(instances, chunks, verdicts, exact,
                   Share.wilson(verdicts.count("tight"), instances - verdicts.count("not-applicable")),
                   smallest, tuple(hist))


@dataclass(frozen=True)
class Step:
    """Rollout step l of a cell's stacks (Theorem D2 for Ahat_l and R_{l-1}): verdict counts, the
    smallest strict slack and where."""

    verdicts: Tally
    smallest: Optional[Slack]


@dataclass(frozen=True)
class Cell:
    """One cell of a sweep: its family, n, L (rollout stacks) or d (a tokens matrix), its counts,
    and for rollout stacks one :class:`Step` per step l = 1..L."""

    family: str
    n: int
    layers: Optional[int]
    d: Optional[int]
    counts: Counts
    steps: tuple[Step, ...] = ()

    def later_steps(self) -> Tally:
        """The verdict counts over the rollout steps l >= 2 (step 1 is R_1 = Ahat_1: nothing to check)."""
        out: dict[str, int] = {}
        for st in self.steps[1:]:
            for k, v in st.verdicts.counts.items():
                out[k] = out.get(k, 0) + v
        return Tally(dict(sorted(out.items())))


@dataclass(frozen=True)
class Condition:
    """A theorem's equality condition against the exact tight verdicts: instances ``checked``, tight
    and said tight (``tight_said``), tight but not said (``tight_missed``), said but not tight."""

    checked: int
    tight_said: int
    tight_missed: int
    said_not_tight: int

    @property
    def agrees(self) -> bool:
        return self.tight_missed == 0 and self.said_not_tight == 0

    @property
    def disagree(self) -> int:
        return self.tight_missed + self.said_not_tight


def cell_of(key: str) -> tuple[str, int, Optional[int], Optional[int]]:
    """(family, n, L, d) of a cell key, a chunk key without its ``/c<k>``: ``'dirichlet/n16'``,
    ``'dirichlet/n16/L12'``, ``'gauss-1/n4/d2'``."""
    chunk = key + "/c0"
    family, n, _ = parse_chunk(chunk)
    return family, n, chunk_layers(chunk), chunk_dim(chunk)


def slack_of(value: Optional[float], at: Optional[tuple[str, int]]) -> Optional[Slack]:
    return None if value is None or at is None else Slack(value, at[0], at[1])


def cell(key: str, t: Merged) -> Cell:
    """The :class:`Cell` of the merged summaries ``t`` of cell ``key``."""
    family, n, L, d = cell_of(key)
    steps = tuple(Step(Tally(dict(sorted(st["counts"].items()))), slack_of(st["min_slack"], st["min_at"]))
                  for st in t.steps)
    return Cell(family, n, L, d, Counts.of(t.n, t.chunks, t.counts, t.exact, slack_of(t.min_slack, t.min_at), t.hist),
                steps)


def total(cells: Iterable[Cell]) -> Counts:
    """The counts of every instance of ``cells``: the smallest strict slack of them all."""
    instances = chunks = exact = 0
    counts: dict[str, int] = {}
    smallest: Optional[Slack] = None
    hist = [0] * (len(EDGES) + 1)
    for c in cells:
        k = c.counts
        instances, chunks, exact = instances + k.instances, chunks + k.chunks, exact + k.exact
        for v, m in k.verdicts.counts.items():
            counts[v] = counts.get(v, 0) + m
        if k.smallest is not None and (smallest is None or k.smallest.value < smallest.value):
            smallest = k.smallest
        hist = [a + b for a, b in zip(hist, k.hist)]
    return Counts.of(instances, chunks, counts, exact, smallest, hist)


def order(c: Cell) -> tuple:
    """A cell's place in its table: family, n, L, d."""
    return c.family, c.n, c.layers or 0, c.d or 0


def condition(rows: Iterable[dict]) -> Optional[Condition]:
    """The equality condition against the exact tight verdicts, summed over the summary ``rows``
    (None: the theorem states no condition)."""
    out: Optional[dict] = None
    for row in rows:
        cond = row["body"].get("condition")
        if cond is None:
            continue
        out = out or {"checked": 0, "tight_said": 0, "tight_missed": 0, "said_not_tight": 0}
        for k in out:
            out[k] += cond.get(k, 0)
    return None if out is None else Condition(**out)
