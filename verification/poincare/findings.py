"""The Poincare family's findings: the typed values its report and its paper part both render, built
once from the plan's stored campaigns by :func:`findings` (numbers, verdicts and outcomes; no text
made from numbers, no Markdown, no LaTeX).

* :class:`Instance`: one (family, beta, lambda) of the bounds grid: the estimated C_P, each bound and
  its verdict, the test-function lower bounds over C_P (``collapsed`` below :data:`COLLAPSE`).
* :class:`VillaniOutcome`, :class:`Threshold`, :class:`Bracket`: Villani's condition per instance, the
  smallest lambda each derivation needs, the certified 1-D Muckenhoupt brackets.
* :class:`MapPoint`, :class:`Boundary`: the Villani map's outcomes and lambda_V(beta) per family, data
  seed and beta against the seed's hypothesis (every lambda > 0).
* :class:`ExpectedLoss`, :class:`SdeOutcome`, :class:`LossExcess`: E_mu[L] by quadrature and by the
  SDE, the Langevin outcomes, and E_beta[L] - inf L against d/(2 beta).
* :class:`Claim`: each claim of Frangi et al. with the outcome decided here (``Findings.claims``).

The report (:mod:`verification.poincare.report`) and the paper (:mod:`verification.poincare.paper`)
read these values only; neither reads the store.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Optional

from verification.findings import Share, Tally
from verification.poincare.checks.sde import sde_campaign
from verification.poincare.checks.villani import map_campaign
from verification.report.aggregate import group

COLLAPSE = 0.5   # best test-function lower bound below this fraction of C_P: collapsed
GAUSSIAN = ("gauss1", "gauss2")
SEED_HYPOTHESIS = "every lambda > 0 (any beta, any data)"


def _ratio(bound, value):
    return None if bound is None or not value else bound / value


# -- the bounds grid -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bound:
    """A proved upper bound of C_P at one instance (None where it does not apply) and its verdict."""

    bound: Optional[float]
    verdict: str


@dataclass(frozen=True)
class Instance:
    """One (family, beta, lambda): the discretised C_P with its error (``trunc_err``: the window
    enlargement change), 1/(beta lambda), the Bakry-Emery and Holley-Stroock bounds (None: not
    stored) and the test-function lower bounds over C_P (linear = Var theta, quadratic span, the
    mpmath eigenfunction quotient)."""

    family: str
    beta: float
    lam: float
    C_P: float
    err: float
    trunc_err: float
    gaussian_C: float
    be: Optional[Bound]
    hs: Optional[Bound]
    var_ratio: Optional[float]
    quad_ratio: Optional[float]
    eig_ratio: Optional[float]

    @property
    def key(self) -> tuple[str, float, float]:
        return self.family, self.beta, self.lam

    @property
    def be_ratio(self) -> Optional[float]:
        return _ratio(self.be and self.be.bound, self.C_P)

    @property
    def hs_ratio(self) -> Optional[float]:
        return _ratio(self.hs and self.hs.bound, self.C_P)

    @property
    def collapsed(self) -> bool:
        """The best polynomial (degree <= 2) test function gives less than :data:`COLLAPSE` C_P."""
        best = max((v for v in (self.var_ratio, self.quad_ratio) if v is not None), default=None)
        return best is not None and best < COLLAPSE

    @property
    def worst_ratio(self) -> float:
        return min(x for x in (self.var_ratio, self.quad_ratio) if x is not None)


@dataclass(frozen=True)
class VillaniOutcome:
    """Villani's condition (the seed's route, a conjecture here) at one instance: lambda_V(beta) with
    its interval, the outcome, whether it is certified, the witness; ``holds`` the numerical answer
    and ``hs_applies`` whether the Holley-Stroock bound still holds there."""

    family: str
    beta: float
    lam: float
    lambda_V: Optional[float]
    lo: Optional[float]
    hi: Optional[float]
    outcome: str
    certified: Any
    witness: Any
    holds: Any
    hs_applies: bool


@dataclass(frozen=True)
class Threshold:
    """Per (family, beta): the certified m with L'' >= -m (``hessian_bounded`` False: none), the
    certified oscillation of L (None: L unbounded) and the estimated lambda_V(beta)."""

    family: str
    beta: float
    m: Any
    hessian_bounded: bool
    osc_certified: Optional[float]
    lambda_V: float


@dataclass(frozen=True)
class Bracket:
    """A 1-D instance's certified Muckenhoupt bracket [lo, hi] of C_P against the discretised estimate."""

    family: str
    beta: float
    lam: float
    C_P: float
    err: float
    lo: float
    hi: float
    inside: Any
    verdict: str
    trunc_err: float

    @property
    def ratio(self) -> float:
        return self.hi / self.lo


@dataclass(frozen=True)
class ExpectedLoss:
    """E_mu[L] (``method``: quadrature under the discretised mu, or the SDE with its standard error
    ``se``) against L at the minimiser of F and the smallest loss found."""

    family: str
    method: str
    beta: float
    lam: float
    E_L: float
    se: Optional[float]
    L_argmin_F: float
    min_L: float

    @property
    def excess(self) -> float:
        return self.E_L - self.L_argmin_F

    @property
    def gap(self) -> float:
        return self.L_argmin_F - self.min_L


# -- the Villani map -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class MapPoint:
    """One (family, data seed, beta, lambda) of the Villani map: its outcome and lambda_V(beta)."""

    family: str
    data_seed: int
    beta: float
    lam: float
    outcome: str
    statistic: float
    certified: Any


@dataclass(frozen=True)
class Boundary:
    """lambda_V(beta) at one (family, data seed, beta): the estimate with its interval, the certified
    bracket where one exists, how it is known (``status``: "proved" = 0 by proof, "certified",
    "estimate"), and the lambda grid's outcomes (``refuted`` of ``points``, ``refuted_enclosed`` of
    them certified)."""

    family: str
    data_seed: int
    beta: float
    estimate: float
    lo: float
    hi: float
    certified_lo: Optional[float]
    certified_hi: Optional[float]
    status: str
    refuted: int
    points: int
    refuted_enclosed: int
    estimate_within_bracket: Optional[bool]

    @property
    def fails(self) -> bool:
        """Villani's route fails for some lambda > 0 (certified, or by the estimate's interval)."""
        if self.status == "certified":
            return self.certified_lo > 0
        return self.status == "estimate" and self.lo > 0

    @property
    def certified_positive(self) -> bool:
        return self.status == "certified" and self.certified_lo > 0


# -- the Langevin SDE ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SdeOutcome:
    """One Langevin comparison (``kind``: rate, mean_loss, expected_loss): the measured value with
    its standard error and interval, the reference and the outcome."""

    family: str
    kind: str
    beta: Optional[float]
    lam: Optional[float]
    measured: float
    se: float
    lo: Optional[float]
    hi: Optional[float]
    reference: float
    outcome: str


@dataclass(frozen=True)
class Distance:
    """The chains' distance to a set at time ``t``: mean and standard error over chains."""

    t: float
    mean: float
    se: float


@dataclass(frozen=True)
class LossExcess:
    """E_beta[L] - inf L at one beta with its interval against the Laplace value d/(2 beta), the
    outcome (``predicted``: a refutation the regularisation gap alone forces), the gap
    L(theta*_lambda) - inf L, the distance to the minimisers of L found at the first, middle and last
    record time and to theta*_lambda at the end."""

    family: str
    beta: float
    lam: float
    excess: float
    lo: float
    hi: float
    laplace: float
    outcome: str
    predicted: bool
    gap: float
    to_argmin: tuple[Distance, Distance, Distance]
    to_theta_star: Distance


# -- the claims ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claim:
    """One claim of Frangi et al. (``key``) and the outcome decided here."""

    key: str
    outcome: str


CLAIMS = ("attention-villani", "lora-poincare", "lora-villani", "sde-minimises", "langevin-rate")


@dataclass(frozen=True)
class Findings:
    """Everything the Poincare report and paper part show of one plan (see the module docstring)."""

    campaign: str
    map_campaign: str
    sde_campaign: str
    instances: tuple[Instance, ...]
    villani: tuple[VillaniOutcome, ...]
    thresholds: tuple[Threshold, ...]
    brackets: tuple[Bracket, ...]
    expected_loss: tuple[ExpectedLoss, ...]
    gaussian_tight: Share
    gaussian_float_agrees: Share
    map_points: tuple[MapPoint, ...]
    boundaries: tuple[Boundary, ...]
    sde: tuple[SdeOutcome, ...]
    loss_excess: tuple[LossExcess, ...]

    @property
    def metastable(self) -> tuple[Instance, ...]:
        """Every instance, worst test-function lower bound over C_P first."""
        return tuple(sorted(self.instances, key=lambda i: (i.worst_ratio, i.family, i.beta, i.lam)))

    def hs_every_lambda(self) -> list[str]:
        """The non-Gaussian families whose loss is bounded: Holley-Stroock at every lambda > 0."""
        fams = dict.fromkeys(t.family for t in self.thresholds if t.family not in GAUSSIAN)
        return [f for f in fams if all(t.osc_certified is not None for t in self.thresholds if t.family == f)]

    def no_bound(self) -> list[str]:
        """The non-Gaussian families for which neither Bakry-Emery nor Holley-Stroock ever applies."""
        fams = dict.fromkeys(t.family for t in self.thresholds if t.family not in GAUSSIAN)
        return [f for f in fams if all(not t.hessian_bounded and t.osc_certified is None
                                       for t in self.thresholds if t.family == f)]

    def sde_tally(self, kind: str) -> Tally:
        """The outcomes of the Langevin comparisons of ``kind``."""
        return Tally.of(s.outcome for s in self.sde if s.kind == kind)

    @property
    def claims(self) -> tuple[Claim, ...]:
        """The outcome of each claim of :data:`CLAIMS`: a failure of Villani's condition found by a grid
        estimate is not certified (inconclusive); a certified positive lambda_V refutes the LoRA route;
        the SDE's minimisation is refuted only by a refutation its regularisation gap does not predict;
        the rate is supported where every setting supports it."""
        attn2 = [b for b in self.boundaries if b.family == "attn2"]
        lora = [b for b in self.boundaries if b.family == "lora2"]
        excess = self.loss_excess
        sde = ("refuted" if any(e.outcome == "refuted" and not e.predicted for e in excess)
               else "inconclusive" if any(e.outcome == "inconclusive" for e in excess)
               else "supported" if excess else "not-testable")
        rate = self.sde_tally("rate")
        return (Claim("attention-villani", "inconclusive" if any(b.fails for b in attn2) else "supported"),
                Claim("lora-poincare", "holds (certified)" if "lora2" in self.hs_every_lambda() else "inconclusive"),
                Claim("lora-villani", "refuted" if any(b.certified_positive for b in lora) else "inconclusive"),
                Claim("sde-minimises", sde),
                Claim("langevin-rate", "refuted" if rate.count("refuted")
                      else "supported" if rate.total and rate.count("supported") == rate.total else "inconclusive"))


# -- built from the store ------------------------------------------------------------------------------

def by_instance(store: Any, campaign: str) -> dict:
    """The records of ``campaign`` per (family, beta, lambda), sorted, each by its bound's name
    (``lower_<kind>`` for the test-function lower bounds)."""
    rows: dict = defaultdict(dict)
    for r in store.records(campaign=campaign):
        e = r["extra"]
        name = r["theorem"].rsplit(".", 1)[-1]
        if name == "test_function_lower":
            name = f"lower_{e['kind']}"
        rows[(e["family"], e["beta"], e["lam"])][name] = r
    return dict(sorted(rows.items()))


def _bound(rec: Optional[dict]) -> Optional[Bound]:
    return None if rec is None else Bound(rec["bound"], rec["verdict"])


def _instance(key: tuple, recs: dict) -> Instance:
    e = next(iter(recs.values()))["extra"]
    C = e["C_P"]
    lower = {k: _ratio(recs[k]["bound"], C) if k in recs else None
             for k in ("lower_linear", "lower_quadratic", "lower_eigenfunction_mp")}
    return Instance(*key, C, e["err"], e["trunc_err"], e["gaussian_C"], _bound(recs.get("bakry_emery")),
                    _bound(recs.get("holley_stroock")), lower["lower_linear"], lower["lower_quadratic"],
                    lower["lower_eigenfunction_mp"])


def _villani(key: tuple, recs: dict) -> Optional[VillaniOutcome]:
    v = recs.get("villani")
    if v is None:
        return None
    e = v["extra"]
    hs = recs.get("holley_stroock")
    iv = e.get("interval") or [None, None]
    return VillaniOutcome(*key, v["bound"], iv[0], iv[1], v["verdict"], e["certified"], e["witness"],
                          e["numerically_holds"], bool(hs and hs["bound"] is not None))


def _thresholds(inst: dict) -> tuple[Threshold, ...]:
    seen: dict = {}
    for (fam, beta, _), recs in inst.items():
        be, v = recs.get("bakry_emery"), recs.get("villani")
        if be is None or v is None or (fam, beta) in seen or "hessian_bounded" not in be["extra"]:
            continue
        e = be["extra"]
        seen[(fam, beta)] = Threshold(fam, beta, e["m"], e["hessian_bounded"], e["osc_certified"], v["bound"])
    return tuple(seen.values())


def _bracket(key: tuple, recs: dict) -> Optional[Bracket]:
    r = recs.get("lower_muckenhoupt")
    if r is None:
        return None
    e = r["extra"]
    lo, hi = e["bracket"]
    return Bracket(*key, e["C_P"], e["err"], lo, hi, e["inside"], r["verdict"], e["trunc_err"])


def _expected_loss(inst: dict, sde_records: list[dict]) -> tuple[ExpectedLoss, ...]:
    out = []
    for key, recs in inst.items():
        e = next(iter(recs.values()))["extra"]
        if "E_L" in e:
            out.append(ExpectedLoss(key[0], "quadrature", key[1], key[2], e["E_L"], None, e["L_argmin_F"],
                                    e["min_L"]))
    for r in sde_records:
        e = r["extra"]
        if e.get("kind") == "expected_loss":
            out.append(ExpectedLoss(e["family"], "SDE (MALA)", e["beta"], e["lam"], e["E_L"], e["E_L_se"],
                                    e["L_star"], e["min_L"]))
    return tuple(out)


def _gaussian(inst: dict) -> tuple[Share, Share]:
    """The Gaussian families' bounds (not the Villani outcomes, not the brackets): tight of all, and
    the float computation agreeing of the tight ones."""
    gauss = [r for recs in inst.values() for r in recs.values() if r["extra"]["family"] in GAUSSIAN
             and r["theorem"] != "poincare.gibbs.villani"
             and r["extra"].get("kind") not in ("eigenfunction_mp", "muckenhoupt")]
    tight = [r for r in gauss if r["verdict"] == "tight"]
    return (Share.wilson(len(tight), len(gauss)),
            Share.wilson(sum(bool(r["extra"].get("float_agrees")) for r in tight), len(tight)))


def _map(records: list[dict]) -> tuple[tuple[MapPoint, ...], tuple[Boundary, ...]]:
    points = tuple(MapPoint(r["extra"]["family"], r["extra"]["data_seed"], r["extra"]["beta"], r["extra"]["lam"],
                            r["verdict"], r["extra"]["statistic"], r["extra"]["certified"]) for r in records)
    out = []
    for (fam, seed, beta), recs in sorted(group(records, lambda r: (r["extra"]["family"], r["extra"]["data_seed"],
                                                                     r["extra"]["beta"])).items()):
        e = recs[0]["extra"]
        lo, hi = e["interval"]
        cb = e.get("certified_bracket")
        status = ("proved" if e["certified"] and e["numerically_holds"] else
                  "certified" if cb is not None else "estimate")
        ref = [r for r in recs if r["verdict"] == "refuted"]
        out.append(Boundary(fam, seed, beta, e["statistic"], lo, hi, None if cb is None else cb[0],
                            None if cb is None else cb[1], status, len(ref), len(recs),
                            sum(bool(r["extra"]["certified"]) for r in ref), e.get("estimate_within_bracket")))
    return points, tuple(out)


def _sde(records: list[dict]) -> tuple[SdeOutcome, ...]:
    out = []
    for r in records:
        e = r["extra"]
        iv = e.get("interval") or [None, None]
        if e["kind"] in ("rate", "mean_loss"):
            se = e["se"]
        elif e["kind"] == "expected_loss":
            se = e["E_L_se"]
        else:
            continue
        out.append(SdeOutcome(e["family"], e["kind"], e.get("beta"), e.get("lam"), r["value"], se, iv[0], iv[1],
                              r["bound"], r["verdict"]))
    return tuple(out)


def _loss_excess(records: list[dict]) -> tuple[LossExcess, ...]:
    out = []
    for r in records:
        e = r["extra"]
        if e.get("kind") != "expected_loss" or "laplace" not in e:
            continue
        d = e["dist_argmin_L"]
        out.append(LossExcess(e["family"], e["beta"], e["lam"], r["value"], e["interval"][0], e["interval"][1],
                              e["laplace"], r["verdict"], bool(e.get("predicted_refuted") and r["verdict"] == "refuted"),
                              e["L_star"] - e["min_L"], tuple(Distance(*x) for x in (d[0], d[len(d) // 2], d[-1])),
                              Distance(*e["dist_theta_star"][-1])))
    return tuple(sorted(out, key=lambda x: (x.family, x.beta)))


def findings(store: Any, plan: Any) -> Findings:
    """The findings of ``plan`` (a :class:`verification.poincare.checks.Plan`) from its stored
    campaigns: the bounds grid, the Villani map and the Langevin runs (empty where not stored)."""
    inst = by_instance(store, plan.campaign)
    maps, sdes = map_campaign(plan), sde_campaign(plan)
    sde_records = list(store.records(campaign=sdes))
    points, boundaries = _map(list(store.records(campaign=maps)))
    tight, agrees = _gaussian(inst)
    return Findings(
        campaign=plan.campaign, map_campaign=maps, sde_campaign=sdes,
        instances=tuple(_instance(k, recs) for k, recs in inst.items()),
        villani=tuple(v for v in (_villani(k, recs) for k, recs in inst.items()) if v is not None),
        thresholds=_thresholds(inst),
        brackets=tuple(b for b in (_bracket(k, recs) for k, recs in inst.items()) if b is not None),
        expected_loss=_expected_loss(inst, sde_records), gaussian_tight=tight, gaussian_float_agrees=agrees,
        map_points=points, boundaries=boundaries, sde=_sde(sde_records), loss_excess=_loss_excess(sde_records))
