"""The outcomes of one claim over draws: the supported share among the decided draws (a Wilson
:class:`verification.findings.Share`) with the inconclusive draws counted apart.

>>> o = Outcomes.of(["supported", "refuted", "inconclusive", "supported"])
>>> o.share.k, o.share.n, o.inconclusive, o.total
(2, 3, 1, 4)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from verification.findings import Share


@dataclass(frozen=True)
class Outcomes:
    """The outcomes of one claim over draws: ``share`` the supported among the decided (supported or
    refuted; Wilson 95%), ``inconclusive`` the draws that decided nothing."""

    share: Share
    inconclusive: int = 0

    @classmethod
    def of(cls, verdicts: Iterable[str]) -> "Outcomes":
        vs = list(verdicts)
        k = sum(v == "supported" for v in vs)
        n = k + sum(v == "refuted" for v in vs)
        return cls(Share.wilson(k, n), len(vs) - n)

    @classmethod
    def of_records(cls, recs: Iterable[dict]) -> "Outcomes":
        """The outcomes of records by their ``verdict``."""
        return cls.of(x["verdict"] for x in recs)

    @classmethod
    def of_hits(cls, hits: Iterable[Optional[bool]]) -> "Outcomes":
        """Hits (True), misses (False) and undecided measurements (None)."""
        return cls.of("inconclusive" if h is None else "supported" if h else "refuted" for h in hits)

    @property
    def total(self) -> int:
        return self.share.n + self.inconclusive
