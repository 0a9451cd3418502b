"""Langevin checks of the Poincare campaign (numerics/poincare/langevin.py), stored as records.

Statistical comparisons (registry category "statistical"): each record is an *outcome* (supported /
refuted / inconclusive) with its statistic, its interval and the method (verification.store.outcome_record).
Agreement with a prediction is an equivalence claim, decided by TOST at a stated margin
(:func:`agreement_outcome`: :func:`verification.stats.agreement`, :data:`REL_MARGIN` of the
prediction, t quantiles with df = independent units - 1): supported only when equivalence is shown,
refuted when a difference beyond the margin is shown, otherwise inconclusive with the smallest margin
the run could show (its MDE). The interval is the 1 - 2 alpha t interval of the mean.

* rate: attn1 (and gauss1 in --full), MALA chains started exactly from the discretised mu_beta; the
  autocorrelation of the discretised first eigenfunction decays at 1/(beta C_P) (the SDE generator is
  (1/beta) L; chi^2 then decays at twice that). Units: 8 chain groups (df = 7), one fitted rate each.
  The same test compares E_mu[L] by SDE (units: the chains' means) with quadrature.
* expected loss: the abstract's claim that the SDE minimises the loss, on higher-dimensional
  attention (and LoRA in --full) at several beta: E_beta[L] - inf L (inf L estimated from above by
  L-BFGS, so the statistic underestimates the excess; units: the chains' means) against the Laplace
  value d/(2 beta) of a Gibbs measure that minimises L, one-sided: at most that value plus the margin
  (:func:`excess_outcome`). With lambda > 0 the
  measure concentrates at the minimiser of F, so the excess tends to the regularisation gap
  L(theta*_lambda) - inf L > 0: where that gap alone exceeds d/(2 beta) by more than the margin the
  claim's failure is predicted (``extra["predicted_refuted"]``), not a finding. Also the distance of
  the chains to the minimisers of L found over time, mean +- 3 se over chains.
* minimises F: what the SDE does minimise (its invariant measure exp(-beta F) concentrates at argmin F as
  beta grows), on the same chains, per beta (:func:`minimises_outcome`): E_beta[F] - F(theta*_lambda)
  against the Laplace value d/(2 beta) and the mean squared distance of the iterates to theta*_lambda
  = argmin F (L-BFGS on F, deterministic from its seeded starts) against the Laplace value
  tr(H^-1)/beta, H the Hessian of F at theta*_lambda (units: the chains' means over their second half).
  The chains start from the Laplace approximation N(theta*_lambda, H^-1/beta) of mu_beta, so what is
  tested is the measure the SDE converges to (the rate rows test the convergence).

The mathematics (time scaling, rate 1/(beta C_P)): docs/theory.md section 4; the table:
verification.poincare.report.tables.
"""
from __future__ import annotations

import math
from typing import Any

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
from verification.stats import ALPHA, agreement, at_most
from verification.store import outcome_record

VERSION = "v5"
REL_MARGIN = 0.10          # agreement: within 10% of the prediction (TOST at level ALPHA)


def agreement_outcome(values, predicted: float) -> tuple[Outcome, tuple[float, float], dict]:
    """Agreement of the units' estimates ``values`` with ``predicted`` within :data:`REL_MARGIN` of
    it (:func:`verification.stats.agreement`): the outcome, the 1 - 2 alpha t interval of the
    mean, and the test's numbers for the record (df, margin, p of equivalence and of a difference, MDE).

    >>> agreement_outcome([1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01], 1.0)[0].value
    'supported'
    >>> agreement_outcome([1.2, 1.21, 1.19, 1.2, 1.22, 1.18, 1.2, 1.19], 1.0)[0].value
    'refuted'
    >>> agreement_outcome([0.6, 1.4, 1.0, 0.7, 1.3, 1.0, 1.35, 0.65], 1.0)[0].value     # too noisy to tell
    'inconclusive'

    The margin is relative to the prediction (to the estimate where the prediction is 0); estimates
    equal to the prediction, all of them, agree exactly (no test is needed).
    """
    values, predicted = [float(v) for v in values], float(predicted)
    if values and all(v == predicted for v in values):
        return Outcome.SUPPORTED, (predicted, predicted), {"test": "exact", "units": len(values), "margin": 0.0,
                                                          "se": 0.0, "df": len(values) - 1}
    scale = abs(predicted) if predicted != 0 else abs(sum(values) / len(values))
    a = agreement(values, predicted, REL_MARGIN * scale, ALPHA)
    test = {"test": "TOST", "alpha": ALPHA, "df": a["df"], "units": a["n"], "margin": a["margin"],
            "p_equivalent": a["p"], "p_different": a["p_outside"], "mde": a["mde"], "se": a["se"]}
    return Outcome(a["outcome"]), a["interval"], test


RULE = (f"TOST against the prediction at a margin of {REL_MARGIN:g} x the prediction, level {ALPHA:g}, t quantiles "
        "with df = units - 1; interval: the 1 - 2 alpha t interval of the mean")


def sde_campaign(plan: Any) -> str:
    """The Langevin campaign of ``plan`` (a :class:`verification.poincare.checks.Plan`: its seed,
    quick or full)."""
    return f"poincare.sde-{VERSION}-seed{plan.seed}-{'full' if plan.full else 'quick'}"


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
    rate = float(np.mean(rates))
    pred = predicted_rate(res.value, beta)
    key = f"{name}-b{beta:g}-l{lam:g}"
    prov = {**fam.provenance, "seed": seed, "beta": beta, "lambda": lam, "chains": chains, "steps": steps,
            "step": step, "scheme": "MALA", "device": str(theta0.device)}
    chain_means = loss.mean(0)
    EL = float(chain_means.mean())
    EL_quad = float(np.sum(mass * fam.loss_np(x[:, None])))
    rate_out, rate_iv, rate_test = agreement_outcome(rates, pred)
    loss_out, loss_iv, loss_test = agreement_outcome(chain_means.tolist(), EL_quad)
    return [outcome_record("poincare.langevin.rate", f"{key}-rate", rate_out, rate, rate_iv,
                           f"autocorrelation decay of the eigenfunction, 8 chain groups (one rate each); {RULE}",
                           slack=pred - rate, value=rate, bound=pred, backend="torch", provenance=prov,
                           extra={"family": name, "beta": beta, "lam": lam, **rate_test, "C_P": res.value,
                                  "prediction": "1/(beta C_P)", "acceptance": run.acceptance, "kind": "rate"}),
            outcome_record("poincare.langevin.rate", f"{key}-mean-loss", loss_out, EL, loss_iv,
                           f"E[L] by the chains (one mean each) against quadrature; {RULE}", slack=EL_quad - EL,
                           value=EL, bound=EL_quad, backend="torch", provenance=prov,
                           extra={"family": name, "beta": beta, "lam": lam, **loss_test, "kind": "mean_loss"})]


def excess_outcome(excess, laplace: float) -> tuple[Outcome, tuple[float, float], dict]:
    """The abstract's claim that the SDE minimises the loss, at one beta: is E_beta[L] - inf L (one
    value per chain, ``excess``) at most the Laplace value d/(2 beta) of a Gibbs measure that
    minimises L, with :data:`REL_MARGIN` of it to spare (:func:`verification.stats.at_most`:
    one-sided t tests, df = chains - 1)? Supported only when that is shown, refuted when the excess is
    shown above it, else inconclusive. The statistic underestimates the true excess (inf L is estimated
    from above), so a refutation is conservative and a support is of the statistic.

    >>> excess_outcome([0.5, 0.52, 0.49, 0.51, 0.5, 0.48, 0.5, 0.51], 0.1)[0].value
    'refuted'
    >>> excess_outcome([0.05, 0.051, 0.049, 0.05, 0.05, 0.0505, 0.0495, 0.05], 0.1)[0].value
    'supported'
    >>> excess_outcome([0.05, 0.15, 0.1, 0.12, 0.08, 0.1], 0.1)[0].value      # a failure to reject
    'inconclusive'
    """
    limit = laplace * (1 + REL_MARGIN)
    a = at_most([float(v) for v in excess], limit, ALPHA)
    test = {"test": "one-sided t (at most)", "alpha": ALPHA, "df": a["df"], "units": a["n"], "limit": limit,
            "margin": limit - laplace, "p_at_most": a["p_less"], "p_above": a["p_greater"], "mde": a["mde"],
            "se": a["se"]}
    return Outcome(a["outcome"]), a["interval"], test


def minimises_outcome(f_excess, dist2, laplace_f: float, laplace_d2: float) -> tuple[Outcome, dict]:
    """Does the SDE minimise F at one beta? Two one-sided t tests over chains (df = chains - 1):
    E_beta[F] - F_min at most d/(2 beta) and E|theta - theta*|^2 at most tr(H^-1)/beta, each limit
    plus :data:`REL_MARGIN` of it. Supported when both are shown at level alpha (an intersection-union
    test, level alpha), refuted when either is shown above its limit at alpha/2 (Bonferroni over the
    two), else inconclusive. Returns the outcome and both tests' numbers.

    >>> minimises_outcome([0.9, 0.91, 0.89, 0.9, 0.92, 0.88], [1.0, 1.02, 0.98, 1.0, 1.01, 0.99], 1.0, 1.1)[0].value
    'supported'
    >>> minimises_outcome([0.9, 0.91, 0.89, 0.9, 0.92, 0.88], [2.0, 2.02, 1.98, 2.0, 2.01, 1.99], 1.0, 1.1)[0].value
    'refuted'
    >>> minimises_outcome([0.9, 1.3, 0.7, 1.2, 0.8, 1.1], [1.0, 1.02, 0.98, 1.0, 1.01, 0.99], 1.0, 1.1)[0].value
    'inconclusive'
    """
    tests = {}
    for name, vals, laplace in (("F", f_excess, laplace_f), ("dist2", dist2, laplace_d2)):
        limit = laplace * (1 + REL_MARGIN)
        a = at_most([float(v) for v in vals], limit, ALPHA)
        tests[name] = {"limit": limit, "laplace": laplace, "mean": a["mean"], "interval": list(a["interval"]),
                       "p_at_most": a["p_less"], "p_above": a["p_greater"], "se": a["se"], "df": a["df"],
                       "mde": a["mde"]}
    if all(t["p_at_most"] < ALPHA for t in tests.values()):
        out = Outcome.SUPPORTED
    elif any(t["p_above"] < ALPHA / 2 for t in tests.values()):
        out = Outcome.REFUTED
    else:
        out = Outcome.INCONCLUSIVE
    return out, tests


MINIMISES_RULE = (f"per beta: E_beta[F] - F_min at most d/(2 beta) and the mean squared distance to argmin F at most "
                  f"tr(H^-1)/beta, each plus {REL_MARGIN:g} of it, one-sided t tests over chains (df = chains - 1); "
                  f"supported when both are shown at level {ALPHA:g}, refuted when either is shown above at "
                  f"{ALPHA / 2:g}, else inconclusive")


def laplace_of_F(fam, th_star: torch.Tensor, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The Hessian H of F at ``th_star``: its eigenvalues and a factor S with S S^T = H^-1 (None when
    H is not positive definite: theta* is then no strict minimiser and Laplace does not apply)."""
    H = torch.autograd.functional.hessian(lambda t: fam.F_torch(t[None], lam)[0], th_star.detach())
    w, U = torch.linalg.eigh((H + H.T) / 2)
    return w, (U * w.clamp_min(1e-300).rsqrt()) if bool(w.min() > 0) else None


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
    of L found (and to theta*_lambda) over time, each with its mean and standard error over chains."""
    dev = default_device()
    fam = family(name, seed).to(dev)
    th_star, F_min = minimise(lambda t: fam.F_torch(t, lam), fam.dim, seed + 21, device=dev)
    L_star = float(fam.loss(th_star))
    argmin_L, best_L = _minimisers_of_loss(fam, seed + 22, dev)
    inf_L = min(best_L, L_star)
    eig, root = laplace_of_F(fam, th_star, lam)
    tr_inv = float((1 / eig).sum()) if root is not None else math.inf
    recs = []
    for beta in betas:
        gen = torch.Generator().manual_seed(seed + 23)
        noise = torch.randn(chains, fam.dim, generator=gen, dtype=torch.float64).to(dev)
        # the Laplace approximation N(theta*, H^-1 / beta) of mu_beta (isotropic where H is not positive definite)
        theta0 = th_star + (noise @ root.T if root is not None else noise / math.sqrt(lam + 1)) / math.sqrt(beta)

        def observe(th):              # (B, dim) -> (B, 4): L, dist to argmin L, to theta*, F
            return torch.stack([fam.loss(th), torch.cdist(th, argmin_L).min(-1).values,
                                (th - th_star).norm(dim=-1), fam.F_torch(th, lam)], -1)

        run = simulate(lambda th: fam.F_torch(th, lam), theta0, beta, step, steps, every=10, observe=observe,
                       seed=seed + 24, mala=True)
        obs = run.obs.cpu()
        Lm = obs[obs.shape[0] // 2:, :, 0].mean(0)                        # per-chain means, second half (B,)
        EL, EL_se = float(Lm.mean()), float(Lm.std() / math.sqrt(chains))
        laplace = fam.dim / (2 * beta)
        out, iv, test = excess_outcome((Lm - inf_L).tolist(), laplace)
        gap = L_star - inf_L                  # the limit of the excess as beta grows (lambda > 0)
        prov = {**fam.provenance, "seed": seed, "beta": beta, "lambda": lam, "chains": chains, "steps": steps,
                "step": step, "scheme": "MALA", "start": "theta*_lambda + Gaussian", "device": str(dev)}
        recs.append(outcome_record(
            "poincare.langevin.expected_loss", f"{name}-b{beta:g}-l{lam:g}", out, EL - inf_L, iv,
            f"E[L] over the second half of MALA chains (one mean per chain) minus the best L found (L-BFGS): at "
            f"most the Laplace value d/(2 beta) plus {REL_MARGIN:g} of it, one-sided t tests at level {ALPHA:g}, "
            "df = chains - 1; interval: the 1 - 2 alpha t interval of the mean",
            slack=laplace - (EL - inf_L), value=EL - inf_L, bound=laplace, backend="torch", provenance=prov,
            extra={"family": name, "beta": beta, "lam": lam, **test, "E_L": EL, "E_L_se": EL_se, "min_L": inf_L,
                   "predicted_refuted": bool(gap > laplace + test["margin"]),
                   "L_star": L_star, "laplace": laplace, "dim": fam.dim, "minimisers_found": int(argmin_L.shape[0]),
                   "dist_argmin_L": _distance_series(obs[..., 1], run.dt),
                   "dist_theta_star": _distance_series(obs[..., 2], run.dt),
                   "acceptance": run.acceptance, "kind": "expected_loss"}))
        half = obs[obs.shape[0] // 2:]
        f_ex = half[..., 3].mean(0) - F_min                             # per chain (B,)
        d2 = (half[..., 2] ** 2).mean(0)
        if root is None:
            out, tests = Outcome.NOT_TESTABLE, {}
        else:
            out, tests = minimises_outcome(f_ex.tolist(), d2.tolist(), laplace, tr_inv / beta)
        recs.append(outcome_record(
            "poincare.langevin.minimises_F", f"{name}-b{beta:g}-l{lam:g}-F", out, float(f_ex.mean()),
            tests["F"]["interval"] if tests else None,
            f"{MINIMISES_RULE}; F_min: L-BFGS on F; units: chains (second-half means)"
            + ("" if tests else "; not testable: the Hessian of F at theta* is not positive definite"),
            slack=laplace - float(f_ex.mean()), value=float(f_ex.mean()), bound=laplace, backend="torch",
            provenance={**prov, "start": "Laplace: theta*_lambda + N(0, H^-1 / beta)"},
            extra={"family": name, "beta": beta, "lam": lam, "kind": "minimises_F", "F_min": F_min,
                   "laplace_F": laplace, "tests": tests, "dist2": float(d2.mean()),
                   "dist2_interval": tests["dist2"]["interval"] if tests else None,
                   "laplace_dist2": tr_inv / beta, "hessian_eigenvalues": [float(eig.min()), float(eig.max())],
                   "min_F_seen": float(obs[..., 3].min()) - F_min, "dim": fam.dim,
                   "dist_argmin_F": _distance_series(obs[..., 2], run.dt), "df": chains - 1, "alpha": ALPHA}))
    return recs


def run_sde(store, plan: Any, console=None, executor: Any = None) -> None:
    """The Langevin runs of ``plan``, resumed."""
    campaign.run(store, sde_campaign(plan), sde_chunks(plan), console=console, description="Langevin SDE",
                 executor=executor)


def sde_chunks(plan: Any) -> list:
    """The Langevin chunks of ``plan``, quick or full (nothing run)."""
    seed, full = plan.seed, plan.full
    C = campaign.Chunk
    chunks = [C("rate-attn1", rate_records, ("attn1", 4.0, 0.3, seed, 8000 if full else 2000, 600)),
              C("expected-attnfull", expected_loss_records,
                ("attnfull", 0.1, (4.0, 16.0, 64.0, 256.0) if full else (4.0, 64.0, 256.0), seed,
                 2048 if full else 256, 4000 if full else 2000))]
    if full:
        chunks += [C("rate-gauss1", rate_records, ("gauss1", 2.0, 0.5, seed, 8000, 600)),
                   C("expected-lorafull", expected_loss_records, ("lorafull", 0.1, (4.0, 16.0, 64.0, 256.0), seed, 2048, 4000))]
    return chunks
