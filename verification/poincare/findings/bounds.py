"""The bounds grid's findings: per (family, beta, lambda) the estimated C_P against the Bakry-Emery
and Holley-Stroock bounds and the test-function lower bounds (:class:`Instance`), Villani's condition
there (:class:`VillaniOutcome`), the smallest lambda each derivation needs (:class:`Threshold`), the
certified 1-D Muckenhoupt brackets (:class:`Bracket`) and E_mu[L] by quadrature and by the SDE
(:class:`ExpectedLoss`), each built from the stored records of the bounds campaign.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Optional

from verification.findings import Share

COLLAPSE = 0.5   # best test-function lower bound below this fraction of C_P: collapsed
GAUSSIAN = ("gauss1", "gauss2")


def _ratio(bound, value):
    return None if bound is None or not value else bound / value


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


def instance(key: tuple, recs: dict) -> Instance:
    """The instance ``key`` from its records ``recs`` (:func:`by_instance`)."""
    e = next(iter(recs.values()))["extra"]
    C = e["C_P"]
    lower = {k: _ratio(recs[k]["bound"], C) if k in recs else None
             for k in ("lower_linear", "lower_quadratic", "lower_eigenfunction_mp")}
    return Instance(*key, C, e["err"], e["trunc_err"], e["gaussian_C"], _bound(recs.get("bakry_emery")),
                    _bound(recs.get("holley_stroock")), lower["lower_linear"], lower["lower_quadratic"],
                    lower["lower_eigenfunction_mp"])


def villani_outcome(key: tuple, recs: dict) -> Optional[VillaniOutcome]:
    """Villani's condition at the instance ``key`` (None where it has no Villani record)."""
    v = recs.get("villani")
    if v is None:
        return None
    e = v["extra"]
    hs = recs.get("holley_stroock")
    iv = e.get("interval") or [None, None]
    return VillaniOutcome(*key, v["bound"], iv[0], iv[1], v["verdict"], e["certified"], e["witness"],
                          e["numerically_holds"], bool(hs and hs["bound"] is not None))


def thresholds(inst: dict) -> tuple[Threshold, ...]:
    """Per (family, beta) of ``inst`` (:func:`by_instance`), from its first instance with both records."""
    seen: dict = {}
    for (fam, beta, _), recs in inst.items():
        be, v = recs.get("bakry_emery"), recs.get("villani")
        if be is None or v is None or (fam, beta) in seen or "hessian_bounded" not in be["extra"]:
            continue
        e = be["extra"]
        seen[(fam, beta)] = Threshold(fam, beta, e["m"], e["hessian_bounded"], e["osc_certified"], v["bound"])
    return tuple(seen.values())


def bracket(key: tuple, recs: dict) -> Optional[Bracket]:
    """The Muckenhoupt bracket at the instance ``key`` (None: not a 1-D instance)."""
    r = recs.get("lower_muckenhoupt")
    if r is None:
        return None
    e = r["extra"]
    lo, hi = e["bracket"]
    return Bracket(*key, e["C_P"], e["err"], lo, hi, e["inside"], r["verdict"], e["trunc_err"])


def expected_losses(inst: dict, sde_records: list[dict]) -> tuple[ExpectedLoss, ...]:
    """E_mu[L] by quadrature per instance of ``inst``, then by the SDE per expected-loss record."""
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


def gaussian_shares(inst: dict) -> tuple[Share, Share]:
    """The Gaussian families' bounds (not the Villani outcomes, not the brackets): tight of all, and
    the float computation agreeing of the tight ones."""
    gauss = [r for recs in inst.values() for r in recs.values() if r["extra"]["family"] in GAUSSIAN
             and r["theorem"] != "poincare.gibbs.villani"
             and r["extra"].get("kind") not in ("eigenfunction_mp", "muckenhoupt")]
    tight = [r for r in gauss if r["verdict"] == "tight"]
    return (Share.wilson(len(tight), len(gauss)),
            Share.wilson(sum(bool(r["extra"].get("float_agrees")) for r in tight), len(tight)))
