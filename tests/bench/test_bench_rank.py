"""Cost of the batched rank paths against a per-seed loop in the same session (pytest-benchmark).

`make bench` measures; `make test` runs each once (--benchmark-disable) and checks agreement.
"""
import numpy as np
import pytest
import torch

from numerics.device import single_thread
from numerics.rank import linear as R
from numerics.rank import gd as G

SEEDS = list(range(32))
K = R.covariance(12, "spread", 0)
M = R.teacher(12, 4, "geometric", K, 0)
KW = dict(init_scale=1e-3, steps=300, lr=0.1)


@pytest.mark.benchmark(group="rank-gd")
def test_bench_gd_batched(benchmark):
    run = benchmark(G.gd_factorised, M, K, 6, SEEDS, **KW)
    assert run["risk"].shape == (32, len(run["steps"]))


@pytest.mark.benchmark(group="rank-gd")
def test_bench_gd_per_seed_loop(benchmark):
    run = benchmark(G.gd_factorised_loop, M, K, 6, SEEDS[:8], **KW)   # baseline: 8 seeds, scale x4
    batched = G.gd_factorised(M, K, 6, SEEDS[:8], **KW)
    np.testing.assert_allclose(run["risk"], batched["risk"], rtol=1e-9, atol=1e-15)


STACK = np.random.default_rng(0).standard_normal((256, 16, 16))


def _svd_batched():
    with single_thread():
        return torch.linalg.svdvals(torch.as_tensor(STACK)).numpy()


def _svd_loop():
    return np.stack([np.linalg.svd(a, compute_uv=False) for a in STACK])


@pytest.mark.benchmark(group="rank-svd")
def test_bench_svd_batched(benchmark):
    s = benchmark(_svd_batched)
    np.testing.assert_allclose(s, _svd_loop(), rtol=1e-10, atol=1e-12)


@pytest.mark.benchmark(group="rank-svd")
def test_bench_svd_per_matrix_loop(benchmark):
    assert benchmark(_svd_loop).shape == (256, 16)


def _energy_rank_by_definition(matrix: np.ndarray, tau: float) -> int:
    """min{k : sum_{i<=k} sigma_i^2 >= tau sum_i sigma_i^2}, from numpy's SVD of one matrix, by a
    plain loop over k (independent of numerics.rank)."""
    energies = [float(x) ** 2 for x in np.linalg.svd(matrix, compute_uv=False)]
    total = sum(energies)
    for k in range(1, len(energies) + 1):
        if sum(energies[:k]) >= tau * total:
            return k
    return len(energies)


@pytest.mark.benchmark(group="rank-estimators")
def test_bench_energy_rank_batched(benchmark):
    s = _svd_loop()
    k = benchmark(R.energy_rank, s, 0.9)
    want = [_energy_rank_by_definition(a, 0.9) for a in STACK]
    assert k.shape == (len(STACK),) and k.tolist() == want
    assert len(set(want)) > 1            # the stack's energy ranks differ: a constant answer would fail
