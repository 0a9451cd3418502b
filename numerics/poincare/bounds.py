"""Evaluators of the registered Poincare bounds (theory/poincare.py) on the loss families.

Each evaluator takes (family, beta, lam) and returns a dict with ``bound`` (None where the bound
does not exist for that family / parameter) and ``reason``. The constants (loss range, Hessian lower
bound) come from numerics.poincare.loss_bounds (Lipschitz-grid bounds with a stated float-rounding
allowance, not interval arithmetic) and are cached per family. The test-function lower bound of the
"exact" path is a high-precision *quadrature estimate* (mpmath.quad gives no error enclosure).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Optional

from numerics.poincare.loss_bounds import attn1_certified, lora2_certified
from numerics.poincare.losses import AttentionScalar, GaussianFamily, LoRADirectional, LossFamily, family
from theory.errors import InvalidInput


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
    """1-D: mpmath Rayleigh quotient of the Chebyshev fit of the discrete eigenfunction (full line).
    A quadrature estimate at ``dps`` digits, not an enclosure (see constants.rayleigh_lower_mp)."""
    from numerics.poincare.constants import chebyshev_fit, rayleigh_lower_mp

    if fam.dim != 1:
        raise InvalidInput("test_function_lower_exact: 1-D families only")
    coeffs = chebyshev_fit(res, lo, hi, degree)
    F_mp = (lambda s: fam.loss_mp(s) + lam * s * s / 2)
    return float(rayleigh_lower_mp(F_mp, beta, lo, hi, coeffs, dps))


# -- Villani's condition: numerics.poincare.villani (estimates of lambda_V, interval-certified failures) --
from numerics.poincare.villani import lambda_v as villani_lambda_min, villani_check, villani_check_exact  # noqa: E402,F401
