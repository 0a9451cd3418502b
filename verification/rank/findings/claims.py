"""The claims of Yoon's Entropic Bound tested by the rank family, each with its evidence (typed
values of the linear and attention findings) and its :class:`Decision`, in two kinds:

- ``theorem``: a statement proved (in the paper or by linear algebra: Eckart-Young deficiency and
  achievability, exact recovery of a linear kernel from noiseless data), *checked* here: it holds
  where every instance is certified (else undecided: a violation stops the run). A check, never a
  finding.
- ``claim``: a claim *tested* here. A claim that something happens in most draws is decided by a 95%
  interval against one half (:func:`verification.stats.interval_outcome`): where the draws come from
  a handful of teachers, the interval is over the teachers (:class:`~verification.rank.findings.
  outcomes.Clustered`: per-teacher shares, a t interval with df = teachers - 1); where the design has
  conditions, every condition is decided (:func:`per_condition`); where the paper names an
  estimator, it is the primary outcome and the best of the estimators compared is exploratory,
  corrected for the choice (:func:`best_of`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from verification.findings import Decision, Estimate, Share, Tally
from verification.stats import ALPHA, interval_outcome, score_p, wilson, z_of

CERTIFIED = "exact certification"
WILSON = "95% Wilson interval against 1/2"
PRIMARY = "energy_0.9"     # the paper's estimator (its energy effective rank), pre-specified: the primary outcome


@dataclass(frozen=True)
class Claim:
    """One claim: ``key`` names it (the paper part words it), ``kind`` "theorem" (checked) or
    "claim" (tested), ``evidence`` the typed values its result shows, in the order shown, and
    ``decision`` its outcome."""

    key: str
    evidence: tuple
    decision: Decision
    kind: str = "claim"


@dataclass(frozen=True)
class Condition:
    """One condition of a design (its ``key``) with its draws' share and its outcome against 1/2."""

    key: tuple
    share: Share
    outcome: str


@dataclass(frozen=True)
class PerCondition:
    """A claim decided per condition: the pooled share (descriptive), every condition, the worst."""

    pooled: Share
    conditions: tuple
    worst: Condition
    supported: int


@dataclass(frozen=True)
class BestOf:
    """The best of ``family`` estimators (chosen after seeing the data): its mean share over units,
    the Bonferroni interval (level 1 - alpha / family) and the Bonferroni-corrected p of the score
    test against 1/2 (:func:`verification.stats.score_p`)."""

    estimator: str
    family: int
    estimate: Estimate
    p: float
    outcome: str


def certified(tally: Tally, verdicts: tuple[str, ...] = ("holds", "tight")) -> tuple[Share, Decision]:
    """The instances of a proved statement certified (``verdicts``) and its decision: holds where
    every instance is certified, else undecided."""
    share = Share.wilson(tally.count(*verdicts), tally.total)
    return share, Decision("holds" if share.k == share.n > 0 else "undecided", share.value, method=CERTIFIED)


def most(share: Share) -> Decision:
    """A claim that something happens in most draws, decided on ``share`` (its Wilson interval)."""
    return Decision(interval_outcome(share.lo, share.hi) if share.n else "inconclusive", share.value,
                    (share.lo, share.hi), method=WILSON)


def most_clustered(c: Any) -> Decision:
    """A claim that something happens in most draws whose draws come in clusters (``c``, a
    :class:`~verification.rank.findings.outcomes.Clustered`): its teacher-level interval against 1/2."""
    if not c.clusters:
        return Decision("inconclusive", method="no draws")
    return Decision(interval_outcome(c.lo, c.hi), c.mean, (c.lo, c.hi), method=f"{c.method} over teachers, against 1/2")


def per_condition(cells: list[tuple], alpha: float = ALPHA) -> tuple[PerCondition, Decision]:
    """``cells``: (condition, :class:`Share`) of a claim that holds in most draws *unconditionally*.
    Supported when every condition's 1 - alpha Wilson interval lies above 1/2 (an intersection-union
    test: each at alpha, no correction); refuted when some condition's Bonferroni interval (level
    1 - alpha / conditions) lies below 1/2; inconclusive otherwise. A pooled share hides a failing
    condition; this does not."""
    m = len(cells)
    conds = []
    for key, s in cells:
        lo, hi = wilson(s.k, s.n, z_of(1 - alpha / m))
        out = "supported" if s.n and s.lo > 0.5 else "refuted" if s.n and hi < 0.5 else "inconclusive"
        conds.append(Condition(key, s, out))
    pooled = Share.wilson(sum(c.share.k for c in conds), sum(c.share.n for c in conds))
    worst = min(conds, key=lambda c: (c.share.value if c.share.n else 2.0, c.share.n))
    good = sum(c.outcome == "supported" for c in conds)
    outcome = "supported" if m and good == m else "refuted" if any(c.outcome == "refuted" for c in conds) \
        else "inconclusive"
    return PerCondition(pooled, tuple(conds), worst, good), Decision(
        outcome, worst.share.value, (worst.share.lo, worst.share.hi),
        method=f"every one of {m} conditions: 95% Wilson above 1/2 (intersection-union); refuted by a "
               f"Bonferroni ({m}) interval below 1/2; statistic: the worst condition")


def best_of(comparison: tuple, alpha: float = ALPHA) -> Optional[BestOf]:
    """The estimator with the largest mean share among those compared (``comparison``: the
    :class:`~verification.rank.findings.linear.Comparison` rows), as an exploratory outcome corrected
    for having chosen it among them: Wilson at level 1 - alpha / family at n = units, and the score
    test's p against 1/2 times the family (Bonferroni)."""
    rows = [c for c in comparison if c.share.n]
    if not rows:
        return None
    best = max(rows, key=lambda c: c.share.value)
    m, n = len(comparison), best.share.n
    lo, hi = wilson(best.share.value * n, n, z_of(1 - alpha / m))
    p = min(1.0, m * score_p(best.share.value, n))
    return BestOf(best.estimator, m, Estimate(best.share.value, lo, hi, f"Wilson, Bonferroni over {m}", 1 - alpha / m, n),
                  p, interval_outcome(lo, hi))


def claims_of(lin, att) -> tuple:
    """The claims in the paper's order, the theorems first, from the :class:`~verification.rank.
    findings.linear.LinearFindings` ``lin`` and :class:`~verification.rank.findings.attention.
    AttentionFindings` ``att``."""
    deficiency, d_decision = certified(lin.deficiency)
    achievability, a_decision = certified(lin.achievability)
    students, s_decision = certified(att.students_deficiency)
    exact = att.exact.get("exact/d3")
    unknown_exact = att.exact.get("exact/d3/value-map-unknown")
    primary = next(c for c in lin.comparison if c.estimator == PRIMARY)
    best = best_of(lin.comparison)
    gd, gd_decision = per_condition([((c.shape, c.N, c.noise, c.init), c.ends.share) for c in lin.data])
    energy = next(d for d in att.softmax.decisions if d.estimator == PRIMARY)
    unknown = att.softmax.value_maps["unknown"]
    native = att.native or {}

    def exact_row(key: str, check: Any) -> Claim:
        return Claim(key, (check.verdict if check else "-",),
                     Decision("holds" if check and check.verdict == "tight" else "undecided", method=CERTIFIED),
                     "theorem")

    def native_row(role: str) -> Claim:
        c = native.get(role, {}).get("both")
        if c is None:
            return Claim(f"attention {role}", (), Decision("not-testable", reason="no native campaign in the store"))
        return Claim(f"attention {role}", (native[role]["linear"], native[role]["softmax"], c), most_clustered(c))

    return (
        Claim("deficiency", (deficiency,), d_decision, "theorem"),
        Claim("achievability", (achievability,), a_decision, "theorem"),
        Claim("attention deficiency", (students,), s_decision, "theorem"),
        exact_row("linear exact recovery", exact),
        exact_row("linear exact recovery without the value map", unknown_exact),
        Claim("gd recovery", (gd,), gd_decision),
        Claim("pre-training recovery", (primary.share, best),
              Decision(interval_outcome(primary.share.lo, primary.share.hi), primary.share.value,
                       (primary.share.lo, primary.share.hi),
                       method=f"primary: the paper's estimator ({PRIMARY}), Wilson 95% over data draws, against 1/2; "
                              f"the best of {best.family if best else 0} exploratory, Bonferroni-corrected")),
        Claim("naive transfer fails", (att.ladder_misses_by_teacher,), most_clustered(att.ladder_misses_by_teacher)),
        native_row("achievability"),
        native_row("recovery"),
        Claim("robust estimator", (energy.by_teacher, energy.units), energy.decision),
        # the only pre-training estimator here is the linearised regression; the joint nonlinear fit that
        # recovers the kernel is training a one-layer student, so it cannot refute a claim about recovery
        # before training, and the regression's partial recovery cannot separate the claimed causes from
        # its own linearisation bias: not testable by this design (the numbers are reported, not decided)
        Claim("softmax partial recovery", (unknown.regression_by_teacher, unknown.fit),
              Decision("not-testable", reason="the one pre-training estimator is the linearised regression; the "
                                              "joint fit is training a one-layer student")),
        # "due to identifiability": the draws the regression misses should show converged fits of equal
        # cost with different kernels in most of them; decided over the teachers
        Claim("softmax identifiability", (unknown.failures_where_regression_fails, unknown.failures_by_teacher),
              most_clustered(unknown.failures_where_regression_fails)),
    )
