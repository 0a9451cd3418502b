"""The Villani map's findings: each (family, data seed, beta, lambda) outcome (:class:`MapPoint`) and
lambda_V(beta) per family, data seed and beta against the seed's hypothesis (:class:`Boundary`),
built from the stored records of the map campaign.
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


def villani_map(records: list[dict]) -> tuple[tuple[MapPoint, ...], tuple[Boundary, ...]]:
    """The map's ``records`` as points (in store order) and boundaries (by family, data seed, beta)."""
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
