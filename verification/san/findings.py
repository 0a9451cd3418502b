"""The SAN family's findings: what its report and its paper part both render, built once from the
plan's stored chunks by :func:`findings` (typed values, no formatting).

A :class:`Findings` holds the primary numerical path's run summaries as the store holds them, each
claim's stored outcome as a :class:`ClaimFinding` (its :class:`~verification.san.checks.claims.Claim`,
its :class:`~verification.findings.Decision` and the gates that kept it from being tested,
:class:`~verification.san.checks.gates.Gate`, carried from the checks that decide them), the
training gate per role (:class:`RoleGate`), the reference's positive control per probe
(:class:`ProbeControl`), the rollout and the scalar-bottleneck records of the trained decoders.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import numpy as np

from verification.findings import Decision
from verification.san.checks.claims import Claim, catalogue
from verification.san.checks.gates import Gate, gate_text, learned, path_gates, probe_control
from verification.san.checks.measures import loss
from verification.san.checks.runs import ROLES

PROBES = ("retrieval", "recall")


def mean(xs: Any) -> float:
    """The mean of the finite values of ``xs`` (None and nan left out; nan when none is left)."""
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return float(np.mean(xs)) if xs else math.nan


@dataclass(frozen=True)
class ClaimFinding:
    """One claim's stored outcome: the ``claim``; the ``decision`` (the reported outcome, the mean of
    the paired differences, its unadjusted interval and level, the stored method, the Holm-adjusted
    p, and the gates' reason where it is not testable) and what the claim's record holds beside it:
    the Bonferroni-adjusted interval, the test's numbers (n, df, sd, raw p, minimum detectable
    effect, family size, alpha, noise floor), whether the t test applies, the leave-one-seed-pair-out
    drops that keep a decided outcome, the outcome and statistic along each numerical path, the
    ``gates`` (recomputed from the stored runs by the checks that decided them) and, for a claim
    tested on two or more seed pairs with spread, the seed pairs a test would need
    (:func:`pairs_needed`; None: more than 100000, or it cannot be sized)."""

    claim: Claim
    decision: Decision
    interval_adjusted: Optional[tuple[float, float]]
    unit: str
    n: Optional[int]
    df: Optional[int]
    sd: Optional[float]
    p: Optional[float]
    mde: Optional[float]
    family: Optional[int]
    alpha: Optional[float]
    noise: Optional[float]
    applicable: bool
    direction: Optional[str]
    margin: Optional[float]
    drops_kept: Optional[int]
    drops: Optional[int]
    fragile: bool
    robust: Optional[bool]
    outcomes_by_path: Mapping[str, str]
    statistic_by_path: Mapping[str, float]
    gates: tuple[Gate, ...]
    paper: str
    pairs_needed: Optional[int] = None

    @property
    def outcome(self) -> str:
        return self.decision.outcome

    @property
    def statistic(self) -> float:
        return self.decision.statistic

    @property
    def gate(self) -> str:
        """The gates' reasons as the claim's record words them ("" where it was tested)."""
        return gate_text(self.gates) or ""

    @property
    def decided(self) -> bool:
        return self.outcome in ("supported", "refuted")


@dataclass(frozen=True)
class RoleGate:
    """The training gate of one role's runs (the sweep's together): how many passed of how many, the
    mean and worst loss a claim compares (nats per byte), the gate (the bigram model's validation
    loss), the unigram and bigram entropies of the training bytes."""

    role: str
    runs: int
    passed: int
    mean_loss: float
    worst_loss: float
    unigram: float
    gate: float
    bigram: float


@dataclass(frozen=True)
class ProbeControl:
    """The reference's positive control of one probe over ``seeds`` seeds: ``failed`` is its gate
    (None: every seed's reference is above the probe's chance level)."""

    probe: str
    seeds: int
    failed: Optional[Gate]


@dataclass(frozen=True)
class RolloutCell:
    """One role, variant and layer of the rollout on the trained decoders: median delta(R_l) over the
    inputs, the mean chain ratio, the share of inputs whose chain is tight, over ``n`` inputs."""

    role: str
    variant: str
    layer: int
    delta_R: float
    chain_ratio: float
    chain_tight: float
    n: int


@dataclass(frozen=True)
class BottleneckRun:
    """The scalar-bottleneck lemma on one attention-only run's weights: the verdict, the float
    residual, the exact check, its monomials and the range of the scalars c_l."""

    run: str
    verdict: str
    float_residual: float
    exact: Any
    monomials: Any
    c_min: float
    c_max: float


@dataclass(frozen=True)
class Findings:
    """What the SAN family found for one plan (see the module docstring)."""

    preset: str
    device: str
    command: str
    paths: tuple[str, ...]              # the numerical paths with runs, the primary first
    campaigns: tuple[str, ...]          # their runs campaigns
    claims_campaign: str
    runs: tuple[Mapping[str, Any], ...]  # the primary path's run summaries, in plan order
    claims: tuple[ClaimFinding, ...]
    role_gates: tuple[RoleGate, ...]
    controls: tuple[ProbeControl, ...]
    rollout: tuple[RolloutCell, ...]
    bottleneck: tuple[BottleneckRun, ...]
    d1_verdicts: tuple[str, ...]        # the rollout's D1 (dobrushin.factor) verdicts

    @property
    def seeds(self) -> list[int]:
        return sorted({r["seed"] for r in self.runs})

    @property
    def bigram_val(self) -> float:
        """The training gate: the bigram model's validation loss (nats per byte)."""
        return self.runs[0].get("bigram_val", math.nan) if self.runs else math.nan

    @property
    def bytes_per_token(self) -> Mapping[str, Any]:
        """The validation text's bytes per token under the stated tokenizer (``{}``: not measured)."""
        return (self.runs[0].get("bytes_per_token") or {}) if self.runs else {}


def _pair(x: Any) -> Optional[tuple[float, float]]:
    return None if x is None else (x[0], x[1])


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def pairs_needed(e: Mapping[str, Any], gates: tuple[Gate, ...]) -> Optional[int]:
    """The seed pairs a test of the claim whose record holds ``e`` would need to detect its observed
    mean with power 0.8: two-sided paired t at the strictest Holm level alpha / m of its family, or
    for the equivalence claim TOST at its margin when the true difference is 0
    (:func:`verification.stats.pairs_needed`); None where the claim is gated, has fewer than two seed
    pairs or no spread (nothing to size), or needs more than 100000."""
    from verification.stats import pairs_needed as needed

    n, sd, mean_ = e.get("n"), e.get("sd") if e.get("sd") is not None else math.nan, e.get("statistic")
    if gates or not _finite(n) or n < 2 or not e.get("applicable", True):
        return None
    m, alpha = e.get("family") or 1, e.get("alpha") or 0.05
    if e.get("direction") == "equivalence" and _finite(e.get("margin")):
        return needed(float(e["margin"]), float(sd), alpha / (2 * m), equivalence=True)
    if _finite(mean_) and _finite(sd):
        return needed(float(mean_), float(sd), alpha / m)
    return None


def claim_finding(record: Mapping[str, Any], claim: Claim, gates: tuple[Gate, ...]) -> ClaimFinding:
    """One stored claim record as a :class:`ClaimFinding` of ``claim`` with its ``gates``."""
    e = record["extra"]
    decision = Decision(record["verdict"], e["statistic"], _pair(e.get("interval")), e.get("level", math.nan),
                        e.get("method", ""), gate_text(gates) or "", e.get("p_holm"))
    return ClaimFinding(claim, decision, _pair(e.get("interval_adjusted")), e.get("unit", ""), e.get("n"), e.get("df"),
                        e.get("sd"), e.get("p"), e.get("mde"), e.get("family"), e.get("alpha"), e.get("noise"),
                        e.get("applicable", True), e.get("direction"), e.get("margin"),
                        e.get("drops_kept") if e.get("drops") else None, e.get("drops") or None,
                        bool(e.get("fragile", False)), e.get("robust"), e.get("outcomes_by_path") or {},
                        e.get("statistic_by_path") or {}, gates, e.get("paper", ""), pairs_needed(e, gates))


def _role_gates(runs: tuple) -> tuple[RoleGate, ...]:
    out = []
    for role in ROLES + ("sweep",):
        rs = [r for r in runs if r["role"] == role]
        if rs:
            ls = [loss(r) for r in rs]
            out.append(RoleGate(role, len(rs), sum(learned(r) for r in rs), mean(ls), max(ls), rs[0]["unigram"],
                                rs[0].get("bigram_val", math.nan), rs[0]["bigram"]))
    return tuple(out)


def _rollout(store: Any, campaign: str) -> tuple[RolloutCell, ...]:
    acc: dict = {}
    for r in store.records(campaign, theorem="dobrushin.product"):
        p = r["provenance"]
        acc.setdefault((p["role"], p["variant"], p["layer"]), []).append(
            (r["value"], r["extra"].get("ratio_R"), r["verdict"] == "tight"))
    return tuple(RolloutCell(k[0], k[1], k[2], float(np.median([v[0] for v in vs])), mean([v[1] for v in vs]),
                             float(np.mean([v[2] for v in vs])), len(vs)) for k, vs in sorted(acc.items()))


def _bottleneck(store: Any, campaign: str) -> tuple[BottleneckRun, ...]:
    return tuple(BottleneckRun(r["provenance"]["run"], r["verdict"], r["extra"]["residual"], r["extra"]["exact"],
                               r["extra"]["monomials"], min(r["extra"]["c_min"]), max(r["extra"]["c_max"]))
                 for r in store.records(campaign, theorem="san.bottleneck"))


def findings(store: Any, plan: Any) -> Findings:
    """The findings of ``plan`` (a :class:`verification.san.checks.Plan`) from the store: its runs
    campaigns (one per numerical path) and the claims decided from exactly those runs
    (:func:`verification.san.checks.decide.claims_chunk`); MissingCampaign (naming ``plan.command()``)
    where the primary path's runs or their claims are not stored."""
    from verification.report.part import MissingCampaign
    from verification.san.checks.decide import claim_tests, claims_campaign, claims_chunk, path_runs

    camps = plan.runs_campaigns()
    primary, command = next(iter(camps)), plan.command()
    paths = path_runs(store, camps)
    if primary not in paths:
        raise MissingCampaign(camps[primary], command)
    runs = tuple(paths[primary])
    claims_camp = claims_campaign(camps[primary])
    chunk = claims_chunk(paths)          # the claims decided from exactly these runs, this claims version
    records = [r for r in store.records(claims_camp) if r["chunk"] == chunk]
    if not records:
        raise MissingCampaign(claims_camp, command)
    planned = {k: claim_tests(rs)[0] for k, rs in paths.items()}
    gates = {(t["theorem"], t["instance"]): g for t, g in zip(planned[primary], path_gates(planned))}
    depths = tuple(sorted({r["n_layer"] for r in runs if r["role"] == "sweep"}))
    by_id = {(c.theorem, c.instance): c for c in catalogue(depths)}
    claims = tuple(claim_finding(r, by_id[(r["theorem"], r["instance"])], gates.get((r["theorem"], r["instance"]), ()))
                   for r in records)
    by = {(r["role"], r["seed"]): r for r in runs if r["role"] != "sweep"}
    seeds = sorted({s for (role, s) in by if role == "std"})
    controls = tuple(ProbeControl(kind, len(seeds), probe_control(kind, by, seeds)) for kind in PROBES)
    camp = camps[primary]
    return Findings(plan.preset, plan.device, command, tuple(paths), tuple(camps[k] for k in paths), claims_camp, runs,
                    claims, _role_gates(runs), controls, _rollout(store, camp), _bottleneck(store, camp),
                    tuple(r["verdict"] for r in store.records(camp, theorem="dobrushin.factor")))
