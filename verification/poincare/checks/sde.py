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
* expected loss: the abstract's claim that the SDE minimises the loss, on higher-dimensional
  attention (and LoRA in --full) at several beta: E_beta[L] - inf L (inf L estimated from above by
  L-BFGS, so the statistic underestimates the excess) against the Laplace value d/(2 beta)
  (:func:`excess_outcome`), and the distance of the chains to the minimisers of L found over time,
  mean +- 3 se over chains.

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

VERSION = "v3"
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


def excess_outcome(excess: float, se: float, laplace: float) -> tuple[Outcome, tuple[float, float]]:
    """The abstract's claim that the SDE minimises the loss, at one beta: E_beta[L] - inf L against the
    Laplace value d/(2 beta) of a Gibbs measure that minimises L. ``excess`` is measured against the best
    L found (>= inf L), so the true excess is at least the statistic: refuted when the whole interval
    excess +- Z_SE se lies above d/(2 beta); supported when it reaches d/(2 beta) or below and is
    narrow; inconclusive when its half-width exceeds MAX_REL_HALF_WIDTH x d/(2 beta).

    >>> [excess_outcome(x, 0.001, 0.1)[0].value for x in (0.5, 0.1, 0.02)] + [excess_outcome(0.1, 0.1, 0.1)[0].value]
    ['refuted', 'supported', 'supported', 'inconclusive']
    """
    lo, hi = excess - Z_SE * se, excess + Z_SE * se
    if lo > laplace:
        return Outcome.REFUTED, (lo, hi)
    if not math.isfinite(se) or Z_SE * se > MAX_REL_HALF_WIDTH * laplace:
        return Outcome.INCONCLUSIVE, (lo, hi)
    return Outcome.SUPPORTED, (lo, hi)


def _minimisers_of_loss(fam, seed: int, dev, runs: int = 4) -> tuple[torch.Tensor, float]:
    """L-BFGS on L from ``runs`` starts: the end points within 1e-6 of the best (an estimate of the
    minimiser set) and the best value (an upper estimate of inf L)."""
    ends = [minimise(lambda t: fam.loss(t), fam.dim, seed + 100 * k, starts=1, scale=2.0, device=dev)
            for k in range(runs)]
    best = min(v for _, v in ends)
    return torch.stack([th for th, v in ends if v <= best + 1e-6]), best


def _distance_series(d: torch.Tensor, dt: float, points: int = 8) -> list[list[float]]:
    """[t, mean, se] of the distances d (T, B) at ``points`` record times (first to last)."""
    T, B = d.shape
    idx = sorted({int(round(k * (T - 1) / (points - 1))) for k in range(points)})
    return [[(i + 1) * dt, float(d[i].mean()), float(d[i].std() / math.sqrt(B))] for i in idx]


def expected_loss_records(name: str, lam: float, betas, seed: int, chains: int, steps: int, step: float = 5e-3):
    """Per beta: E_beta[L] - inf L (inf L: the best of L-BFGS on L and at theta*_lambda, an upper
    estimate) against the Laplace value d/(2 beta), and the distance of the chains to the minimisers
    of L found (and to theta*_lambda) over time, each with mean +- Z_SE se over chains."""
    dev = default_device()
    fam = family(name, seed).to(dev)
    th_star, _ = minimise(lambda t: fam.F_torch(t, lam), fam.dim, seed + 21, device=dev)
    L_star = float(fam.loss(th_star))
    argmin_L, best_L = _minimisers_of_loss(fam, seed + 22, dev)
    inf_L = min(best_L, L_star)
    recs = []
    for beta in betas:
        gen = torch.Generator().manual_seed(seed + 23)
        noise = torch.randn(chains, fam.dim, generator=gen, dtype=torch.float64).to(dev)
        theta0 = th_star + noise / math.sqrt(beta * (lam + 1))

        def observe(th):                                  # (B, dim) -> (B, 3): L, dist to argmin L, to theta*
            return torch.stack([fam.loss(th), torch.cdist(th, argmin_L).min(-1).values,
                                (th - th_star).norm(dim=-1)], -1)

        run = simulate(lambda th: fam.F_torch(th, lam), theta0, beta, step, steps, every=10, observe=observe,
                       seed=seed + 24, mala=True)
        obs = run.obs.cpu()
        Lm = obs[obs.shape[0] // 2:, :, 0].mean(0)                        # per-chain means, second half (B,)
        EL, EL_se = float(Lm.mean()), float(Lm.std() / math.sqrt(chains))
        laplace = fam.dim / (2 * beta)
        out, iv = excess_outcome(EL - inf_L, EL_se, laplace)
        prov = {**fam.provenance, "seed": seed, "beta": beta, "lambda": lam, "chains": chains, "steps": steps,
                "step": step, "scheme": "MALA", "start": "theta*_lambda + Gaussian", "device": str(dev)}
        recs.append(outcome_record(
            "poincare.langevin.expected_loss", f"{name}-b{beta:g}-l{lam:g}", out, EL - inf_L, iv,
            f"E[L] over the second half of MALA chains minus the best L found (L-BFGS), mean of chain means "
            f"+- {Z_SE:g} se, against the Laplace value d/(2 beta)",
            slack=laplace - (EL - inf_L), value=EL - inf_L, bound=laplace, backend="torch", provenance=prov,
            extra={"family": name, "beta": beta, "lam": lam, "E_L": EL, "E_L_se": EL_se, "min_L": inf_L,
                   "L_star": L_star, "laplace": laplace, "dim": fam.dim, "minimisers_found": int(argmin_L.shape[0]),
                   "dist_argmin_L": _distance_series(obs[..., 1], run.dt),
                   "dist_theta_star": _distance_series(obs[..., 2], run.dt),
                   "acceptance": run.acceptance, "kind": "expected_loss"}))
    return recs


def run_sde(store, seed: int, full: bool, console=None) -> None:
    campaign.run(store, sde_campaign(seed, full), sde_chunks(seed, full), console=console, description="Langevin SDE")


def sde_chunks(seed: int, full: bool) -> list:
    """The Langevin chunks of the quick / full plan (nothing run)."""
    C = campaign.Chunk
    chunks = [C("rate-attn1", rate_records, ("attn1", 4.0, 0.3, seed, 8000 if full else 2000, 600)),
              C("expected-attnfull", expected_loss_records,
                ("attnfull", 0.1, (4.0, 16.0, 64.0, 256.0) if full else (4.0, 64.0, 256.0), seed,
                 2048 if full else 256, 4000 if full else 2000))]
    if full:
        chunks += [C("rate-gauss1", rate_records, ("gauss1", 2.0, 0.5, seed, 8000, 600)),
                   C("expected-lorafull", expected_loss_records, ("lorafull", 0.1, (4.0, 16.0, 64.0, 256.0), seed, 2048, 4000))]
    return chunks
