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


# Ornstein-Uhlenbeck, F = lam/2 |theta|^2: mu = N(0, I/(beta lam)), d theta = -lam theta dt + sqrt(2/beta) dB.
# Euler-Maruyama with step h is the AR(1) chain x' = (1 - h lam) x + sqrt(2h/beta) xi, whose answers are exact:
#   stationary variance   1 / (beta lam (1 - h lam / 2))
#   variance after k steps from 0:  (2h/beta) (1 - a^(2k)) / (1 - a^2),  a = 1 - h lam
#   autocorrelation at lag k steps: a^k, i.e. rate -log(a)/h = lam (1 + h lam/2 + O(h^2)) per unit time.
# MALA's invariant law is mu itself: variance 1/(beta lam) at any step size.
# Monte Carlo errors are computed from the run: a sample variance of N Gaussian draws has relative
# standard error sqrt(2/(N-1)); rates use the spread over independent chain groups.
Z = 4.0   # assertions allow Z standard errors (a false alarm about 1 in 16000 per assertion)


def _ou(lam):
    return lambda th: 0.5 * lam * (th ** 2).sum(-1)


def _euler_variance(beta, lam, h, k=None):
    a = 1 - h * lam
    return (2 * h / beta) * (1 - (a ** (2 * k) if k is not None else 0.0)) / (1 - a * a)


def test_decay_rate_recovers_an_exact_exponential():
    rho = np.exp(-0.7 * 0.05 * np.arange(60))
    assert decay_rate(rho, 0.05) == pytest.approx(0.7, rel=1e-12)
    assert predicted_rate(1 / (2.0 * 0.5), 2.0) == pytest.approx(0.5)   # OU: 1/(beta C_P) = lambda


def test_ornstein_uhlenbeck_rate_is_lambda():
    """Euler chains started from their exact stationary law: the linear observable's autocorrelation
    decays at -log(1 - h lam)/h, and that is lam up to the stated O(h) bias."""
    beta, lam, h, B = 2.0, 0.5, 0.02, 4000
    var = _euler_variance(beta, lam, h)
    g = torch.Generator().manual_seed(5)
    theta0 = torch.randn(B, 1, generator=g, dtype=torch.float64) * math.sqrt(var)
    run = simulate(_ou(lam), theta0, beta, h, 300, every=5, seed=6)
    x = run.obs[..., 0] / math.sqrt(var)                               # unit variance, exactly
    rates = [decay_rate(autocorrelation(c, 40, mean=torch.tensor(0.0), var=torch.tensor(1.0)), run.dt)
             for c in torch.chunk(x, 8, dim=1)]
    rate, se = np.mean(rates), np.std(rates, ddof=1) / math.sqrt(8)
    exact = -math.log(1 - h * lam) / h
    assert abs(rate - exact) <= Z * se, (rate, exact, se)
    assert Z * se < 0.2 * lam                                          # so it resolves a 20% error in the rate
    assert abs(exact - lam) <= h * lam * lam                           # the time-step bias, as stated


def test_euler_stationary_variance_is_the_ar1_answer():
    beta, lam, h, B = 4.0, 1.0, 0.2, 20000                             # h lam = 0.2: bias 11%, visible
    run = simulate(_ou(lam), torch.zeros(B, 1, dtype=torch.float64), beta, h, 150, every=150, seed=7)
    v, exact = float(run.theta.var()), _euler_variance(beta, lam, h)   # 150 steps: a^300 ~ 1e-29
    assert abs(v - exact) <= Z * exact * math.sqrt(2 / (B - 1)), (v, exact)
    assert abs(v - 1 / (beta * lam)) > Z * exact * math.sqrt(2 / (B - 1))   # and Euler is biased


def test_mala_samples_the_gibbs_measure_exactly():
    """At the same large step MALA's Metropolis correction removes Euler's bias: Var = 1/(beta lam)."""
    beta, lam, h, B = 4.0, 1.0, 0.2, 8000
    run = simulate(_ou(lam), torch.zeros(B, 2, dtype=torch.float64), beta, h, 100, every=100, seed=8, mala=True)
    v, exact = float(run.theta.var()), 1 / (beta * lam)
    assert abs(v - exact) <= Z * exact * math.sqrt(2 / (2 * B - 1)), (v, exact)
    assert 0.5 < run.acceptance < 1.0


def test_batched_and_looped_chains_follow_the_euler_transient():
    """From 0, after k Euler steps each coordinate is N(0, (2h/beta)(1 - a^(2k))/(1 - a^2)); the batched
    run and the per-chain loop (its own seed per chain) both reproduce it; same seed, same path."""
    beta, lam, h, k, dim = 2.0, 1.0, 0.05, 20, 4
    exact = _euler_variance(beta, lam, h, k)
    batched = simulate(_ou(lam), torch.zeros(4000, dim, dtype=torch.float64), beta, h, k, every=k, seed=3).theta
    looped = simulate_loop(_ou(lam), torch.zeros(100, dim, dtype=torch.float64), beta, h, k, seed=3)
    for final in (batched, looped):                                    # variance across chains, per coordinate
        B = final.shape[0]
        v = float(final.var(dim=0).mean())
        assert abs(v - exact) <= Z * exact * math.sqrt(2 / (B - 1) / dim), (v, exact)
    again = simulate(_ou(lam), torch.zeros(4000, dim, dtype=torch.float64), beta, h, k, every=k, seed=3).theta
    other = simulate(_ou(lam), torch.zeros(4000, dim, dtype=torch.float64), beta, h, k, every=k, seed=4).theta
    assert torch.equal(batched, again) and not torch.equal(batched, other)


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
