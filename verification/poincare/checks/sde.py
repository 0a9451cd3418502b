"""Langevin checks of the Poincare campaign (numerics/poincare/langevin.py), stored as records.

Statistical comparisons (registry category "statistical"): each record is an *outcome* (supported /
refuted / inconclusive) with its statistic, its interval and the method (verification.store.outcome_record).
The interval is always estimate +- Z_SE standard errors (Z_SE = 3, stated in the record's method);
a refuted comparison is a finding for the tables, never a stop.

* rate: attn1 (and gauss1 in --full), MALA chains started exactly from the discretised mu_beta; the
  autocorrelation of the discretised first eigenfunction decays at 1/(beta C_P) (the SDE generator is
  (1/beta) L; chi^2 then decays at twice that). Statistic: the fitted rate, se over 8 chain groups.
  supported if 1/(beta C_P) lies in rate +- 3 se, refuted if not, inconclusive if the interval's
  half-width exceeds MAX_REL_HALF_WIDTH of the prediction (too wide to tell). The same rule compares
  E_mu[L] by SDE (mean of independent chain means +- 3 se) with quadrature.
* expected loss: higher-dimensional attention (and LoRA in --full) at several beta: the claim
  E_beta[F] >= F(theta*_lambda) (theta*_lambda from L-BFGS, multi-start) is one-sided: supported if
  E[F] - 3 se >= F*, refuted if E[F] + 3 se < F*, else inconclusive; E_beta[L] against L(theta*_lambda)
  and min L is stored with it. The regularisation gap L(theta*_lambda) - min L (min L: the best of
  L-BFGS runs on L and of every theta*_lambda found, an upper estimate of inf L) is deterministic.

The mathematics (time scaling, rate 1/(beta C_P)): docs/theory.md section 4; the table:
verification.poincare.report.tables.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from numerics.device import default_device
from numerics.poincare.langevin import autocorrelation, decay_rate, predicted_rate, sample_grid_density, simulate
from numerics.poincare.losses import family
from numerics.poincare.constants import gaussian_window, poincare_constant_1d
from numerics.poincare import bounds as PB
from numerics.poincare.optimise import minimise
from theory.verdicts import Outcome
from verification import campaign
from verification.store import outcome_record

VERSION = "v2"
GAP_LAMBDAS = (0.01, 0.03, 0.1, 0.3, 1.0)
Z_SE = 3.0                  # intervals: estimate +- Z_SE standard errors
MAX_REL_HALF_WIDTH = 0.25   # an interval wider than this (relative to the prediction) is inconclusive


def two_sided(estimate: float, se: float, predicted: float) -> tuple[Outcome, tuple[float, float]]:
    """Does ``predicted`` lie in estimate +- Z_SE se? inconclusive when that is too wide to tell.

    >>> two_sided(1.0, 0.01, 1.02)[0].value, two_sided(1.0, 0.01, 1.1)[0].value, two_sided(1.0, 1.0, 1.1)[0].value
    ('supported', 'refuted', 'inconclusive')
    """
    lo, hi = estimate - Z_SE * se, estimate + Z_SE * se
    if not (math.isfinite(lo) and math.isfinite(hi)) or Z_SE * se > MAX_REL_HALF_WIDTH * abs(predicted):
        return Outcome.INCONCLUSIVE, (lo, hi)
    return (Outcome.SUPPORTED if lo <= predicted <= hi else Outcome.REFUTED), (lo, hi)


def at_least(estimate: float, se: float, reference: float) -> tuple[Outcome, tuple[float, float]]:
    """One-sided claim estimate >= reference with interval estimate +- Z_SE se."""
    lo, hi = estimate - Z_SE * se, estimate + Z_SE * se
    return (Outcome.SUPPORTED if lo >= reference else Outcome.REFUTED if hi < reference
            else Outcome.INCONCLUSIVE), (lo, hi)


def sde_campaign(seed: int, full: bool) -> str:
    return f"poincare.sde-{VERSION}-seed{seed}-{'full' if full else 'quick'}"


def rate_records(name: str, beta: float, lam: float, seed: int, chains: int, steps: int, step: float = 0.01):
    fam = family(name, seed)
    R = gaussian_window(beta, lam, PB.oscillation(fam), 1)
    res = poincare_constant_1d(fam.F(lam), beta, -R, R)
    x, f, mass = res.grid[0], res.eigenfunction, res.density
    theta0 = sample_grid_density(x, mass, chains, seed=seed + 11)

    def observe(th):                                                 # (B, 1) -> (B, 2): [eigenfunction, L]
        e = torch.as_tensor(np.interp(th[:, 0].cpu().numpy(), x, f))
        return torch.stack([e, fam.loss(th.cpu())], -1)

    run = simulate(lambda th: fam.F_torch(th, lam), theta0, beta, step, steps, every=5, observe=observe,
                   seed=seed + 12, mala=True)
    eig, loss = run.obs[..., 0], run.obs[..., 1]                     # (T, B)
    lag = min(int(2.5 * beta * res.value / run.dt), eig.shape[0] - 1)
    rates = [decay_rate(autocorrelation(g, lag, mean=torch.tensor(0.0), var=torch.tensor(1.0)), run.dt)
             for g in torch.chunk(eig, 8, dim=1)]
    rate, se = float(np.mean(rates)), float(np.std(rates, ddof=1) / math.sqrt(len(rates)))
    pred = predicted_rate(res.value, beta)
    key = f"{name}-b{beta:g}-l{lam:g}"
    prov = {**fam.provenance, "seed": seed, "beta": beta, "lambda": lam, "chains": chains, "steps": steps,
            "step": step, "scheme": "MALA", "device": str(theta0.device)}
    chain_means = loss.mean(0)
    EL, EL_se = float(chain_means.mean()), float(chain_means.std() / math.sqrt(chains))
    EL_quad = float(np.sum(mass * fam.loss_np(x[:, None])))
    rate_out, rate_iv = two_sided(rate, se, pred)
    loss_out, loss_iv = two_sided(EL, EL_se, EL_quad)
    rule = f"+- {Z_SE:g} se; inconclusive if the half-width exceeds {MAX_REL_HALF_WIDTH:g} x the reference"
    return [outcome_record("poincare.langevin.rate", f"{key}-rate", rate_out, rate, rate_iv,
                           f"autocorrelation decay of the eigenfunction, mean of 8 chain groups {rule}",
                           slack=pred - rate, value=rate, bound=pred, backend="torch", provenance=prov,
                           extra={"family": name, "beta": beta, "lam": lam, "se": se, "C_P": res.value,
                                  "prediction": "1/(beta C_P)", "acceptance": run.acceptance, "kind": "rate"}),
            outcome_record("poincare.langevin.rate", f"{key}-mean-loss", loss_out, EL, loss_iv,
                           f"mean of independent chain means {rule}", slack=EL_quad - EL, value=EL, bound=EL_quad,
                           backend="torch", provenance=prov,
                           extra={"family": name, "beta": beta, "lam": lam, "se": EL_se, "kind": "mean_loss"})]


def expected_loss_records(name: str, lam: float, betas, seed: int, chains: int, steps: int, step: float = 5e-3):
    dev = default_device()
    fam = family(name, seed).to(dev)
    th_star, F_star = minimise(lambda t: fam.F_torch(t, lam), fam.dim, seed + 21, device=dev)
    L_star = float(fam.loss(th_star))
    _, min_L = minimise(lambda t: fam.loss(t), fam.dim, seed + 22, scale=2.0, device=dev)
    optima = {lam_g: minimise(lambda t: fam.F_torch(t, lam_g), fam.dim, seed + 25, device=dev)[0]
              for lam_g in GAP_LAMBDAS}
    L_opt = {lam_g: float(fam.loss(th)) for lam_g, th in optima.items()}
    min_L = min(min_L, L_star, *L_opt.values())
    recs = []
    for beta in betas:
        gen = torch.Generator().manual_seed(seed + 23)
        noise = torch.randn(chains, fam.dim, generator=gen, dtype=torch.float64).to(dev)
        theta0 = th_star + noise / math.sqrt(beta * (lam + 1))
        run = simulate(lambda th: fam.F_torch(th, lam), theta0, beta, step, steps, every=10,
                       observe=lambda th: torch.stack([fam.F_torch(th, lam), fam.loss(th)], -1), seed=seed + 24, mala=True)
        half = run.obs[run.obs.shape[0] // 2:]                           # discard the first half (burn-in)
        Fm, Lm = half[..., 0].mean(0).cpu(), half[..., 1].mean(0).cpu()  # per-chain means (B,)
        EF, EF_se = float(Fm.mean()), float(Fm.std() / math.sqrt(chains))
        EL, EL_se = float(Lm.mean()), float(Lm.std() / math.sqrt(chains))
        prov = {**fam.provenance, "seed": seed, "beta": beta, "lambda": lam, "chains": chains, "steps": steps,
                "step": step, "scheme": "MALA", "start": "theta*_lambda + Gaussian", "device": str(dev)}
        out, iv = at_least(EF, EF_se, F_star)
        recs.append(outcome_record("poincare.langevin.expected_loss", f"{name}-b{beta:g}-l{lam:g}", out, EF, iv,
                           f"E[F] over the second half of MALA chains, mean of chain means +- {Z_SE:g} se, "
                           "one-sided against F(theta*) from L-BFGS",
                           slack=EF - F_star, value=EF, bound=F_star, backend="torch", provenance=prov,
                           extra={"family": name, "beta": beta, "lam": lam, "E_F_se": EF_se, "E_L": EL,
                                  "E_L_se": EL_se, "L_star": L_star, "min_L": min_L,
                                  "equipartition": fam.dim / (2 * beta), "acceptance": run.acceptance,
                                  "kind": "expected_loss"}))
    for lam_g, th_g in optima.items():
        L_g = L_opt[lam_g]
        recs.append(outcome_record("poincare.langevin.expected_loss", f"{name}-gap-l{lam_g:g}",
                           Outcome.SUPPORTED if L_g >= min_L else Outcome.REFUTED, L_g - min_L, None,
                           "deterministic: L-BFGS x4 on F_lambda and on L (no sampling error, no interval)",
                           slack=L_g - min_L, value=L_g, bound=min_L, backend="torch",
                           provenance={**fam.provenance, "seed": seed, "lambda": lam_g, "optimiser": "L-BFGS x4"},
                           extra={"family": name, "lam": lam_g, "theta_norm": float(th_g.norm()), "kind": "gap"}))
    return recs


def run_sde(store, seed: int, full: bool, console=None) -> None:
    C = campaign.Chunk
    chunks = [C("rate-attn1", rate_records, ("attn1", 4.0, 0.3, seed, 8000 if full else 2000, 600)),
              C("expected-attnfull", expected_loss_records,
                ("attnfull", 0.1, (4.0, 16.0, 64.0, 256.0) if full else (4.0, 64.0), seed,
                 2048 if full else 256, 4000 if full else 2000))]
    if full:
        chunks += [C("rate-gauss1", rate_records, ("gauss1", 2.0, 0.5, seed, 8000, 600)),
                   C("expected-lorafull", expected_loss_records, ("lorafull", 0.1, (4.0, 16.0, 64.0, 256.0), seed, 2048, 4000))]
    campaign.run(store, sde_campaign(seed, full), chunks, console=console, description="Langevin SDE")
