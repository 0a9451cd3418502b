"""Poincare constants of Gibbs measures mu_beta ~ exp(-beta F), F = L + (lambda/2) |theta|^2, of
regularised attention / LoRA losses, their bounds and the Langevin SDE (docs/theory.md section 4).

Public API (``fam`` is a loss family from ``family(name, seed)``; theta batched as (..., dim)):

    family(name, seed)             a loss family: gauss1/2, attn1/2, lora2, attnfull, lorafull   (losses)
    LossFamily, GaussianFamily, AttentionScalar, LoRADirectional, AttentionFull, LoRAFull
                                   the families: loss (torch), F(lam) (numpy), loss_range, ...  (losses)
    poincare_constant_1d(F, beta, lo, hi)   C_P estimate on an interval, with its discretisation error (constants)
    poincare_constant_2d(F, beta, box)      C_P estimate on a 2-D box (PoincareResult)          (constants)
    gaussian_window(beta, lam, osc, dim)    the window that holds all but tol of mu's mass      (constants)
    rayleigh_lower_grid(res, span)          test-function lower bound on the discretised mu     (constants)
    rayleigh_lower_mp(F_mp, beta, lo, hi, coeffs)  the same over the full line, mpmath quadrature (estimate)
    chebyshev_fit(res, lo, hi, degree)      Chebyshev coefficients of the discretised eigenfunction
    bakry_emery(fam, beta, lam)             C_P <= 1/kappa, kappa = beta (lam - m)   -> {"bound", ...} (bounds)
    holley_stroock(fam, beta, lam)          C_P <= exp(beta osc L) / (beta lam)      -> {"bound", ...} (bounds)
    bakry_emery_exact, holley_stroock_exact the same in exact arithmetic for the Gaussian family  (bounds)
    oscillation(fam)                        certified osc L, None where L is unbounded           (bounds)
    attn1_certified(fam), lora2_certified(fam)  certified loss range / Hessian lower bound   (loss_bounds)
    lambda_v(fam, beta)                     lambda_V(beta) (estimate) with its grid-error interval (villani)
    lambda_v_certified(fam, beta)           lora2: a certified bracket of lambda_V(beta), arb balls (villani)
    muckenhoupt_bracket(V, lo, hi)          1-D: certified [lower, upper] of C_P, Muckenhoupt  (muckenhoupt)
    potential_acb(fam, beta, lam)           V = beta F as an acb function (gauss1, attn1)       (muckenhoupt)
    villani_check(fam, beta, lam)           Villani's condition: holds / fails (interval-certified) (villani)
    villani_check_exact(fam, beta, lam)     the certifying path                                   (villani)
    simulate(F, theta0, beta, step, n)      Langevin / MALA chains in a batch (LangevinRun)      (langevin)
    autocorrelation, decay_rate, predicted_rate, sample_grid_density
                                            SDE statistics; the predicted rate is 1/(beta C_P)   (langevin)
    minimise(fn, dim, seed)                 multi-start L-BFGS: (theta, value)                   (optimise)

Certified here means a Lipschitz-grid argument with a stated float allowance
(:mod:`numerics.poincare.loss_bounds`) or mpmath interval arithmetic (:mod:`numerics.poincare.villani`);
the discretised C_P carries an error *estimate* (Richardson extrapolation), never a certificate; in 1-D
its certified bracket comes from Muckenhoupt's criterion in arb ball arithmetic
(:mod:`numerics.poincare.muckenhoupt`, python-flint).
"""
from numerics.poincare.bounds import (bakry_emery, bakry_emery_exact, holley_stroock,  # noqa: F401
                                      holley_stroock_exact, oscillation)
from numerics.poincare.constants import (PoincareResult, chebyshev_fit, gaussian_window,  # noqa: F401
                                         poincare_constant_1d, poincare_constant_2d, rayleigh_lower_grid,
                                         rayleigh_lower_mp)
from numerics.poincare.langevin import (LangevinRun, autocorrelation, decay_rate, predicted_rate,  # noqa: F401
                                        sample_grid_density, simulate)
from numerics.poincare.loss_bounds import attn1_certified, lora2_certified  # noqa: F401
from numerics.poincare.losses import (AttentionFull, AttentionScalar, GaussianFamily, LoRADirectional,  # noqa: F401
                                      LoRAFull, LossFamily, family)
from numerics.poincare.optimise import minimise  # noqa: F401
from numerics.poincare.muckenhoupt import muckenhoupt_bracket, potential_acb  # noqa: F401
from numerics.poincare.villani import lambda_v, lambda_v_certified, villani_check, villani_check_exact  # noqa: F401

__all__ = ["AttentionFull", "AttentionScalar", "GaussianFamily", "LangevinRun", "LoRADirectional", "LoRAFull",
           "LossFamily", "PoincareResult", "attn1_certified", "autocorrelation", "bakry_emery", "bakry_emery_exact",
           "chebyshev_fit", "decay_rate", "family", "gaussian_window", "holley_stroock", "holley_stroock_exact",
           "lambda_v", "lambda_v_certified", "lora2_certified", "minimise", "muckenhoupt_bracket", "oscillation",
           "poincare_constant_1d", "poincare_constant_2d", "potential_acb",
           "predicted_rate", "rayleigh_lower_grid", "rayleigh_lower_mp", "sample_grid_density", "simulate",
           "villani_check", "villani_check_exact"]
