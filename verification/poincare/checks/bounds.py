"""The Poincare campaign: estimated C_P of regularised attention / LoRA Gibbs measures against the bounds.

For each (family, beta, lambda): the window (sized from the Gaussian scale of the regulariser and a
certified oscillation bound of L, or a stated heuristic where L is unbounded), the discretised C_P (an
estimate) on that window with its discretisation error, a truncation check on a 1.25x window, the upper bounds
(Bakry-Emery, Holley-Stroock: proved, verdicts) and the test-function lower bounds (linear = Var theta_k,
quadratic span, and in 1-D the discretised eigenfunction by mpmath quadrature over the full line: a
quadrature *estimate*, never used to certify a violation), and Villani's condition (the seed's claim, a
conjecture here: an outcome, supported / refuted / inconclusive, with lambda_V as its statistic). In 1-D
also the certified Muckenhoupt bracket of C_P on the same window (numerics.poincare.muckenhoupt,
python-flint arb balls), with the estimate checked against it (:func:`muckenhoupt_record`).

Tight is decided by the theorem, never by a tolerance: for the Gaussian family (F = lam/2 |theta|^2)
C_P = 1/(beta lam) = 1/kappa exactly (theory.poincare.gaussian_equality), the Bakry-Emery and
Holley-Stroock bounds equal it in exact arithmetic (Fractions), and a span containing the linear test
functions attains it. Those records store the exact value as both value and bound (slack 0); whether
the float computation agrees within its stated error is a separate field (``extra["float_agrees"]``).
An upper bound below the truth beyond the error is ``violated`` and raises ViolationError after the
chunk is stored. Every record also carries quadrature expectations under the discretised mu
(E_mu[L], E_mu[F], L at the grid argmin of F, min L on the grid) for the report. The mathematics:
docs/theory.md section 4; the plan (families, grid, campaign name): verification.poincare.checks;
tables and figures: verification.poincare.report.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from numerics.poincare import bounds as PB
from numerics.poincare.losses import GaussianFamily, family
from numerics.poincare.constants import (chebyshev_fit, gaussian_window, poincare_constant_1d, poincare_constant_2d,
                                         rayleigh_lower_mp, rayleigh_lower_grid)
from numerics.poincare.muckenhoupt import muckenhoupt_bracket, potential_acb
from theory.verdicts import Outcome, Verdict
from verification import campaign
from verification.store import Record, outcome_record


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


def true_constant(fam, beta: float, lam: float, R: float, full: bool):
    if fam.dim == 1:
        return poincare_constant_1d(fam.F(lam), beta, -R, R)
    return poincare_constant_2d(fam.F(lam), beta, [(-R, R)] * 2, n0=48, n_max=384 if full else 192,
                                rtol=1e-4 if full else 1e-3)


def truncation_error(fam, beta: float, lam: float, R: float) -> float:
    """|C_P(1.25 R) - C_P(R)| at equal mesh width (1-D: both Richardson-converged; 2-D: one solve each
    at h = 2R/96, so that the difference isolates the window, not the mesh)."""
    if fam.dim == 1:
        return abs(poincare_constant_1d(fam.F(lam), beta, -1.25 * R, 1.25 * R).value
                   - poincare_constant_1d(fam.F(lam), beta, -R, R).value)
    a = poincare_constant_2d(fam.F(lam), beta, [(-R, R)] * 2, n0=96, n_max=96)
    b = poincare_constant_2d(fam.F(lam), beta, [(-1.25 * R, 1.25 * R)] * 2, n0=120, n_max=120)
    return abs(a.value - b.value)


def upper_verdict(bound, C: float, err: float) -> Verdict:
    """Proved upper bound vs the computed C_P +- err (no tight: equality is decided by the theorem)."""
    if bound is None:
        return Verdict.NOT_APPLICABLE
    if bound < C - err:
        return Verdict.VIOLATED
    return Verdict.HOLDS if bound > C + err else Verdict.UNDECIDED


def lower_verdict(lb: float, C: float, err: float) -> Verdict:
    """Test-function lower bound vs the computed C_P +- err (no tight: see gaussian_exact)."""
    if lb > C + err:
        return Verdict.VIOLATED
    return Verdict.HOLDS if lb < C - err else Verdict.UNDECIDED


def bracket_verdict(lower: float, upper: float, C: float, err: float) -> Verdict:
    """The discretised estimate C +- err against its certified Muckenhoupt bracket [lower, upper]:
    violated when the estimate lies outside it beyond its error (the discretisation is wrong), holds
    when it lies strictly inside, undecided otherwise.

    >>> [bracket_verdict(1, 8, C, 0.1).value for C in (0.5, 4, 1.05, 9)]
    ['violated', 'holds', 'undecided', 'violated']
    """
    if C + err < lower or C - err > upper:
        return Verdict.VIOLATED
    return Verdict.HOLDS if lower < C - err and C + err < upper else Verdict.UNDECIDED


def muckenhoupt_record(fam, beta: float, lam: float, R: float, C: float, err: float, key: str, prov: dict,
                       common: dict, exact_C=None) -> Record:
    """1-D: the certified Muckenhoupt bracket of C_P on the window (numerics.poincare.muckenhoupt), with
    the discretised estimate checked against it (filed as a test-function lower bound: its lower end is
    the Rayleigh quotient of an explicit test function)."""
    mk = muckenhoupt_bracket(potential_acb(fam, beta, lam), -R, R)
    lo, hi = mk["lower"], mk["upper"]
    extra = {**common, "kind": "muckenhoupt", "certified": True, "bracket": [lo, hi], "computed": lo,
             "inside": bool(lo <= C - err and C + err <= hi), "B_plus": list(mk["B_plus"]),
             "B_minus": list(mk["B_minus"]), "cells": mk["cells"], "method": mk["method"]}
    if exact_C is not None:
        extra["exact_inside"] = bool(lo <= float(exact_C) <= hi)
    return Record("poincare.gibbs.test_function_lower", f"{key}-muckenhoupt", bracket_verdict(lo, hi, C, err),
                  slack=C - lo, value=C, bound=lo, backend="python-flint (arb)", dtype="arb", provenance=prov,
                  extra=extra)


def gaussian_exact(beta: float, lam: float) -> Fraction:
    """C_P of N(0, I/(beta lam)) in exact arithmetic: 1/kappa, kappa = beta lam (theory.poincare)."""
    return 1 / (Fraction(beta) * Fraction(lam))


def villani_outcome(vc: dict) -> Outcome:
    """supported (lambda above the lambda_V interval, or proved), refuted (below it), inconclusive (inside)."""
    return {True: Outcome.SUPPORTED, False: Outcome.REFUTED, None: Outcome.INCONCLUSIVE}[vc["holds"]]


def villani_record(fam, beta: float, lam: float, key: str, prov: dict, extra: dict, certify: bool = True) -> Record:
    """The seed's claim at one (family, beta, lambda) as an outcome, statistic lambda_V(beta)."""
    vc = PB.villani_check(fam, beta, lam, certify=certify)
    how = ("proved for this family" if vc["certified"] and vc["holds"] else
           "failure enclosed by interval arithmetic" if vc["certified"] else
           "lambda against the estimated lambda_V interval (not certified)")
    return outcome_record("poincare.gibbs.villani", key, villani_outcome(vc), vc["lambda_V"], vc["interval"],
                          f"{vc['method']}; decided: {how}", slack=lam - vc["lambda_V"], value=lam,
                          bound=vc["lambda_V"], backend="mpmath.iv" if "coefficient" in vc else "torch",
                          provenance=prov, extra={**extra, "numerically_holds": vc["holds"], "witness": vc["witness"],
                                                  "certified": vc["certified"], "decided": how,
                                                  "coefficient": vc.get("coefficient")})


def expectations(fam, lam: float, res) -> dict:
    """Quadrature under the discretised mu: E_mu[L], E_mu[F], L at the grid argmin of F, min L on the grid."""
    pts = np.stack(np.meshgrid(*res.grid, indexing="ij"), -1) if len(res.grid) == 2 else res.grid[0][:, None]
    L = fam.loss_np(pts)                                            # (n,) or (n, n)
    F = L + 0.5 * lam * np.sum(pts ** 2, -1)
    w = res.density
    i = np.unravel_index(int(np.argmin(F)), F.shape)
    return {"E_L": float(np.sum(w * L)), "E_F": float(np.sum(w * F)), "F_argmin": float(F[i]),
            "L_argmin_F": float(L[i]), "min_L": float(L.min())}


def check_instance(name: str, beta: float, lam: float, plan: Any) -> list[Record]:
    """All records of one (family, beta, lambda)."""
    fam = family(name, plan.seed)
    R, osc, how = window(fam, beta, lam)
    res = true_constant(fam, beta, lam, R, plan.full)
    trunc = truncation_error(fam, beta, lam, R)
    C, err = res.value, res.error + trunc
    key = f"{name}-b{beta:g}-l{lam:g}"
    prov = {**fam.provenance, "seed": plan.seed, "beta": beta, "lambda": lam, "window": [-R, R],
            "window_rule": how, "osc_used": osc, "grid": res.n, "converged": res.converged}
    common = {"family": name, "beta": beta, "lam": lam, "C_P": C, "err": err, "disc_err": res.error,
              "trunc_err": trunc, "gaussian_C": 1 / (beta * lam), **expectations(fam, lam, res)}
    gauss = isinstance(fam, GaussianFamily)
    exact_C = gaussian_exact(beta, lam) if gauss else None
    recs = []

    lowers = {"linear": rayleigh_lower_grid(res, "linear"),
              "quadratic": rayleigh_lower_grid(res, "quadratic")}
    if plan.mp_check(name, lam):
        coeffs = chebyshev_fit(res, -R, R, 40)
        lowers["eigenfunction_mp"] = float(rayleigh_lower_mp(lambda s: fam.loss_mp(s) + lam * s * s / 2, beta, -R, R,
                                                             coeffs, dps=20))
    for kind, lb in lowers.items():
        mp = kind.endswith("mp")
        extra = {**common, "kind": kind, "certified": False, "computed": lb}
        if gauss and kind in ("linear", "quadratic"):
            # the span holds theta: Var(theta_k) / 1 = 1/(beta lam) = C_P by the theorem, not by a tolerance
            ex = float(exact_C)
            extra.update(float_agrees=bool(abs(lb - ex) <= err and abs(C - ex) <= err), exact="1/(beta lambda)")
            recs.append(Record("poincare.gibbs.test_function_lower", f"{key}-{kind}", Verdict.TIGHT, slack=0.0,
                               value=ex, bound=ex, provenance=prov, extra=extra))
            continue
        recs.append(Record("poincare.gibbs.test_function_lower", f"{key}-{kind}", lower_verdict(lb, C, err),
                           slack=C - lb, value=C, bound=lb, backend="mpmath.quad" if mp else "numpy",
                           dtype="mp20" if mp else "float64", provenance=prov, extra=extra))

    for tid, ev, exact_ev in (("poincare.gibbs.bakry_emery", PB.bakry_emery, PB.bakry_emery_exact),
                              ("poincare.gibbs.holley_stroock", PB.holley_stroock, PB.holley_stroock_exact)):
        out = ev(fam, beta, lam)
        bound = out["bound"]
        k = PB.constants(fam)
        extra = {**common, "reason": out["reason"], "m": k["m"], "hessian_bounded": k["hessian_bounded"],
                 "osc_certified": PB.oscillation(fam)}
        if gauss and exact_ev(fam, beta, lam)["bound"] == exact_C:
            # equality in exact arithmetic (Fractions): tight by the theorem; the float solve is checked apart
            ex = float(exact_C)
            extra.update(float_agrees=bool(abs(bound - C) <= err and abs(C - ex) <= err), computed=bound)
            recs.append(Record(tid, key, Verdict.TIGHT, slack=0.0, value=ex, bound=ex, backend="fractions",
                               dtype="exact", provenance=prov, extra=extra))
            continue
        recs.append(Record(tid, key, upper_verdict(bound, C, err), slack=None if bound is None else bound - C,
                           value=C, bound=bound, provenance=prov, extra=extra))

    if fam.dim == 1:
        recs.append(muckenhoupt_record(fam, beta, lam, R, C, err, key, prov, common, exact_C))
    recs.append(villani_record(fam, beta, lam, key, prov, common))
    return recs


def plan_chunks(plan: Any) -> list[campaign.Chunk]:
    """One chunk per (family, beta, lambda) of ``plan`` (nothing run)."""
    return [campaign.Chunk(f"{name}-b{beta:g}-l{lam:g}", check_instance, (name, beta, lam, plan))
            for name in plan.families for beta, lam in plan.grid(name)]


def run_campaign(store, plan: Any, console=None, executor: Any = None) -> None:
    """Every (family, beta, lambda) chunk not yet stored; a violated proved bound stops loudly."""
    campaign.run(store, plan.campaign, plan_chunks(plan), console=console, description="Poincare constants",
                 executor=executor)
