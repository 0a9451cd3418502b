"""The rank family's findings: every number its report and its paper part show, as typed values
built once from the plan's stored campaigns (:func:`findings`), with no formatting.

    linear     the linear surrogate: certified optimum, GD (population, finite data), estimators
    attention  kernel recovery, GD students, the interpolation ladder
    softmax    softmax recovery by value map and the estimators on the recovered kernels
    weights    effective ranks of the trained heads
    claims     the paper's claims, each with its evidence and its :class:`Decision`
    outcomes   the outcomes of a claim over draws (:class:`Outcomes`)

Shares of draws of a claim are :class:`~verification.rank.findings.outcomes.Outcomes` (the supported
among the decided, with the inconclusive counted apart); counts of certified instances and recoveries are
:class:`verification.findings.Share`; verdict counts of a cell are :class:`Tally`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from verification.rank.findings.outcomes import Outcomes

__all__ = ["Findings", "Outcomes", "findings"]


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
