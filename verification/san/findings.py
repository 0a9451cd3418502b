"""The SAN family's findings: what its report and its paper part both render, built once from the
plan's stored chunks by :func:`findings` (typed values, no formatting).

A :class:`Findings` holds the primary numerical path's run summaries as the store holds them, each
claim's stored outcome as a :class:`ClaimFinding` (its :class:`~verification.san.checks.claims.Claim`,
its :class:`~verification.findings.Decision` and the gates that kept it from being tested,
:class:`~verification.san.checks.gates.Gate`, carried from the checks that decide them), the
training gate per role (:class:`RoleGate`), the reference's positive control per probe
(:class:`ProbeControl`) and whether each probe is at ceiling for the roles it compares
(:class:`ProbeCeiling`), the preset's settings (:class:`PresetSettings`, with the wall time measured
for it where :mod:`verification.san.checks.presets` states one), the rollout and the
scalar-bottleneck records of the trained decoders, and the identity checks: results a proved
theorem forces (:class:`IdentityCheck`), checks of the implementation, never findings.
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
class PathStatistic:
    """What one numerical path found for a claim: the mean paired difference, the raw and the
    Holm-adjusted p, the unadjusted and the Bonferroni-adjusted interval (None: unbounded) and the
    outcome this path alone would report."""

    path: str
    statistic: float
    p: float
    p_holm: float
    interval: Optional[tuple[float, float]]
    interval_adjusted: Optional[tuple[float, float]]
    outcome: str

    @property
    def decided(self) -> bool:
        return self.outcome in ("supported", "refuted")


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
    by_path: tuple[PathStatistic, ...] = ()     # every numerical path's own statistic, the primary first
    decided_by: tuple[str, ...] = ()            # the paths whose own outcome is supported or refuted
    path_difference: Optional[float] = None     # largest minus smallest mean over the paths
    no_variation: bool = False                  # the per-seed values show no spread (the t test does not apply)
    leave_one_out: bool = False                 # leave-one-seed-pair-out was run (more than three seed pairs)

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

    @property
    def no_spread(self) -> bool:
        """Tested (no gate) on two or more seed pairs whose values show no spread: never decided,
        and more seed pairs cannot change that (a gated claim is counted by its gate instead)."""
        return not self.gates and self.no_variation and _finite(self.n) and self.n >= 2


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
class ProbeCeiling:
    """Whether probe ``probe`` is at ceiling for the ``roles`` it compares over ``seeds`` seeds (every
    run answers every probe correctly: :func:`verification.san.checks.gates.probe_ceiling`): ``gate``
    (None: not at ceiling, or a role not trained, ``trained`` False)."""

    probe: str
    roles: tuple[str, ...]
    seeds: int
    trained: bool
    gate: Optional[Gate]

    @property
    def at_ceiling(self) -> bool:
        return self.gate is not None


@dataclass(frozen=True)
class PresetSettings:
    """The preset's settings as :mod:`verification.san.checks.presets` states them (the campaign's
    name carries their digest, so the stored runs are these settings' runs) and ``measured``: the
    wall time measured for the whole preset, the preset's ``measured`` text where it states one
    (None: not measured)."""

    name: str
    d_model: int
    n_head: int
    ctx: int
    batch: int
    steps: int
    lr: float
    ref_layers: int
    seeds: int
    roles: tuple[str, ...]
    depths: tuple[int, ...]
    sweep_steps: int
    measured: Optional[str]


@dataclass(frozen=True)
class IdentityCheck:
    """A result that a proved theorem forces, checked on the trained models: a check of the
    implementation, never a finding or a claim. Its short ``name``, ``theorem`` (registry id), what is checked
    (``what``), how (``method``), ``passed`` of ``checked`` instances and the largest float residual
    beside the exact check where there is one."""

    name: str
    theorem: str
    what: str
    method: str
    passed: int
    checked: int
    float_residual: Optional[float] = None

    @property
    def holds(self) -> bool:
        return self.checked > 0 and self.passed == self.checked


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
    settings: PresetSettings
    ceilings: tuple[ProbeCeiling, ...]  # per probe and matched pair
    checks: tuple[IdentityCheck, ...]   # what proved theorems force, checked (never findings)

    @property
    def leave_one_out(self) -> bool:
        """Whether leave-one-seed-pair-out robustness was run (more than three seed pairs)."""
        return any(c.leave_one_out for c in self.claims)

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


def _order(record: Mapping[str, Any], path: str) -> int:
    """A path's place in the record's paths (the primary first; the store keeps a mapping's keys sorted)."""
    paths = list((record.get("provenance") or {}).get("paths") or [])
    return paths.index(path) if path in paths else len(paths)


def claim_finding(record: Mapping[str, Any], claim: Claim, gates: tuple[Gate, ...]) -> ClaimFinding:
    """One stored claim record as a :class:`ClaimFinding` of ``claim`` with its ``gates``."""
    e = record["extra"]
    by_path = tuple(PathStatistic(k, v["statistic"], v["p"], v["p_holm"], _pair(v.get("interval")),
                                  _pair(v.get("interval_adjusted")), v["outcome"])
                    for k, v in sorted((e.get("by_path") or {}).items(), key=lambda kv: _order(record, kv[0])))
    decision = Decision(record["verdict"], e["statistic"], _pair(e.get("interval")), e.get("level", math.nan),
                        e.get("method", ""), gate_text(gates) or "", e.get("p_holm"))
    return ClaimFinding(claim, decision, _pair(e.get("interval_adjusted")), e.get("unit", ""), e.get("n"), e.get("df"),
                        e.get("sd"), e.get("p"), e.get("mde"), e.get("family"), e.get("alpha"), e.get("noise"),
                        e.get("applicable", True), e.get("direction"), e.get("margin"),
                        e.get("drops_kept") if e.get("drops") else None, e.get("drops") or None,
                        bool(e.get("fragile", False)), e.get("robust"), e.get("outcomes_by_path") or {},
                        e.get("statistic_by_path") or {}, gates, e.get("paper", ""), pairs_needed(e, gates),
                        by_path, tuple(e.get("decided_by") or ()), e.get("path_difference"),
                        bool(e.get("no_variation", False)), bool(e.get("leave_one_out", False)))


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
    bottleneck = _bottleneck(store, camp)
    d1 = tuple(r["verdict"] for r in store.records(camp, theorem="dobrushin.factor"))
    return Findings(plan.preset, plan.device, command, tuple(paths), tuple(camps[k] for k in paths), claims_camp, runs,
                    claims, _role_gates(runs), controls, _rollout(store, camp), bottleneck, d1,
                    preset_settings(plan.preset), _ceilings(by), identity_checks(bottleneck, d1))


def preset_settings(name: str) -> PresetSettings:
    """The settings of preset ``name`` (:data:`verification.san.checks.presets.PRESETS`) and its
    measured wall time (:data:`verification.san.checks.presets.MEASURED`, None where none is measured)."""
    from verification.san.checks.presets import PRESETS
    from verification.san.checks.presets import measured as measured_of

    p = PRESETS[name]
    measured = measured_of(name)
    return PresetSettings(p.name, p.d_model, p.n_head, p.ctx, p.batch, p.steps, p.lr, p.ref_layers, p.seeds,
                          tuple(p.roles), tuple(p.depths), p.sweep_steps, measured.text() if measured else None)


def _ceilings(by: dict) -> tuple[ProbeCeiling, ...]:
    """Per probe and matched pair (parameters, depth): whether both roles are at ceiling on every
    seed both trained."""
    from verification.san.checks.decide import PAIRS
    from verification.san.checks.gates import probe_ceiling

    out = []
    for pair in PAIRS:
        roles = ("std", f"san-{pair}")
        seeds = sorted({s for (_, s) in by if all((r, s) in by for r in roles)})
        for kind in PROBES:
            out.append(ProbeCeiling(kind, roles, len(seeds), bool(seeds),
                                    probe_ceiling(kind, roles, by, seeds) if seeds else None))
    return tuple(out)


def identity_checks(bottleneck: tuple[BottleneckRun, ...], d1: tuple[str, ...]) -> tuple[IdentityCheck, ...]:
    """What proved theorems force on the trained decoders, as checks: the scalar-bottleneck identity
    (Theorem san.bottleneck, proved for every depth: each attention-only model's weights, exact) and
    D1 with equality on causal attention (every causal layer's rollout step, exact)."""
    residuals = [b.float_residual for b in bottleneck if _finite(b.float_residual)]
    return (IdentityCheck("scalar bottleneck, per attention-only model", "san.bottleneck", "at sequence length one "
                          "the model's own recursion equals the fixed linear map modulated by one scalar per layer",
                          "exact dyadic arithmetic, coefficient by coefficient over every monomial of the per-layer "
                          "scalars, each a formal variable (a float64 residual beside it)",
                          sum(b.verdict == "tight" for b in bottleneck), len(bottleneck),
                          max(residuals) if residuals else None),
            IdentityCheck("D1 equality on causal layers, per layer and input", "dobrushin.factor",
                          "D1 holds with equality on causal attention, per layer and input",
                          "the exact D1 check of the rollout records", sum(v == "tight" for v in d1), len(d1)))
