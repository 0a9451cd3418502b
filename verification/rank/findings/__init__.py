"""The rank family's findings: every number its report and its paper part show, as typed values
built once from the plan's stored campaigns (:func:`findings`), with no formatting.

    linear     the linear surrogate: certified optimum, GD (population, finite data), estimators
    attention  kernel recovery, GD students, the interpolation ladder
    softmax    softmax recovery by value map and the estimators on the recovered kernels
    weights    effective ranks of the trained heads
    claims     the paper's claims, each with its evidence and its :class:`Decision`

Shares of draws of a claim are :class:`Outcomes` (the supported among the decided, with the
inconclusive counted apart); counts of certified instances and recoveries are
:class:`verification.findings.Share`; verdict counts of a cell are :class:`Tally`.

>>> o = Outcomes.of(["supported", "refuted", "inconclusive", "supported"])
>>> o.share.k, o.share.n, o.inconclusive, o.total
(2, 3, 1, 4)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from verification.findings import Decision, Estimate, Share, Tally

__all__ = ["Decision", "Estimate", "Findings", "Outcomes", "Share", "Tally", "findings"]


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
class Findings:
    """The findings of a :class:`verification.rank.checks.Plan`: one value per part it runs (None
    for a part it does not), and the claims where every part ran."""

    linear: Optional[Any] = None       # findings.linear.LinearFindings
    attention: Optional[Any] = None    # findings.attention.AttentionFindings
    weights: Optional[Any] = None      # findings.weights.WeightsFindings
    claims: tuple = ()                 # findings.claims.Claim, in the paper's order


def findings(store: Any, plan: Any) -> Findings:
    """The findings of every part of ``plan`` (a :class:`verification.rank.checks.Plan`) from the
    records of its campaigns in ``store``; the claims when the linear and attention parts ran."""
    lin = att = wts = None
    if "linear" in plan.parts:
        from verification.rank.findings.linear import linear_findings

        lin = linear_findings(store, plan.linear)
    if "attention" in plan.parts:
        from verification.rank.findings.attention import attention_findings

        att = attention_findings(store, plan.attention, plan.seed)
    if "weights" in plan.parts:
        from verification.rank.findings.weights import weights_findings

        wts = weights_findings(store)
    claims: tuple = ()
    if lin is not None and att is not None:
        from verification.rank.findings.claims import claims_of

        claims = claims_of(lin, att)
    return Findings(lin, att, wts, claims)
