"""Findings: the typed values a family's report and its paper part both render, built once from the
plan's stored chunks by the family's ``findings(store, plan)`` (``verification/<family>/findings.py``).

A findings value holds numbers, never text made from numbers: a :class:`Share` keeps its count and
its total, an :class:`Estimate` its value and interval, a :class:`Decision` its outcome with the
statistic, interval, level and method that decided it, a :class:`Tally` the verdict counts of one
cell. The statistics behind them are :mod:`verification.stats`; the renderers are the report's
(Markdown, CSV: :mod:`verification.report.tables`) and the paper's (macros, LaTeX tables:
:mod:`verification.paper`). Nothing downstream parses a formatted number back.

>>> s = Share.wilson(3, 10)
>>> s.value, round(s.lo, 3), round(s.hi, 3), s.method
(0.3, 0.108, 0.603, 'wilson')
>>> Share.forced_share(6).forced, Share.forced_share(6).value
(True, 1.0)
>>> Tally.of(["holds", "tight", "tight"]).share(("tight",)).k
2
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from theory.verdicts import ALPHA


@dataclass(frozen=True)
class Share:
    """k of n, with its 1 - ``ALPHA`` interval [lo, hi] and the method that made it ("wilson", or
    "wilson-clustered" for verdicts pooled over inputs; "count" without an interval); ``value`` is
    k / n (nan for n = 0). ``forced``: a theorem forces every one of the n (a check, never a finding):
    k = n and no interval (:meth:`forced`)."""

    k: int
    n: int
    lo: float
    hi: float
    method: str = "wilson"
    level: float = 1 - ALPHA
    forced: bool = False

    def __post_init__(self) -> None:
        if self.forced and (self.k != self.n or not (math.isnan(self.lo) and math.isnan(self.hi))):
            raise ValueError(f"a forced share is n of n with no interval, got {self.k}/{self.n} [{self.lo}, {self.hi}]")

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else math.nan

    @classmethod
    def forced_share(cls, n: int) -> "Share":
        """n of n, forced by a theorem: no interval (an interval on a share no draw can change would
        be a measurement of a proof)."""
        return cls(int(n), int(n), math.nan, math.nan, "forced", forced=True)

    @classmethod
    def wilson(cls, k: int, n: int) -> "Share":
        """k of n with its 95% Wilson score interval (:func:`verification.stats.wilson`)."""
        from verification.stats import wilson

        lo, hi = wilson(int(k), int(n))
        return cls(int(k), int(n), lo, hi, "wilson")


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its interval [lo, hi] (nan where there is none), the level and the
    method ("t", "percentile bootstrap", "order statistics", "exact", ...), over ``n`` units."""

    value: float
    lo: float = math.nan
    hi: float = math.nan
    method: str = ""
    level: float = 1 - ALPHA
    n: Optional[int] = None

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.lo) or math.isnan(self.hi))


@dataclass(frozen=True)
class Decision:
    """A statistical decision: its ``outcome`` (:class:`theory.verdicts.Outcome` value: supported,
    refuted, inconclusive, not-testable), the ``statistic`` and its ``interval`` that decided it,
    the ``level``, the ``method`` (the test) and, where the design could not decide, the ``reason``."""

    outcome: str
    statistic: Optional[float] = None
    interval: Optional[tuple[float, float]] = None
    level: float = 1 - ALPHA
    method: str = ""
    reason: str = ""
    p: Optional[float] = None


@dataclass(frozen=True)
class Tally:
    """The verdict counts of one cell (``{"holds": 12, "tight": 3, ...}``), in a fixed order."""

    counts: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, verdicts: Iterable[str]) -> "Tally":
        return cls(dict(sorted(Counter(str(v) for v in verdicts).items())))

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def count(self, *verdicts: str) -> int:
        return sum(self.counts.get(v, 0) for v in verdicts)

    def share(self, verdicts: tuple[str, ...], of: Optional[tuple[str, ...]] = None) -> Share:
        """The Wilson share of ``verdicts`` among ``of`` (default: every verdict counted)."""
        n = self.total if of is None else self.count(*of)
        return Share.wilson(self.count(*verdicts), n)
