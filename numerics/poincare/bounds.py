"""Evaluators of the registered Poincare bounds (theory/poincare.py) on the loss families.

Each evaluator takes (family, beta, lam) and returns a dict with ``bound`` (None where the bound
does not exist for that family / parameter) and ``reason``. Certified constants (loss range,
Hessian lower bound) come from numerics.poincare.losses and are cached per family.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Optional

import mpmath
import numpy as np
import torch

from numerics.poincare.loss_bounds import attn1_certified, lora2_certified
from numerics.poincare.losses import AttentionScalar, GaussianFamily, LoRADirectional, LossFamily, family


@lru_cache(maxsize=32)
def _constants(name: str, seed: int) -> dict:
    fam = family(name, seed)
    if isinstance(fam, GaussianFamily):
        return {"loss_range": (0.0, 0.0), "m": 0.0, "hessian_bounded": True}
    if isinstance(fam, AttentionScalar) and fam.dim == 1:
        return {**attn1_certified(fam), "hessian_bounded": True}
    if isinstance(fam, LoRADirectional):
        return {**lora2_certified(fam), "m": None, "hessian_bounded": False}
    return {"loss_range": None, "m": None, "hessian_bounded": False}


def constants(fam: LossFamily) -> dict:
    return _constants(fam.name, fam.seed)


def oscillation(fam: LossFamily) -> Optional[float]:
    r = constants(fam)["loss_range"]
    return None if r is None else r[1] - r[0]


def bakry_emery(fam: LossFamily, beta: float, lam: float) -> dict:
    """C_P <= 1/kappa, kappa = beta (lam - m) with L'' >= -m certified; None where no bound exists."""
    k = constants(fam)
    if not k["hessian_bounded"]:
        return {"bound": None, "kappa": None, "reason": "Hess L unbounded below (theory.poincare)"}
    kap = beta * (lam - k["m"])
    if kap <= 0:
        return {"bound": None, "kappa": kap, "reason": f"lambda <= m = {k['m']:.4g}: no convexity"}
    return {"bound": 1 / kap, "kappa": kap, "reason": f"m = {k['m']:.4g}"}


def bakry_emery_exact(fam: LossFamily, beta, lam) -> dict:
    """Gaussian: kappa = beta lam exactly (Fractions); otherwise the fast path (certified m)."""
    if isinstance(fam, GaussianFamily):
        kap = Fraction(beta) * Fraction(lam)
        return {"bound": 1 / kap, "kappa": kap, "reason": "Gaussian: exact"}
    return bakry_emery(fam, float(beta), float(lam))


def holley_stroock(fam: LossFamily, beta: float, lam: float) -> dict:
    """C_P <= exp(beta osc L) / (beta lam) with osc L certified; None if L is unbounded."""
    osc = oscillation(fam)
    if osc is None:
        return {"bound": None, "osc": None, "reason": "L unbounded: no bounded perturbation"}
    return {"bound": math.exp(beta * osc) / (beta * lam), "osc": osc, "reason": f"osc L <= {osc:.4g}"}


def holley_stroock_exact(fam: LossFamily, beta, lam) -> dict:
    if isinstance(fam, GaussianFamily):
        return {"bound": 1 / (Fraction(beta) * Fraction(lam)), "osc": 0, "reason": "Gaussian: exact"}
    return holley_stroock(fam, float(beta), float(lam))


def test_function_lower(res, span: str = "quadratic") -> float:
    from numerics.poincare.constants import rayleigh_lower_grid

    return rayleigh_lower_grid(res, span)


def test_function_lower_exact(fam: LossFamily, beta: float, lam: float, res, lo: float, hi: float,
                              degree: int = 40, dps: int = 20) -> float:
    """1-D: mpmath Rayleigh quotient of the Chebyshev fit of the discrete eigenfunction (full line)."""
    from numerics.poincare.constants import chebyshev_fit, rayleigh_lower_mp

    if fam.dim != 1:
        raise ValueError("test_function_lower_exact: 1-D families only")
    coeffs = chebyshev_fit(res, lo, hi, degree)
    F_mp = (lambda s: fam.loss_mp(s) + lam * s * s / 2)
    return float(rayleigh_lower_mp(F_mp, beta, lo, hi, coeffs, dps))


# -- Villani's condition ------------------------------------------------------------------------------

def _lora_derivs(fam: LoRADirectional, p: np.ndarray):
    pt = torch.as_tensor(p).requires_grad_(True)
    L = fam.loss_p(pt)
    (d1,) = torch.autograd.grad(L.sum(), pt, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), pt)
    return d1.detach().numpy(), d2.numpy()


def _attn2_moments(fam: AttentionScalar, s: np.ndarray):
    st = torch.as_tensor(s).requires_grad_(True)
    g = fam.g(st)
    m2 = (g ** 2).mean(-1)
    (d1,) = torch.autograd.grad(m2.sum(), st, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), st)
    return m2.detach().numpy(), d1.detach().numpy(), d2.numpy()


def villani_lambda_min(fam: LossFamily, beta: float) -> dict:
    """lambda_V(beta): below it the Villani quantity tends to -oo along a curve (theory.poincare).

    lora2: sqrt(max(0, sup_p 2 L''/beta - L'^2)) (sup on a grid of p, refined). attn2: max over local
    minima s0 of m2 of sqrt(m2''(s0)/beta) - m2(s0). attn1, gauss: 0 (bounded derivatives).
    """
    if isinstance(fam, LoRADirectional):
        p = np.linspace(-12, 12, 48001)
        d1, d2 = _lora_derivs(fam, p)
        K = 2 * d2 / beta - d1 ** 2
        i = int(np.argmax(K))
        return {"lambda_V": math.sqrt(max(0.0, K[i])), "witness": float(p[i]), "method": "grid |p|<=12"}
    if isinstance(fam, AttentionScalar) and fam.dim == 2:
        s = np.linspace(-30, 30, 60001)
        m2, d1, d2 = _attn2_moments(fam, s)
        crit = np.nonzero((d1[:-1] < 0) & (d1[1:] >= 0))[0]          # local minima of m2
        best, where = -math.inf, None
        for i in crit:
            val = math.sqrt(max(float(d2[i]), 0.0) / beta) - float(m2[i])
            if val > best:
                best, where = val, float(s[i])
        return {"lambda_V": float(max(0.0, best)), "witness": where, "method": "grid |s|<=30, local minima of m2"}
    return {"lambda_V": 0.0, "witness": None, "method": "bounded derivatives: V >= beta(lam|s|-M1)^2/2 - M2"}


def villani_check(fam: LossFamily, beta: float, lam: float) -> dict:
    """holds: certified (bounded-derivative families); fails: lambda below lambda_V (numerical);
    the exact path certifies a failure at the witness in mpmath."""
    lv = villani_lambda_min(fam, beta)
    certified = isinstance(fam, GaussianFamily) or (isinstance(fam, AttentionScalar) and fam.dim == 1)
    if certified:
        return {"holds": True, "certified": True, **lv}
    return {"holds": bool(lam > lv["lambda_V"]), "certified": False, **lv}


def villani_check_exact(fam: LossFamily, beta: float, lam: float, dps: int = 40) -> dict:
    """Certify a LoRA failure: at the witness p, beta lam^2/2 < L''(p) - beta L'(p)^2/2 in mpmath
    (the r^2 coefficient of V on the hyperbola b c = p is negative, so V -> -oo there)."""
    out = villani_check(fam, beta, lam)
    if out["holds"]:
        return out
    if isinstance(fam, AttentionScalar):
        # attn2: the critical point s0 of m2 to dps digits (findroot), then beta (lam + m2)^2 < m2''
        with mpmath.workdps(dps):
            m2 = (lambda s: fam.moments_mp(s)[0])
            s0 = mpmath.findroot(lambda s: mpmath.diff(m2, s), mpmath.mpf(out["witness"]))
            resid = abs(mpmath.diff(m2, s0))
            coef = beta * (mpmath.mpf(lam) + m2(s0)) ** 2 - mpmath.diff(m2, s0, 2)
            out["coefficient"], out["witness"] = float(coef), float(s0)
            out["certified"] = bool(resid < mpmath.mpf(10) ** (-dps // 2) and coef < -mpmath.mpf(10) ** (-dps // 3))
        return out
    with mpmath.workdps(dps):
        p = mpmath.mpf(out["witness"])
        d1 = mpmath.diff(fam.loss_p_mp, p, 1)
        d2 = mpmath.diff(fam.loss_p_mp, p, 2)
        coef = beta * (mpmath.mpf(lam) ** 2 + d1 ** 2) / 2 - d2
        out["coefficient"] = float(coef)
        out["certified"] = bool(coef < -mpmath.mpf(10) ** (-dps // 2))
    return out
