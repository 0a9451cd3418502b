"""The claims of Yoon's Entropic Bound tested by the rank family, each with its evidence (typed
values of the linear and attention findings) and its :class:`Decision`: a statement the paper proves
holds where every instance is certified (else undecided: a violation stops the run); a claim that
something happens in most draws is decided by its 95% Wilson interval against one half
(:func:`verification.stats.share_outcome`, :func:`verification.stats.interval_outcome`)."""
from __future__ import annotations

from dataclasses import dataclass

from verification.findings import Decision, Share, Tally
from verification.stats import interval_outcome, share_outcome

CERTIFIED = "exact certification"
WILSON = "95% Wilson interval against 1/2"


@dataclass(frozen=True)
class Claim:
    """One claim: ``key`` names it (the paper part words it), ``evidence`` the typed values its
    result shows, in the order shown, and ``decision`` its outcome."""

    key: str
    evidence: tuple
    decision: Decision


def certified(tally: Tally, verdicts: tuple[str, ...] = ("holds", "tight")) -> tuple[Share, Decision]:
    """The instances of a proved statement certified (``verdicts``) and its decision: holds where
    every instance is certified, else undecided."""
    share = Share.wilson(tally.count(*verdicts), tally.total)
    return share, Decision("holds" if share.k == share.n > 0 else "undecided", share.value, method=CERTIFIED)


def most(share: Share) -> Decision:
    """A claim that something happens in most draws, decided on ``share`` (:func:`share_outcome`)."""
    return Decision(share_outcome(share.k, share.n), share.value, (share.lo, share.hi), method=WILSON)


def claims_of(lin, att) -> tuple:
    """The claims in the paper's order, from the :class:`~verification.rank.findings.linear.
    LinearFindings` ``lin`` and :class:`~verification.rank.findings.attention.AttentionFindings` ``att``."""
    deficiency, d_decision = certified(lin.deficiency)
    achievability, a_decision = certified(lin.achievability)
    students, s_decision = certified(att.students_deficiency)
    threshold = next(c for c in lin.comparison if c.estimator == "threshold_median").share
    linear, softmax = att.reach_zero["linear"].share, att.reach_zero["softmax"].share
    energy = next(d for d in att.softmax.decisions if d.estimator == "energy_0.9")
    exact = att.exact.get("exact/d3")
    unknown = att.softmax.value_maps["unknown"]
    return (
        Claim("deficiency", (deficiency,), d_decision),
        Claim("achievability", (achievability,), a_decision),
        Claim("gd recovery", (lin.data_ends,), most(lin.data_ends.share)),
        Claim("pre-training recovery", (lin.winner, threshold),
              Decision(interval_outcome(threshold.lo, threshold.hi), threshold.value, (threshold.lo, threshold.hi),
                       method=WILSON)),
        Claim("naive transfer fails", (att.ladder_misses,), most(att.ladder_misses)),
        Claim("attention deficiency", (students,), s_decision),
        Claim("attention achievability", (att.reach_zero["linear"], att.reach_zero["softmax"]),
              most(Share.wilson(linear.k + softmax.k, linear.n + softmax.n))),
        Claim("robust estimator", (energy.share,), energy.decision),
        Claim("linear exact recovery", (exact.verdict if exact else "-",),
              Decision("holds" if exact and exact.verdict == "tight" else "inconclusive", method=CERTIFIED)),
        # the only pre-training estimator here is the linearised regression; the joint nonlinear fit that
        # recovers the kernel is training a one-layer student, so it cannot refute a claim about recovery
        # before training, and the regression's partial recovery cannot separate the claimed causes from
        # its own linearisation bias: not testable by this design (the numbers are reported, not decided)
        Claim("softmax partial recovery", (unknown.regression, unknown.fit, unknown.identifiability_failures),
              Decision("not-testable", reason="the one pre-training estimator is the linearised regression; the "
                                              "joint fit is training a one-layer student")),
    )

