"""The Villani map's findings: each (family, data seed, beta, lambda) outcome (:class:`MapPoint`) and
lambda_V(beta) per family, data seed and beta against the seed's hypothesis (:class:`Boundary`),
built from the stored records of the map campaign; for lora2 the analytic bracket of lambda_V(beta)
per data seed and what it implies for each quantifier order of the seed's condition (:class:`Analytic`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from verification.report.aggregate import group

SEED_HYPOTHESIS = "every lambda > 0 (any beta, any data)"


@dataclass(frozen=True)
class MapPoint:
    """One (family, data seed, beta, lambda) of the Villani map: its outcome and lambda_V(beta)."""

    family: str
    data_seed: int
    beta: float
    lam: float
    outcome: str
    statistic: float
    certified: Any


@dataclass(frozen=True)
class Boundary:
    """lambda_V(beta) at one (family, data seed, beta): the estimate with its interval, the certified
    bracket where one exists, how it is known (``status``: "proved" = 0 by proof, "certified",
    "estimate"), and the lambda grid's outcomes (``refuted`` of ``points``, ``refuted_enclosed`` of
    them certified)."""

    family: str
    data_seed: int
    beta: float
    estimate: float
    lo: float
    hi: float
    certified_lo: Optional[float]
    certified_hi: Optional[float]
    status: str
    refuted: int
    points: int
    refuted_enclosed: int
    estimate_within_bracket: Optional[bool]

    @property
    def fails(self) -> bool:
        """Villani's route fails for some lambda > 0 (certified, or by the estimate's interval)."""
        if self.status == "certified":
            return self.certified_lo > 0
        return self.status == "estimate" and self.lo > 0

    @property
    def certified_positive(self) -> bool:
        return self.status == "certified" and self.certified_lo > 0


@dataclass(frozen=True)
class Analytic:
    """The analytic bracket sqrt(2a/beta) <= lambda_V(beta) <= sqrt(2A/beta) of one lora2 data set:
    ``a`` a certified lower bound of L''(p*) at a critical point p* of L (in the cell ``p_star``; None
    when none is enclosed), ``A`` a certified upper bound of sup L''; ``per_beta``: (beta, analytic lo,
    analytic hi, certified lo, certified hi, the two brackets meet); ``outcome``: the seed's condition
    read for every beta (refuted when a > 0)."""

    family: str
    data_seed: int
    a: Optional[float]
    A: float
    p_star: Optional[tuple]
    per_beta: tuple
    consistent: bool
    outcome: str

    @property
    def every_beta_refuted(self) -> bool:
        """lambda_V(beta) >= sqrt(2a/beta) > 0 at every beta > 0: the reading for every beta fails."""
        return self.a is not None and self.a > 0

    @property
    def beta0_times_lambda2(self) -> float:
        """Villani's condition holds at (beta, lambda) whenever beta lambda^2 > 2A (the reading for beta large)."""
        return 2 * self.A


def analytic(records: list[dict]) -> tuple[Analytic, ...]:
    """The map's analytic-bracket ``records`` (lora2), by data seed."""
    out = [Analytic(r["extra"]["family"], r["extra"]["data_seed"], r["extra"]["L2_at_p_star"], r["extra"]["sup_L2"],
                    None if r["extra"]["p_star"] is None else tuple(r["extra"]["p_star"]),
                    tuple(tuple(x) for x in r["extra"]["per_beta"]), bool(r["extra"]["consistent"]), r["verdict"])
           for r in records if r["extra"].get("kind") == "analytic"]
    return tuple(sorted(out, key=lambda x: (x.family, x.data_seed)))


def villani_map(records: list[dict]) -> tuple[tuple[MapPoint, ...], tuple[Boundary, ...]]:
    """The map's ``records`` (kind ``map``) as points (in store order) and boundaries (by family, data
    seed, beta)."""
    records = [r for r in records if r["extra"].get("kind") == "map"]
    points = tuple(MapPoint(r["extra"]["family"], r["extra"]["data_seed"], r["extra"]["beta"], r["extra"]["lam"],
                            r["verdict"], r["extra"]["statistic"], r["extra"]["certified"]) for r in records)
    out = []
    for (fam, seed, beta), recs in sorted(group(records, lambda r: (r["extra"]["family"], r["extra"]["data_seed"],
                                                                     r["extra"]["beta"])).items()):
        e = recs[0]["extra"]
        lo, hi = e["interval"]
        cb = e.get("certified_bracket")
        status = ("proved" if e["certified"] and e["numerically_holds"] else
                  "certified" if cb is not None else "estimate")
        ref = [r for r in recs if r["verdict"] == "refuted"]
        out.append(Boundary(fam, seed, beta, e["statistic"], lo, hi, None if cb is None else cb[0],
                            None if cb is None else cb[1], status, len(ref), len(recs),
                            sum(bool(r["extra"]["certified"]) for r in ref), e.get("estimate_within_bracket")))
    return points, tuple(out)
