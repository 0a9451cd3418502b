"""The Poincare campaign: true C_P of regularised attention / LoRA Gibbs measures against the bounds.

For each (family, beta, lambda): the window (sized from the Gaussian scale of the regulariser and a
certified oscillation bound of L, or a stated heuristic where L is unbounded), the true C_P on that
window with its discretisation error, a truncation check on a 1.25x window, the upper bounds
(Bakry-Emery, Holley-Stroock) and lower bounds (linear = Var theta_k, quadratic span, the discretised
eigenfunction by mpmath quadrature over the full line in 1-D), and the Villani check. An upper bound
below the truth beyond the error (or below a certified lower bound) is ``violated`` and raises
ViolationError after the chunk is stored (campaign runner: proved theorems, per the registry).
Villani failures are findings (the seed's claim is a conjecture here) and do not raise. Tables and
figures: verification.poincare.report.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from numerics.poincare import bounds as PB
from numerics.poincare.losses import GaussianFamily, family
from numerics.poincare.constants import (chebyshev_fit, gaussian_window, poincare_constant_1d, poincare_constant_2d,
                               rayleigh_lower_mp, rayleigh_lower_grid)
from theory.verdicts import Verdict
from verification import campaign
from verification.store import Record

VERSION = "v1"
FAMILIES = ("gauss1", "attn1", "gauss2", "attn2", "lora2")


@dataclass(frozen=True)
class Plan:
    seed: int = 0
    full: bool = False
    families: tuple[str, ...] = FAMILIES

    def grid(self, name: str) -> list[tuple[float, float]]:
        if self.full:
            betas, lams = (0.5, 1, 2, 4, 8, 16, 32, 64), (0.03, 0.1, 0.3, 1.0, 3.0)
        elif name.endswith("1"):
            betas, lams = (1, 4, 16, 64), (0.1, 0.3, 1.0)
        elif name.startswith("gauss"):
            betas, lams = (4,), (0.3,)
        else:
            betas, lams = (1, 16), (0.1, 1.0)
        return [(float(b), float(l)) for b in betas for l in lams]

    @property
    def campaign(self) -> str:
        return f"poincare.bounds-{VERSION}-seed{self.seed}-{'full' if self.full else 'quick'}"

    def mp_check(self, name: str, lam: float) -> bool:
        return name.endswith("1") and (self.full or lam == 0.3)


def window(fam, beta: float, lam: float) -> tuple[float, float, str]:
    """Half-width R, the oscillation used, and how the window was chosen."""
    osc = PB.oscillation(fam)
    if osc is not None:
        return gaussian_window(beta, lam, osc, fam.dim), osc, "gaussian scale + certified osc L"
    # L >= 0, so mu(|theta| > R) <= e^{beta max_B L} P_G(|G| > R) / P_G(B) on the 1-sigma ball B
    # (P_G(B) >= 1/2 for dim <= 2); max_B L on a grid (not certified)
    sigma = 1 / math.sqrt(beta * lam)
    r = sigma * math.sqrt(fam.dim)
    t = np.linspace(-r, r, 41)
    pts = np.stack(np.meshgrid(*([t] * fam.dim), indexing="ij"), -1)
    vals = fam.loss_np(pts)[np.sum(pts ** 2, -1) <= r * r]
    osc = float(vals.max()) + math.log(2) / beta
    return gaussian_window(beta, lam, osc, fam.dim), osc, "gaussian scale + max L on the 1-sigma ball (grid)"


def true_constant(fam, beta: float, lam: float, R: float, quick: bool):
    if fam.dim == 1:
        return poincare_constant_1d(fam.F(lam), beta, -R, R)
    return poincare_constant_2d(fam.F(lam), beta, [(-R, R)] * 2, n0=48, n_max=192 if quick else 384,
                                rtol=1e-3 if quick else 1e-4)


def truncation_error(fam, beta: float, lam: float, R: float) -> float:
    """|C_P(1.25 R) - C_P(R)| at equal mesh width (1-D: both Richardson-converged; 2-D: one solve each
    at h = 2R/96, so that the difference isolates the window, not the mesh)."""
    if fam.dim == 1:
        return abs(poincare_constant_1d(fam.F(lam), beta, -1.25 * R, 1.25 * R).value
                   - poincare_constant_1d(fam.F(lam), beta, -R, R).value)
    a = poincare_constant_2d(fam.F(lam), beta, [(-R, R)] * 2, n0=96, n_max=96)
    b = poincare_constant_2d(fam.F(lam), beta, [(-1.25 * R, 1.25 * R)] * 2, n0=120, n_max=120)
    return abs(a.value - b.value)


def upper_verdict(bound, C: float, err: float, certified_lower=None) -> Verdict:
    if bound is None:
        return Verdict.NOT_APPLICABLE
    if (certified_lower is not None and bound < certified_lower) or bound < C - err:
        return Verdict.VIOLATED
    return Verdict.HOLDS if bound > C + err else Verdict.UNDECIDED


def lower_verdict(lb: float, C: float, err: float) -> Verdict:
    if lb > C + err:
        return Verdict.VIOLATED
    return Verdict.HOLDS if lb < C - err else Verdict.UNDECIDED


def check_instance(name: str, beta: float, lam: float, plan: Plan) -> list[Record]:
    """All records of one (family, beta, lambda)."""
    fam = family(name, plan.seed)
    R, osc, how = window(fam, beta, lam)
    res = true_constant(fam, beta, lam, R, not plan.full)
    trunc = truncation_error(fam, beta, lam, R)
    C, err = res.value, res.error + trunc
    key = f"{name}-b{beta:g}-l{lam:g}"
    prov = {**fam.provenance, "seed": plan.seed, "beta": beta, "lambda": lam, "window": [-R, R],
            "window_rule": how, "osc_used": osc, "grid": res.n, "converged": res.converged}
    common = {"family": name, "beta": beta, "lam": lam, "C_P": C, "err": err, "disc_err": res.error,
              "trunc_err": trunc, "gaussian_C": 1 / (beta * lam)}
    gauss = isinstance(fam, GaussianFamily)
    exact_C = Fraction(1) / (Fraction(beta) * Fraction(lam)) if gauss else None
    recs = []

    lowers = {"linear": rayleigh_lower_grid(res, "linear"),
              "quadratic": rayleigh_lower_grid(res, "quadratic")}
    certified_lower = None
    if plan.mp_check(name, lam):
        coeffs = chebyshev_fit(res, -R, R, 40)
        certified_lower = float(rayleigh_lower_mp(lambda s: fam.loss_mp(s) + lam * s * s / 2, beta, -R, R,
                                                  coeffs, dps=20))
        lowers["eigenfunction_mp"] = certified_lower
    for kind, lb in lowers.items():
        v = lower_verdict(lb, C, err)
        if gauss and kind == "linear" and abs(lb - float(exact_C)) <= err:
            v = Verdict.TIGHT   # Var(theta) = 1/(beta lambda) = C_P exactly (theory.poincare.gaussian_equality)
        recs.append(Record("poincare.gibbs.test_function_lower", f"{key}-{kind}", v, slack=C - lb, value=C,
                           bound=lb, backend="mpmath" if kind.endswith("mp") else "numpy",
                           dtype="mp20" if kind.endswith("mp") else "float64", provenance=prov,
                           extra={**common, "kind": kind}))

    for tid, ev in (("poincare.gibbs.bakry_emery", PB.bakry_emery), ("poincare.gibbs.holley_stroock",
                                                                     PB.holley_stroock)):
        out = ev(fam, beta, lam)
        bound = out["bound"]
        v = upper_verdict(bound, C, err, certified_lower)
        if gauss:
            exact = (PB.bakry_emery_exact if "bakry" in tid else PB.holley_stroock_exact)(fam, beta, lam)["bound"]
            v = Verdict.TIGHT if exact == exact_C and abs(bound - C) <= err else Verdict.VIOLATED
        k = PB.constants(fam)
        recs.append(Record(tid, key, v, slack=None if bound is None else bound - C, value=C, bound=bound,
                           provenance=prov, extra={**common, "reason": out["reason"], "m": k["m"],
                                                   "hessian_bounded": k["hessian_bounded"],
                                                   "osc_certified": PB.oscillation(fam)}))

    vc = PB.villani_check_exact(fam, beta, lam)
    if vc["holds"]:
        v = Verdict.HOLDS if vc["certified"] else Verdict.UNDECIDED
    else:
        v = Verdict.VIOLATED if vc["certified"] else Verdict.UNDECIDED
    recs.append(Record("poincare.gibbs.villani", key, v, slack=lam - vc["lambda_V"], value=lam, bound=vc["lambda_V"],
                       backend="mpmath" if "coefficient" in vc else "torch", provenance=prov,
                       extra={**common, "numerically_holds": vc["holds"], "witness": vc["witness"],
                              "method": vc["method"], "certified": vc["certified"]}))
    return recs


def run_campaign(store, plan: Plan, console=None) -> None:
    """Every (family, beta, lambda) chunk not yet stored; a violated proved bound stops loudly."""
    campaign.run(store, plan.campaign, [campaign.Chunk(f"{name}-b{beta:g}-l{lam:g}", check_instance, (name, beta, lam, plan))
                                        for name in plan.families for beta, lam in plan.grid(name)],
                 console=console, description="Poincare constants")
