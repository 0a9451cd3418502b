"""The float tests of D1 at every tolerance of a sweep, and the verdicts within rounding of a tie,
read from the floats the records store beside each float verdict (campaigns from v6 on:
:func:`verification.measure.attention.float_values_key`): per float test
(:data:`numerics.dobrushin.float_tests.IMPLEMENTATIONS`) and precision, at each tolerance of
:data:`TOLERANCES`, absolute and relative, the verdicts it gets wrong against the exact verdict
(a two-sided test says tight, holds or violated: wrong where that differs from the exact verdict),
with the Wilson interval of every share (:func:`verification.trained.findings.records.cluster_share`);
and per precision the verdicts within rounding of a tie
(:func:`numerics.dobrushin.float_tests.near_tie`), of them those the condition in floats gets wrong.
A tolerance is applied to stored floats (:func:`numerics.dobrushin.float_tests.at_tolerance`); nothing
is recomputed from the attention.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from numerics.dobrushin.float_tests import DTYPES as PRECISIONS
from numerics.dobrushin.float_tests import IMPLEMENTATIONS as TESTS
from numerics.dobrushin.float_tests import at_tolerance, near_tie
from verification.findings import Share
from verification.measure.attention import float_key, float_values_key
from verification.trained.findings.records import cluster_share, count

TOLERANCES = (0.0, 1e-12, 1e-9, 1e-7, 1e-6, 1e-5)
KINDS = ("absolute", "relative")       # |lhs - rhs| <= t, or <= t max(|lhs|, |rhs|) (the condition: its slack)


@dataclass(frozen=True)
class SweepCell:
    """One float test in one precision at one tolerance: the verdicts it gets wrong (Wilson, design
    effect over inputs), those it calls tight and those it calls violated."""

    test: str
    precision: str
    kind: str
    tolerance: float
    wrong: Share
    tight: int
    violated: int


@dataclass(frozen=True)
class FloatSweep:
    """The sweep over ``verdicts`` exact D1 verdicts (all tokens, each head and the head mean), its
    :class:`SweepCell` per (test, precision, kind, tolerance); per precision the verdicts within rounding
    of a tie (``near``; of them the exact equalities), the condition's wrong verdicts at tolerance 0 and of
    them those within rounding of a tie; whether the sweep at tolerance 0 gives every stored tolerance-0
    verdict back; and per tolerance t > 0 the exact strict verdicts whose exact slack is at most t (those
    every test at an absolute tolerance t calls tight)."""

    verdicts: int
    cells: tuple[SweepCell, ...]
    near: dict[str, Share]
    near_equal: dict[str, int]          # of the verdicts within rounding of a tie, the exact equalities
    condition_wrong: dict[str, int]
    condition_wrong_near: dict[str, int]
    zero_agrees: bool
    slack_below: dict[float, int]       # per tolerance t > 0: the exact strict verdicts with exact slack <= t

    def cell(self, test: str, precision: str, kind: str, tolerance: float) -> SweepCell:
        return next(c for c in self.cells if (c.test, c.precision, c.kind, c.tolerance) == (test, precision, kind,
                                                                                            tolerance))

    def best(self, tests: tuple, precision: str) -> SweepCell:
        """The cell of ``tests`` in ``precision`` with the fewest wrong verdicts over every kind and
        tolerance (the first in sweep order where several tie): the tolerance most favourable to them,
        chosen with hindsight."""
        cells = [c for c in self.cells if c.test in tests and c.precision == precision]
        return min(cells, key=lambda c: c.wrong.k)


def has_values(r: dict) -> bool:
    """Whether a D1 record carries the floats of every float test (a v6 campaign's, all tokens)."""
    return all(float_values_key(dt, t) in r["extra"] for dt in PRECISIONS for t in TESTS)


def _values(d1: list, key: str) -> dict:
    names = d1[0]["extra"][key].keys()
    return {k: [r["extra"][key][k] for r in d1] for k in names}


def _share(d1: list, mask: Any) -> Share:
    hit = {id(r) for r, m in zip(d1, mask) if m}
    return cluster_share(d1, lambda r: id(r) in hit) or count(0, 0)


def float_sweep(records: list) -> Optional[FloatSweep]:
    """The :class:`FloatSweep` of the D1 records among ``records`` that carry the float tests'
    floats (:func:`has_values`); None where there are none (campaigns before v6, models without
    float tests).

    >>> r = {"verdict": "tight", "provenance": {"input": "a", "text_sha": "s", "n": 2}, "extra": {}}
    >>> float_sweep([r]) is None
    True
    """
    d1 = [r for r in records if r.get("theorem", "dobrushin.factor") == "dobrushin.factor" and has_values(r)]
    if not d1:
        return None
    exact = np.array([r["verdict"] for r in d1])
    n = np.array([int(r["provenance"]["n"]) for r in d1])
    slack = np.array([r["slack"] for r in d1], dtype=float)
    cells, agrees, near, equal, wrong, wrong_near = [], True, {}, {}, {}, {}
    for dt in PRECISIONS:
        cond = _values(d1, float_values_key(dt, "condition"))
        close = near_tie(cond, dt, n)
        near[dt], equal[dt] = _share(d1, close), int((close & (exact == "tight")).sum())
        for test in TESTS:
            vals = _values(d1, float_values_key(dt, test))
            stored = np.array([r["extra"].get(float_key(dt, test)) for r in d1])
            for kind in KINDS:
                for tol in TOLERANCES:
                    got = at_tolerance(test, vals, tol, relative=kind == "relative")
                    if tol == 0:
                        agrees = agrees and bool((got == stored).all())
                    miss = got != exact
                    cells.append(SweepCell(test, dt, kind, tol, _share(d1, miss), int((got == "tight").sum()),
                                           int((got == "violated").sum())))
                    if test == "condition" and tol == 0 and kind == "absolute":
                        wrong[dt], wrong_near[dt] = int(miss.sum()), int((miss & close).sum())
    below = {t: int(((exact == "holds") & (slack <= t)).sum()) for t in TOLERANCES if t > 0}
    return FloatSweep(len(d1), tuple(cells), near, equal, wrong, wrong_near, agrees, below)
