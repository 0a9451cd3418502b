"""numerics.poincare.langevin: SDE statistics against quadrature, the decay rate 1/(beta C_P), determinism."""
import math

import numpy as np
import pytest
import torch

from numerics.poincare import bounds as PB
from numerics.poincare.langevin import (autocorrelation, decay_rate, predicted_rate, sample_grid_density, simulate,
                               simulate_loop)
from numerics.poincare.losses import family
from numerics.poincare.constants import gaussian_window, poincare_constant_1d


def test_ornstein_uhlenbeck_rate_is_lambda():
    # F = lam/2 theta^2: d theta = -lam theta dt + sqrt(2/beta) dB, corr(t) = exp(-lam t) = exp(-t/(beta C_P))
    beta, lam, B = 2.0, 0.5, 4000
    g = torch.Generator().manual_seed(5)
    theta0 = torch.randn(B, 1, generator=g, dtype=torch.float64) / math.sqrt(beta * lam)
    run = simulate(lambda th: 0.5 * lam * (th ** 2).sum(-1), theta0, beta, 0.02, 300, every=5, seed=6, mala=True)
    x = run.obs[..., 0] * math.sqrt(beta * lam)                      # unit variance under mu
    rates = [decay_rate(autocorrelation(c, 40, mean=torch.tensor(0.0), var=torch.tensor(1.0)), run.dt)
             for c in torch.chunk(x, 8, dim=1)]
    rate, se = np.mean(rates), np.std(rates, ddof=1) / math.sqrt(8)
    assert predicted_rate(1 / (beta * lam), beta) == pytest.approx(lam)
    assert abs(rate - lam) <= 4 * se + 0.02 * lam


def test_sde_statistics_match_quadrature_attention():
    fam, beta, lam, B = family("attn1"), 4.0, 0.3, 3000
    R = gaussian_window(beta, lam, PB.oscillation(fam))
    res = poincare_constant_1d(fam.F(lam), beta, -R, R)
    x, mass = res.grid[0], res.density
    theta0 = sample_grid_density(x, mass, B, seed=1)
    run = simulate(lambda th: fam.F_torch(th, lam), theta0, beta, 0.05, 200, every=10,
                   observe=lambda th: torch.cat([th ** 2, fam.loss(th)[:, None]], -1), seed=2, mala=True)
    chain_means = run.obs.mean(0)                                     # (B, 2): independent chains
    est, se = chain_means.mean(0).numpy(), (chain_means.std(0) / math.sqrt(B)).numpy()
    quad = np.array([np.sum(mass * x ** 2), np.sum(mass * fam.loss_np(x[:, None]))])
    assert run.acceptance > 0.9
    assert np.all(np.abs(est - quad) <= 4 * se), (est, quad, se)


def test_euler_is_deterministic_and_batched_matches_shapes():
    fam, lam = family("lorafull"), 0.1
    theta0 = torch.zeros(16, fam.dim, dtype=torch.float64)
    a = simulate(lambda th: fam.F_torch(th, lam), theta0, 8.0, 1e-3, 20, seed=3)
    b = simulate(lambda th: fam.F_torch(th, lam), theta0, 8.0, 1e-3, 20, seed=3)
    assert torch.equal(a.obs, b.obs) and a.obs.shape == (20, 16, fam.dim)
    loop = simulate_loop(lambda th: fam.F_torch(th, lam), theta0[:3], 8.0, 1e-3, 20, seed=3)
    assert loop.shape == (3, fam.dim) and torch.isfinite(loop).all()


def test_bad_input():
    with pytest.raises(ValueError, match="beta"):
        simulate(lambda th: th.sum(-1), torch.zeros(2, 1), -1.0, 0.1, 10)
    with pytest.raises(ValueError, match=r"\(B, dim\)"):
        simulate(lambda th: th.sum(-1), torch.zeros(2), 1.0, 0.1, 10)
    with pytest.raises(ValueError, match="T > max_lag"):
        autocorrelation(torch.zeros(5, 3), 10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_gpu_matches_cpu_statistics():
    fam, lam, beta = family("attnfull"), 0.1, 16.0
    theta0 = torch.zeros(2048, fam.dim, dtype=torch.float64)
    cpu = simulate(lambda th: fam.F_torch(th, lam), theta0, beta, 5e-3, 200, every=200, seed=1, mala=True)
    fam_gpu = family("attnfull").to("cuda")
    gpu = simulate(lambda th: fam_gpu.F_torch(th, lam), theta0.cuda(), beta, 5e-3, 200, every=200, seed=1, mala=True)
    m_cpu, m_gpu = cpu.theta.norm(dim=1), gpu.theta.cpu().norm(dim=1)
    se = math.sqrt(m_cpu.var() / 2048 + m_gpu.var() / 2048)
    assert abs(float(m_cpu.mean() - m_gpu.mean())) <= 5 * se
