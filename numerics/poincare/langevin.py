"""Langevin SDE d theta = -grad F dt + sqrt(2/beta) dB for thousands of chains at once (torch).

Time scaling: the generator is (1/beta) Delta - grad F . grad = (1/beta) L with L of docs/theory.md
section 4, so the spectral gap of the SDE is lambda_1 / beta = 1 / (beta C_P): the slowest
eigenfunction's autocorrelation decays like exp(-t / (beta C_P)), and chi^2 converges at rate
2 / (beta C_P).
(Check: F = lambda/2 theta^2 is Ornstein-Uhlenbeck with rate lambda = 1 / (beta * 1/(beta lambda)).)

Schemes: Euler-Maruyama (``mala=False``, bias O(step)) and MALA (Metropolis-adjusted, exact
invariant measure mu_beta, used where statistics are compared with quadrature).
All chains advance together: theta has shape (B, dim), batch leading; GPU when present.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import torch

from theory.errors import InvalidInput


@dataclass
class LangevinRun:
    """Observables recorded every ``every`` steps: obs (n_records, B, k); dt between records."""

    obs: torch.Tensor
    dt: float
    theta: torch.Tensor          # final state (B, dim)
    acceptance: Optional[float]  # MALA acceptance rate (None for Euler)


def simulate(F: Callable[[torch.Tensor], torch.Tensor], theta0: torch.Tensor, beta: float, step: float,
             n_steps: int, every: int = 1, observe: Optional[Callable] = None, seed: int = 0,
             mala: bool = False) -> LangevinRun:
    """Run B chains. F: (B, dim) -> (B,) differentiable in torch. observe: (B, dim) -> (B, k)."""
    if not (beta > 0 and step > 0 and n_steps > 0 and every > 0):
        raise InvalidInput(f"simulate: need beta, step, n_steps, every > 0; got {beta}, {step}, {n_steps}, {every}")
    if theta0.ndim != 2:
        raise InvalidInput(f"simulate: theta0 must be (B, dim), got shape {tuple(theta0.shape)}")
    gen = torch.Generator(device=theta0.device).manual_seed(seed)
    observe = observe or (lambda th: th)
    noise_scale = math.sqrt(2 * step / beta)

    def f_and_grad(th):
        with torch.enable_grad():
            th = th.detach().requires_grad_(True)
            f = F(th)
            (g,) = torch.autograd.grad(f.sum(), th)
        return f.detach(), g

    # small CPU batches: intra-op threads cost more than they save (measured 20x on 2 shared cores)
    threads = torch.get_num_threads()
    if theta0.device.type == "cpu" and theta0.numel() < 200_000:
        torch.set_num_threads(1)
    try:
        return _run(f_and_grad, theta0, beta, step, n_steps, every, observe, gen, noise_scale, mala)
    finally:
        torch.set_num_threads(threads)


def _run(f_and_grad, theta0, beta, step, n_steps, every, observe, gen, noise_scale, mala) -> LangevinRun:
    theta = theta0.clone()
    f, g = f_and_grad(theta)
    records, accepted, proposed = [], 0, 0
    for k in range(n_steps):
        xi = torch.randn(theta.shape, generator=gen, dtype=theta.dtype, device=theta.device)
        prop = theta - step * g + noise_scale * xi
        if mala:
            f_p, g_p = f_and_grad(prop)
            # log q(x | y) = -beta |x - y + step grad F(y)|^2 / (4 step)
            fwd = ((prop - theta + step * g) ** 2).sum(-1)
            bwd = ((theta - prop + step * g_p) ** 2).sum(-1)
            log_a = -beta * (f_p - f) - beta * (bwd - fwd) / (4 * step)
            u = torch.rand(theta.shape[0], generator=gen, dtype=theta.dtype, device=theta.device)
            acc = torch.log(u) < log_a
            theta = torch.where(acc[:, None], prop, theta)
            f = torch.where(acc, f_p, f)
            g = torch.where(acc[:, None], g_p, g)
            accepted += int(acc.sum())
            proposed += acc.numel()
        else:
            theta = prop
            f, g = f_and_grad(theta)
        if (k + 1) % every == 0:
            records.append(observe(theta).detach())
    obs = torch.stack(records) if records else torch.empty(0)
    return LangevinRun(obs, step * every, theta, accepted / proposed if mala else None)


def simulate_loop(F, theta0, beta, step, n_steps, seed=0) -> torch.Tensor:
    """Baseline: the same Euler scheme one chain at a time (for the benchmark). Returns final (B, dim)."""
    out = []
    for b in range(theta0.shape[0]):
        out.append(simulate(F, theta0[b:b + 1], beta, step, n_steps, every=n_steps, seed=seed + b).theta)
    return torch.cat(out)


def autocorrelation(obs: torch.Tensor, max_lag: int, mean: Optional[torch.Tensor] = None,
                    var: Optional[torch.Tensor] = None) -> np.ndarray:
    """Stationary autocorrelation of obs (T, B) pooled over chains, lags 0..max_lag.

    ``mean``/``var`` may be the exact stationary moments (e.g. from quadrature); else pooled estimates.
    Returns rho (max_lag + 1,)."""
    if obs.ndim != 2 or max_lag >= obs.shape[0]:
        raise InvalidInput(f"autocorrelation: obs must be (T, B) with T > max_lag; got {tuple(obs.shape)}, {max_lag}")
    x = obs - (obs.mean() if mean is None else mean)
    v = (x ** 2).mean() if var is None else var
    T = x.shape[0]
    rho = [float((x[: T - k] * x[k:]).mean() / v) for k in range(max_lag + 1)]
    return np.array(rho)


def decay_rate(rho: np.ndarray, dt: float, floor: float = 0.05) -> float:
    """Least-squares slope of -log rho(t) over lags where rho > floor (through the origin)."""
    k = np.nonzero(rho > floor)[0]
    k = k[k == np.arange(len(k))]           # the initial run above the floor
    if len(k) < 3:
        raise InvalidInput("decay_rate: autocorrelation falls below the floor too fast; use a smaller dt")
    t = k * dt
    y = -np.log(rho[k])
    return float((t @ y) / (t @ t))


def predicted_rate(C_P: float, beta: float) -> float:
    """Spectral gap of the SDE generator (1/beta) L: 1 / (beta C_P)."""
    return 1.0 / (beta * C_P)


def sample_grid_density(grid: np.ndarray, mass: np.ndarray, B: int, seed: int = 0) -> torch.Tensor:
    """Exact-start chains: B draws from the discretised 1-D density (cell centres + uniform jitter)."""
    rng = np.random.default_rng(seed)
    h = grid[1] - grid[0]
    idx = rng.choice(len(grid), size=B, p=mass / mass.sum())
    return torch.as_tensor(grid[idx] + h * (rng.random(B) - 0.5))[:, None]
