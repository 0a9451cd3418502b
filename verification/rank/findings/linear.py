"""Findings of the linear rank campaigns (:mod:`verification.rank.checks.linear`): the certified
optimum per cell, GD on the population loss and on finite data, and the pre-training estimators
(their shares per cell, their paired comparisons over independent data draws), as typed values.

The data draws are the independent units of the estimator comparison: the noise levels of one draw
reuse its random numbers (:func:`verification.rank.checks.linear.estimator_chunk`), so they are
repeated measures of the unit, never independent draws (:func:`estimator_units`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from numerics.rank import linear as R
from verification.findings import Decision, Estimate, Share, Tally
from verification.rank.checks.linear import ESTIMATORS, SAME_INFORMATION
from verification.rank.findings.outcomes import Outcomes
from verification.report.aggregate import group
from verification.report.aggregate import median_keep_nan as _med
from verification.stats import ALPHA, best_outcome, holm, pairwise, sign_test, unit_share


@dataclass(frozen=True)
class RiskCell:
    """One (shape, covariance, r) of the optimum campaign: R(r) of seed 0, sigma_r*^2, the largest
    certified width and float error, the Eckart-Young-Mirsky agreements and the verdicts."""

    shape: str
    covariance: str
    r: int
    risk: Any
    sigma2: Any
    width: float
    fast_error: float
    eym_agrees: Share
    deficiency: Tally
    achievability: Tally


@dataclass(frozen=True)
class PopulationCell:
    """One (shape, r, init) of GD on the population loss: learned = min(r, r*) over the seeds, the
    learned ranks counted ((rank, seeds), None for a run without one) and the medians."""

    shape: str
    r: int
    r_star: int
    init: float
    learned: Outcomes
    learned_counts: tuple
    median_risk: Optional[float]
    optimum: Any
    max_gap: float
    max_rel_change: float
    median_grad_norm: Optional[float]
    median_first_step: Optional[float]


@dataclass(frozen=True)
class DataCell:
    """One (shape, N, noise, init) of GD on finite noisy data: whether the noise-level rank passes r*,
    where and how long it stays, where it ends (final ranks counted as (rank, seeds))."""

    shape: str
    N: int
    noise: float
    init: float
    passes: Outcomes
    first_step: Optional[float]
    last_step: Optional[float]
    span_decades: Optional[float]
    ends: Outcomes
    final_ranks: tuple
    escape_rank: Optional[float]
    grad_norm_end: Optional[float]
    risk_end: Optional[float]


@dataclass(frozen=True)
class EstimatorCell:
    """One (shape, N, noise) of the estimators: the design (sigma_r* against the noise edge at the
    true noise), each estimator's outcomes, and the pairs (better, worse) that differ (Holm)."""

    shape: str
    N: int
    noise: float
    sigma_r_star: float
    edge: float
    shares: dict
    better: tuple

    @property
    def below(self) -> bool:
        return self.sigma_r_star <= self.edge


@dataclass(frozen=True)
class UnitSummary:
    """Per spectrum shape (or "all"): each estimator's mean share over the independent data draws
    (an :class:`Estimate`, None where no unit decided), and the number of units."""

    shape: str
    means: dict
    units: int


@dataclass(frozen=True)
class Comparison:
    """One estimator on "e recovers r* most often" among those given the same information: its mean
    unit share, whom it is worse / better than (Holm), the adjusted p-values and the decision."""

    estimator: str
    share: Estimate
    worse: tuple
    better: tuple
    p_values: dict
    decision: Decision


@dataclass(frozen=True)
class Bias:
    """The estimators evaluated on a fixed noiseless geometric spectrum (definitions, not a measurement)."""

    spectrum: tuple
    energy_90: Any
    energy_99: Any
    entropy: Any
    entropy_sigma: Any


@dataclass(frozen=True)
class LinearFindings:
    """Everything the linear part reports: the cells of its tables and the numbers of its claims."""

    plan: Any
    risk: tuple
    population: tuple
    data: tuple
    estimators: tuple
    summary: tuple
    comparison: tuple
    deficiency: Tally
    achievability: Tally
    eym_agrees: Share
    identity: Tally
    identity_max_z: Optional[float]
    gd_population: Outcomes
    gd_population_by: dict
    data_passes: Share
    data_ends: Outcomes
    data_span: Optional[float]
    data_stays: Share
    data_escape: float
    estimator_outcomes: dict
    best: tuple
    winner: Optional[str]
    bias: Bias
    curves: tuple
    records: dict


def estimator_units(est: list[dict], names: tuple = SAME_INFORMATION) -> dict:
    """{(shape, N, draw): {estimator: [hit per noise level]}}: one unit per independent data draw."""
    out: dict = {}
    for x in est:
        p = x["provenance"]
        if p["estimator"] in names:
            unit = out.setdefault((p["shape"], p["N"], p.get("draw", p["seed"])), {e: [] for e in names})
            unit[p["estimator"]].append(None if x["verdict"] == "inconclusive" else x["verdict"] == "supported")
    return out


def _unit_shares(units: dict, e: str) -> list[float]:
    """Each unit's share of its decided measurements on which ``e`` recovers r* (units with none left out)."""
    out = []
    for u in units.values():
        hits = [h for h in u[e] if h is not None]
        if hits:
            out.append(sum(hits) / len(hits))
    return out


def _unit_estimate(shares: list[float]) -> Estimate:
    m = unit_share(shares)
    return Estimate(m["mean"], *m["interval"], method="wilson over units", n=m["units"])


def estimator_comparison(est: list[dict], names: tuple = SAME_INFORMATION, alpha: float = ALPHA) -> tuple:
    """Each estimator's :class:`Comparison` on "e recovers r* most often" among the estimators given
    the same information: the data draws are the units (:func:`estimator_units`), every pair compared
    by the exact sign test on the units' differences of shares, Holm across every pair
    (:func:`verification.stats.pairwise`); the share is the mean of the units' shares (Wilson at
    n = units). Conditional on the plan's teachers (one per spectrum shape)."""
    units = estimator_units(est, names)
    cmp = pairwise(units, names, "sign", alpha)
    out = []
    for e in names:
        worse, better, p = cmp[e]
        share = _unit_estimate(_unit_shares(units, e))
        out.append(Comparison(e, share, tuple(worse), tuple(better), p, Decision(
            best_outcome(worse, better, len(names)), share.value, (share.lo, share.hi), 1 - alpha,
            "exact sign tests over data draws, Holm")))
    return tuple(out)


def cell_comparisons(est: list[dict], names: tuple = SAME_INFORMATION, alpha: float = ALPHA) -> dict:
    """Within each cell (shape, N, noise) the draws are independent and every estimator sees the
    same ones: per pair McNemar's exact test on the discordant draws (:func:`verification.stats.
    sign_test` on hit differences), Holm across every pair of every cell. {cell: ((better, worse),
    ...)} for the pairs whose adjusted p < alpha."""
    cells = group([x for x in est if x["provenance"]["estimator"] in names],
                  lambda x: (x["provenance"]["shape"], x["provenance"]["N"], x["provenance"]["noise"]))
    tests = []
    for cell, recs in cells.items():
        hits: dict = {}
        for x in recs:
            if x["verdict"] != "inconclusive":
                hits.setdefault(x["provenance"].get("draw", x["provenance"]["seed"]), {})[x["provenance"]["estimator"]] = \
                    x["verdict"] == "supported"
        for i, e in enumerate(names):
            for o in names[i + 1:]:
                diffs = [int(h[e]) - int(h[o]) for h in hits.values() if e in h and o in h]
                r = sign_test(diffs) if diffs else {"p_two": 1.0, "positive": 0, "negative": 0}
                tests.append((cell, e, o, r["p_two"], r["positive"] - r["negative"]))
    adj = holm([t[3] for t in tests]) if tests else []
    out: dict = {cell: [] for cell in cells}
    for (cell, e, o, _, sign), p in zip(tests, adj):
        if p < alpha and sign != 0:
            out[cell].append((e, o) if sign > 0 else (o, e))
    return {cell: tuple(pairs) for cell, pairs in out.items()}


def _risk(opt: list[dict]) -> tuple:
    cells = []
    for (shape, cov, r), recs in group([x for x in opt if "r" in x["provenance"]],
                                       lambda x: (x["provenance"]["shape"], x["provenance"]["covariance"],
                                                  x["provenance"]["r"])).items():
        eym = [x for x in recs if x["theorem"] == "rank.linear.eckart_young"]
        dfc = [x for x in recs if x["theorem"] == "rank.linear.deficiency"]
        ach = [x for x in recs if x["theorem"] == "rank.linear.achievability"]
        cells.append(RiskCell(shape, cov, r, eym[0]["bound"], dfc[0]["bound"],
                              max(x["extra"]["certified_width"] for x in eym),
                              max(x["extra"]["fast_error"] for x in eym),
                              Share.wilson(sum(x["extra"].get("enclosures_overlap", False) for x in eym), len(eym)),
                              Tally.of(x["verdict"] for x in dfc), Tally.of(x["verdict"] for x in ach)))
    return tuple(cells)


def _population(pop: list[dict], r_star: int) -> tuple:
    cells = []
    for (shape, r, init), recs in group(pop, lambda x: (x["provenance"]["shape"], x["provenance"]["r"],
                                                         x["provenance"]["init_scale"])).items():
        ex = [x["extra"] for x in recs]
        counts = Counter(None if x["value"] is None else int(x["value"]) for x in recs)
        cells.append(PopulationCell(
            shape, r, r_star, init, Outcomes.of_records(recs),
            tuple(sorted(counts.items(), key=lambda kv: str(kv[0]))), _med([e["risk"] for e in ex]),
            ex[0]["optimum"], max(e["gap"] for e in ex), max(e["rel_change_last_tenth"] for e in ex),
            _med([e["grad_norm"] for e in ex]), _med([e["first_step_at_r_star"] for e in ex])))
    return tuple(cells)


def _data(data: list[dict]) -> tuple:
    cells = []
    for (shape, N, noise, init), recs in group(data, lambda x: (x["provenance"]["shape"], x["provenance"]["N"],
                                                                 x["provenance"]["noise"],
                                                                 x["provenance"]["init_scale"])).items():
        ex = [x["extra"] for x in recs]
        cells.append(DataCell(
            shape, N, noise, init, Outcomes.of_hits(bool(e["passes_r_star"]) for e in ex),
            _med([e["first_step_at_r_star"] for e in ex]), _med([e["last_step_at_r_star"] for e in ex]),
            _med([e["span_decades"] for e in ex]), Outcomes.of_records(recs),
            tuple(sorted(Counter(int(x["value"]) for x in recs).items())),
            _med([e["escape_final_rank"] for e in ex]), _med([e["grad_norm_end"] for e in ex]),
            _med([e["risk_end"] for e in ex])))
    return tuple(cells)


def _estimators(est: list[dict]) -> tuple:
    better = cell_comparisons(est)
    cells = []
    for (shape, N, noise), recs in group(est, lambda x: (x["provenance"]["shape"], x["provenance"]["N"],
                                                         x["provenance"]["noise"])).items():
        ex = recs[0]["extra"]
        cells.append(EstimatorCell(shape, N, noise, ex["sigma_r_star"], ex["detection_limit"],
                                   {e: Outcomes.of_records(x for x in recs if x["provenance"]["estimator"] == e)
                                    for e in ESTIMATORS}, better.get((shape, N, noise), ())))
    return tuple(cells)


def estimator_summary(est: list[dict]) -> tuple:
    """Per spectrum shape and "all" (:class:`UnitSummary`): each estimator's mean share of draws
    recovering r* over the independent data draws (noise levels of a draw averaged first)."""
    out = []
    for shape in sorted({x["provenance"]["shape"] for x in est}) + ["all"]:
        units = estimator_units([x for x in est if shape == "all" or x["provenance"]["shape"] == shape], ESTIMATORS)
        means = {}
        for e in ESTIMATORS:
            shares = _unit_shares(units, e)
            means[e] = _unit_estimate(shares) if shares else None
        out.append(UnitSummary(shape, means, len(units)))
    return tuple(out)


def bias() -> Bias:
    """The estimators on the geometric spectrum of r* = 3 (:class:`Bias`)."""
    s = R.spectrum(3, "geometric")
    return Bias(tuple(s), R.energy_rank(s, 0.9), R.energy_rank(s, 0.99), R.entropy_rank(s), R.entropy_rank(s, 1))


def _curves(est: list[dict]) -> tuple:
    """Per estimator: the N run and the share of draws recovering r* at each (all shapes, noises)."""
    out = []
    for e in ESTIMATORS:
        cell = group([x for x in est if x["provenance"]["estimator"] == e], lambda x: (x["provenance"]["N"],))
        out.append((e, tuple(k[0] for k in cell),
                    tuple(float(np.mean([x["verdict"] == "supported" for x in v])) for v in cell.values())))
    return tuple(out)


def linear_campaigns(plan: Any) -> dict[str, str]:
    """The four campaigns of the linear part: optimum, gd-pop, gd-data, estimators."""
    return {k: f"rank.{k}-{plan.tag}" for k in ("optimum", "gd-pop", "gd-data", "estimators")}


def findings_of(opt: list[dict], pop: list[dict], data: list[dict], est: list[dict], plan: Any) -> LinearFindings:
    """The :class:`LinearFindings` of the records of the four campaigns of ``plan`` (a
    :class:`verification.rank.checks.linear.Plan`)."""
    r_star = plan.r_star
    applicable = {name: Tally.of(x["verdict"] for x in opt if x["theorem"] == f"rank.linear.{name}"
                                 and x["verdict"] != "not-applicable") for name in ("deficiency", "achievability")}
    eym = [x for x in opt if x["theorem"] == "rank.linear.eckart_young"]
    ident = [x for x in opt if x["theorem"] == "rank.linear.excess_risk_identity"]
    passes = sum(bool(x["extra"]["passes_r_star"]) for x in data)
    spans = [x["extra"]["span_decades"] for x in data if x["extra"]["passes_r_star"]]
    shares = {e: Outcomes.of_records(x for x in est if x["provenance"]["estimator"] == e) for e in ESTIMATORS}
    rates = {e: o.share.value if o.share.n else -1.0 for e, o in shares.items()}
    comparison = estimator_comparison(est)
    won = [c.estimator for c in comparison if c.decision.outcome == "supported"]
    return LinearFindings(
        plan=plan, risk=_risk(opt), population=_population(pop, r_star), data=_data(data),
        estimators=_estimators(est), summary=estimator_summary(est), comparison=comparison,
        deficiency=applicable["deficiency"], achievability=applicable["achievability"],
        eym_agrees=Share.wilson(sum(bool(x["extra"].get("enclosures_overlap")) for x in eym), len(eym)),
        identity=Tally.of(x["verdict"] for x in ident),
        identity_max_z=max((abs(x["extra"]["mc_z"]) for x in ident), default=None),
        gd_population=Outcomes.of_records(pop),
        gd_population_by={rel: Outcomes.of_records(x for x in pop if test(x["provenance"]["r"]))
                          for rel, test in (("below", lambda r: r < r_star), ("at", lambda r: r == r_star),
                                            ("above", lambda r: r > r_star))},
        data_passes=Share.wilson(passes, len(data)), data_ends=Outcomes.of_records(data),
        data_span=float(np.median(spans)) if spans else None,
        data_stays=Share.wilson(sum(x["extra"]["last_step_at_r_star"] == plan.gd_steps for x in data), passes),
        data_escape=float(np.median([x["extra"]["escape_final_rank"] for x in data])),
        estimator_outcomes=shares,
        best=tuple(e for e in SAME_INFORMATION if rates[e] == max(rates[e] for e in SAME_INFORMATION)),
        winner=won[0] if won else None, bias=bias(), curves=_curves(est),
        records={"optimum": opt, "gd-pop": pop, "gd-data": data, "estimators": est})


def linear_findings(store: Any, plan: Any) -> LinearFindings:
    """The :class:`LinearFindings` of the linear plan ``plan`` from the records in ``store``."""
    camp = linear_campaigns(plan)
    return findings_of(*(list(store.records(campaign=camp[k])) for k in ("optimum", "gd-pop", "gd-data", "estimators")),
                       plan)
