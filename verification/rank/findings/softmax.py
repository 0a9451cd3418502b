"""Findings of softmax kernel recovery as stated (the recovery records of
:mod:`verification.rank.checks.attention`): per value map the linearised regression beside the
nonlinear fit, each estimator's rank of the recovered kernels, and each estimator's decision on the
claim that the energy effective rank is the robust one.

The estimator decision (claim "estimator e is the robust one": it gives r* at least as often as every
other on the same kernels). The independent units are the teachers: every setting (beta, T, noise,
value map) and both kernel sources (the regression and the fit started from it) of one teacher are
repeated measures of it, never independent draws. Per teacher, each estimator's share of its kernels
whose rank is r*; for each pair of estimators an exact sign test over the teachers on the difference of
their shares, Holm across every pair at ``ALPHA`` (:func:`compare`). supported: e is significantly
better than every other; refuted: some other is significantly better; inconclusive otherwise.
Statistic: e's share over all kernels (descriptive), with its 95% Wilson interval. The threshold
estimator needs the noise level of the kernel's entries, which no softmax route provides: not
applicable here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from verification.findings import Decision, Share
from verification.rank.checks.attention import KERNEL_TOL, fit_outcome, identifiability_failure, kernel_outcome
from verification.rank.findings.outcomes import Clustered, Outcomes
from verification.report.aggregate import median_keep_nan as _med
from verification.stats import ALPHA, best_outcome, pairwise

ESTIMATORS = ("energy_0.9", "energy_0.99", "entropy", "entropy_sigma")
SOURCES = (("regression", "known"), ("regression", "unknown"), ("fit", "known"), ("fit", "unknown"))
VALUE_MAPS = ("known", "unknown")


@dataclass(frozen=True)
class ValueMap:
    """The softmax draws of one value map (W_V known / unknown): the regression's recoveries, the
    nonlinear fits' outcomes, their converged starts, best starts converged and identifiability
    failures (converged starts of equal cost, different kernels), and the fit outcomes counted."""

    value_map: str
    draws: int
    regression: Outcomes
    fits: int
    fit: Outcomes
    median_fit_error: Optional[float]
    converged: Share
    best_converged: Share
    identifiability_failures: Share
    fit_counts: dict
    regression_by_teacher: Optional[Clustered] = None        # the regression's recoveries, teachers as clusters
    failures_by_teacher: Optional[Clustered] = None          # identifiability failures among every fitted draw
    failures_where_regression_fails: Optional[Clustered] = None   # ... among the draws the regression misses


@dataclass(frozen=True)
class KernelCell:
    """One kernel source and value map: how many kernels, each estimator's rank = r* outcomes."""

    source: str
    value_map: str
    kernels: int
    shares: dict


@dataclass(frozen=True)
class EstimatorDecision:
    """One estimator on "e is the robust estimator": its share of kernels with rank r*, the teachers
    (units), whom it is worse / better than (Holm), the adjusted p-values and the decision."""

    estimator: str
    share: Share
    units: int
    worse: tuple
    better: tuple
    p_values: dict
    decision: Decision
    by_teacher: Optional[Clustered] = None   # its kernels with rank r*, teachers as clusters


@dataclass(frozen=True)
class SoftmaxFindings:
    """Value maps (:data:`VALUE_MAPS` order), kernel cells (:data:`SOURCES` order, those with
    kernels), the estimator decisions (:data:`ESTIMATORS` order) and the number of teachers."""

    value_maps: dict
    kernels: tuple
    decisions: tuple
    teachers: int


def softmax_draws(recs: list[dict]) -> list[dict]:
    """The float softmax draws (not the exact checks)."""
    return [x for x in recs if x["provenance"].get("kind") == "softmax" and not x["instance"].startswith("exact")]


def _value_map(x: dict) -> str:
    return x["provenance"].get("value_map", "known")


def _hit(value: Any, r_star: int, estimator: str) -> Optional[bool]:
    if value is None:
        return None
    return (round(float(value)) if estimator.startswith("entropy") else int(value)) == r_star


def kernels(recs: list[dict]) -> list[tuple[str, str, dict]]:
    """Every recovered softmax kernel's ranks: (source, value map, ranks by estimator)."""
    out = []
    for x in softmax_draws(recs):
        vm = _value_map(x)
        out.append(("regression", vm, x["extra"]))
        if x["extra"].get("fit"):
            out.append(("fit", vm, x["extra"]["fit"]))
    return out


def teacher_hits(recs: list[dict], r_star: int) -> dict:
    """{teacher seed: {estimator: [hit or None per kernel]}}: every kernel of a teacher (each setting,
    both sources) under its one independent unit."""
    out: dict = {}
    for x in softmax_draws(recs):
        t = out.setdefault(x["provenance"]["seed"], {e: [] for e in ESTIMATORS})
        for k in [x["extra"]] + ([x["extra"]["fit"]] if x["extra"].get("fit") else []):
            for e in ESTIMATORS:
                t[e].append(_hit(k.get(e), r_star, e))
    return out


def compare(units: dict, estimators: tuple = ESTIMATORS, alpha: float = ALPHA) -> dict:
    """Pairwise comparison of estimators over independent units (``units``: {unit: {estimator: [hit
    or None]}}): per unit each estimator's share of hits; per pair an exact sign test on the units'
    differences, Holm across every pair (:func:`verification.stats.pairwise`).
    {estimator: (worse than, better than, {other: adjusted p})}."""
    return pairwise(units, estimators, "sign", alpha)


def estimator_outcomes(recs: list[dict], r_star: int) -> tuple:
    """Each estimator's :class:`EstimatorDecision` on "e is the robust estimator", the teachers as
    the units (:func:`compare`)."""
    ks = [k for _, _, k in kernels(recs)]
    units = teacher_hits(recs, r_star)
    cmp = compare(units)
    # the smallest two-sided p-value an exact sign test over the teachers can reach: all agree
    floor = min(1.0, 2 * 0.5 ** len(units)) if units else 1.0
    reason = (f"with {len(units)} teachers the smallest two-sided p of an exact sign test is {floor:.4g}, not below "
              f"{ALPHA:g}: no comparison can be significant" if floor >= ALPHA else "")
    out = []
    for e in ESTIMATORS:
        hits = [_hit(k.get(e), r_star, e) for k in ks]
        worse, better, p = cmp[e]
        share = Share.wilson(sum(h is True for h in hits), sum(h is not None for h in hits))
        by = Clustered.of_hits((t, h) for t, hs in units.items() for h in hs[e])
        out.append(EstimatorDecision(e, share, len(units), tuple(worse), tuple(better), p, Decision(
            best_outcome(worse, better, len(ESTIMATORS)), by.mean, (by.lo, by.hi), 1 - ALPHA,
            f"exact sign tests over teachers, Holm; share: {by.method} over teachers", reason=reason), by))
    return tuple(out)


def _value_maps(recs: list[dict]) -> dict:
    out = {}
    for vm in VALUE_MAPS:
        mine = [x for x in softmax_draws(recs) if _value_map(x) == vm]
        fits = [x["extra"]["fit"] for x in mine if x["extra"].get("fit")]
        judged = [fit_outcome(f, KERNEL_TOL).value for f in fits]
        out[vm] = ValueMap(
            vm, len(mine), Outcomes.of(kernel_outcome(x["extra"]["rel_error"], x["extra"].get("tol", KERNEL_TOL)).value
                                       for x in mine),
            len(fits), Outcomes.of(judged), _med([f["rel_error"] for f in fits]) if fits else None,
            Share.wilson(sum(f["converged"] for f in fits), sum(f["starts"] for f in fits)),
            Share.wilson(sum(bool(f.get("best_converged")) for f in fits), len(fits)),
            Share.wilson(sum(identifiability_failure(f) for f in fits), len(fits)),
            {o: judged.count(o) for o in ("supported", "refuted", "inconclusive") if judged.count(o)},
            Clustered.of((x["provenance"]["seed"], _recovered(x)) for x in mine),
            Clustered.of_hits((x["provenance"]["seed"], identifiability_failure(x["extra"]["fit"]))
                              for x in mine if x["extra"].get("fit")),
            Clustered.of_hits((x["provenance"]["seed"], identifiability_failure(x["extra"]["fit"]))
                              for x in mine if x["extra"].get("fit") and _recovered(x) == "refuted"))
    return out


def _recovered(x: dict) -> str:
    """A draw's regression outcome, judged from its stored kernel error."""
    return kernel_outcome(x["extra"]["rel_error"], x["extra"].get("tol", KERNEL_TOL)).value


def kernel_cells(recs: list[dict], r_star: int) -> tuple:
    """Per kernel source and value map (:class:`KernelCell`): each estimator's share of kernels whose
    rank is r*."""
    ks = kernels(recs)
    out = []
    for src, vm in SOURCES:
        mine = [k for s, v, k in ks if (s, v) == (src, vm)]
        if mine:
            out.append(KernelCell(src, vm, len(mine), {e: Outcomes.of_hits(_hit(k.get(e), r_star, e) for k in mine)
                                                       for e in ESTIMATORS}))
    return tuple(out)


def softmax_findings(recs: list[dict], r_star: int) -> SoftmaxFindings:
    """The :class:`SoftmaxFindings` of the recovery campaign's float draws ``recs`` at kernel rank ``r_star``."""
    return SoftmaxFindings(_value_maps(recs), kernel_cells(recs, r_star), estimator_outcomes(recs, r_star),
                           len(teacher_hits(recs, r_star)))
