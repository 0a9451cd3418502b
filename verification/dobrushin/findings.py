"""The Dobrushin family's findings: what the stored D1/D2 campaign and its causal-share check say,
as typed values (:mod:`verification.findings`), built once from the plan's chunks and rendered by
both the report (:mod:`verification.dobrushin.report`) and the paper part
(:mod:`verification.dobrushin.paper`). Numbers only: no formatting.

Per (family, n) a :class:`Cell` (the shares of exact equality of D1 and D2, how D1 was decided, the
smallest strict slack, violations); per causal-share size a :class:`CausalSize` (the campaign's
share of tight causal pairs tested against the predicted pi_n^2 by the exact binomial test, Holm
across the sizes; the check's own share, its predicted verdicts and the TOST agreement it stored).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from numerics.sources.random import DISTRIBUTIONS
from theory.verdicts import ALPHA, Outcome
from verification.dobrushin.checks import CAUSAL_MARGIN, Plan
from verification.findings import Decision, Estimate, Share
from verification.stats import binomial_p, holm

@dataclass(frozen=True)
class Cell:
    """One (family, n) of the campaign: ``d1`` the D1 instances with exact equality, ``d1_first``
    those tight only through token 0, ``d1_exact`` how many were decided on the exact rational path,
    ``d2`` the D2 pairs with exact equality; ``min_slack`` the smallest positive strict D1 slack (None
    without one, or where ``unresolved``: a strict record stored without a positive slack)."""

    family: str
    n: int
    d1: Share
    d1_first: Share
    d1_exact: int
    d2: Share
    min_slack: Optional[float]
    unresolved: bool
    violated: int
    undecided: int


@dataclass(frozen=True)
class CausalSize:
    """The causal-D2 prediction at one size n: ``campaign`` the campaign's tight pairs,
    ``predicted`` pi_n^2 with its interval, ``binomial`` the exact binomial test of the campaign's
    count against it (``p``: Holm-adjusted across the sizes; None where the campaign has no pairs),
    ``check`` the check's tight pairs, ``verdicts_predicted`` its pairs whose exact verdict the
    condition predicts, ``agreement`` the stored TOST outcome of the two shares."""

    n: int
    campaign: Share
    predicted: Estimate
    binomial: Optional[Decision]
    check: Share
    verdicts_predicted: Share
    agreement: Decision


@dataclass(frozen=True)
class Findings:
    """The plan's cells (family order, then n) and its causal-share sizes (empty without the check)."""

    cells: tuple[Cell, ...]
    causal: tuple[CausalSize, ...] = ()
    margin: float = CAUSAL_MARGIN

    @property
    def families(self) -> list[str]:
        return list(dict.fromkeys(c.family for c in self.cells))

    @property
    def sizes(self) -> list[int]:
        return sorted({c.n for c in self.cells})

    def cell(self, family: str, n: int) -> Optional[Cell]:
        return next((c for c in self.cells if c.family == family and c.n == n), None)

    def select(self, families: Iterable[str], sizes: Callable[[int], bool] = lambda n: True) -> list[Cell]:
        fams = tuple(families)
        return [c for c in self.cells if c.family in fams and sizes(c.n)]

    def pooled(self, which: str, families: Iterable[str], sizes: Callable[[int], bool] = lambda n: True) -> Share:
        """The share ``which`` of a cell ("d1", "d1_first", "d2") pooled over the cells of ``families`` at ``sizes``."""
        shares = [getattr(c, which) for c in self.select(families, sizes)]
        if shares and all(s.forced for s in shares):
            return Share.forced_share(sum(s.n for s in shares))
        return Share.wilson(sum(s.k for s in shares), sum(s.n for s in shares))

    def span(self, which: str, families: Iterable[str],
             sizes: Callable[[int], bool] = lambda n: True) -> Optional[tuple[float, float]]:
        """The smallest and largest share ``which`` over the cells of ``families`` at ``sizes`` that
        have instances (None: no such cell)."""
        vals = [getattr(c, which).value for c in self.select(families, sizes) if getattr(c, which).n]
        return (min(vals), max(vals)) if vals else None


def cells(records: Iterable[dict]) -> tuple[Cell, ...]:
    """The cells of stored records (never recomputed), sorted by family order then n."""
    acc: dict = {}
    for r in records:
        p = r["provenance"]
        a = acc.setdefault((p["family"], p["n"]), {"d1": 0, "d1_eq": 0, "d1_first": 0, "d1_exact": 0, "d2": 0,
                                                    "d2_eq": 0, "slack": math.inf, "unresolved": False,
                                                    "viol": 0, "und": 0})
        a["viol"] += r["verdict"] == "violated"
        a["und"] += r["verdict"] == "undecided"
        if r["theorem"] == "dobrushin.factor":
            a["d1"] += 1
            a["d1_eq"] += r["verdict"] == "tight"
            a["d1_exact"] += bool(r["extra"].get("exact_path"))
            a["d1_first"] += bool(r["extra"].get("through_first")) and not r["extra"].get("through_other")
            if r["slack"] is not None and r["verdict"] == "holds":
                if r["slack"] > 0:           # strict slacks are positive (numerics.dobrushin.FactorCheck)
                    a["slack"] = min(a["slack"], r["slack"])
                else:                        # never shown as 0: 0 would read as "tight"
                    a["unresolved"] = True
        else:
            a["d2"] += 1
            a["d2_eq"] += r["verdict"] == "tight"
    order = {f: i for i, f in enumerate(DISTRIBUTIONS)}

    def d1_share(family: str, k: int, n: int) -> Share:
        """D1's tight share of one cell; on the causal family every verdict is forced tight (the causal
        corollary): n of n with no interval, a check (a causal cell short of n of n keeps its interval
        and fails the family's check)."""
        return Share.forced_share(n) if family == "causal" and n and k == n else Share.wilson(k, n)
    return tuple(Cell(f, n, d1_share(f, a["d1_eq"], a["d1"]), Share.wilson(a["d1_first"], a["d1"]), a["d1_exact"],
                      Share.wilson(a["d2_eq"], a["d2"]),
                      None if a["unresolved"] or a["slack"] == math.inf else a["slack"], a["unresolved"],
                      a["viol"], a["und"])
                 for (f, n), a in sorted(acc.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][1])))


def causal_sizes(store: Any, plan: Plan, found: tuple[Cell, ...]) -> tuple[CausalSize, ...]:
    """The causal-share check's sizes stored for ``plan``, beside the campaign's causal cells
    ``found``: the exact binomial test of the campaign's tight count against pi_n^2 (its own
    uncertainty ignored: thousands of draws), Holm across the sizes (a size without campaign pairs
    counts with p = 1)."""
    keys = {c.key for c in plan.causal_chunks()}
    check = {r["extra"]["n"]: r for r in store.records(plan.causal_campaign) if r["chunk"] in keys}
    sizes = [n for n in plan.causal_sizes() if n in check]
    campaign = {c.n: c.d2 for c in found if c.family == "causal"}
    empty = Share.wilson(0, 0)
    p = [binomial_p(campaign[n].k, campaign[n].n, check[n]["extra"]["predicted"]) if campaign.get(n, empty).n
         else 1.0 for n in sizes]
    out = []
    for n, padj in zip(sizes, holm(p)):
        r, ours = check[n], campaign.get(n, empty)
        e = r["extra"]
        lo, hi = e["predicted_interval"]
        test = Decision(Outcome.REFUTED.value if padj < ALPHA else Outcome.INCONCLUSIVE.value, statistic=ours.value,
                        method="exact binomial test of the campaign's count against pi_n^2, Holm across sizes",
                        reason="" if padj < ALPHA else "no difference from the prediction detected", p=padj)
        out.append(CausalSize(
            n, ours, Estimate(e["predicted"], lo, hi, "Wilson interval of pi_n, squared", n=e["pi_draws"]),
            test if ours.n else None, Share.wilson(e["tight"], e["pairs"]), Share.wilson(e["verdict_agrees"], e["pairs"]),
            Decision(r["verdict"], statistic=e["statistic"], interval=tuple(e["interval"]), level=1 - 2 * ALPHA,
                     method=e["method"], p=e["p_equivalent"])))
    return tuple(out)


def findings(store: Any, plan: Plan) -> Findings:
    """The findings of ``plan``: exactly its chunks of the campaign (a user's run of other families
    or sizes into the same campaign is never read) and, when the plan has it, its causal-share check."""
    keys = {c.key for c in plan.chunks()}
    found = cells(r for r in store.records(plan.campaign) if r["chunk"] in keys)
    return Findings(found, causal_sizes(store, plan, found) if plan.causal_sizes() else ())
