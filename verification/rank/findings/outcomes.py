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


@dataclass(frozen=True)
class Clustered:
    """Outcomes whose draws come in clusters (the runs and settings of one teacher are repeated
    measures of it): ``k`` supported of ``n`` decided draws pooled, ``inconclusive`` apart, over
    ``clusters`` teachers; ``mean`` the unweighted mean of the teachers' shares with its 95% interval
    [lo, hi] by ``method`` (:func:`verification.stats.cluster_share`: a t interval with df = clusters
    - 1, or the Wilson interval over the clusters where their shares do not vary).

    >>> c = Clustered.of([("t0", "supported"), ("t0", "supported"), ("t1", "supported"), ("t1", "refuted")])
    >>> c.k, c.n, c.clusters, c.mean, c.method
    (3, 4, 2, 0.75, 'cluster t, df = 1')
    """

    k: int
    n: int
    clusters: int
    mean: float
    lo: float
    hi: float
    method: str
    inconclusive: int = 0

    @property
    def value(self) -> float:
        return self.mean

    @classmethod
    def of(cls, draws: Iterable[tuple]) -> "Clustered":
        """From (cluster, verdict) pairs, verdict supported / refuted / inconclusive."""
        from verification.stats import cluster_share

        by: dict = {}
        for c, v in draws:
            by.setdefault(c, []).append(v)
        ks = [sum(v == "supported" for v in vs) for vs in by.values()]
        ns = [sum(v in ("supported", "refuted") for v in vs) for vs in by.values()]
        r = cluster_share(ks, ns)
        return cls(sum(ks), sum(ns), r["clusters"], r["mean"], r["lo"], r["hi"], r["method"],
                   sum(len(vs) for vs in by.values()) - sum(ns))

    @classmethod
    def of_hits(cls, hits: Iterable[tuple]) -> "Clustered":
        """From (cluster, hit) pairs: True a hit, False a miss, None undecided."""
        return cls.of((c, "inconclusive" if h is None else "supported" if h else "refuted") for c, h in hits)
