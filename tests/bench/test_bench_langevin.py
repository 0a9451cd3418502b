"""Benchmark: Langevin chains advanced together (numerics.poincare.langevin.simulate) against a per-chain
loop of the same Euler scheme (simulate_loop), in the same session, on the 12-parameter attention
loss. Group "B chains x steps"; the loop is the baseline. Each benchmark checks its answer (finite
states, and the batched chains' spread matches the looped chains' within Monte Carlo error), so it
can fail; ``make test`` (--benchmark-disable) runs each once on a smaller batch.
"""
from __future__ import annotations

import math

import pytest
import torch

from numerics.poincare.langevin import simulate, simulate_loop
from numerics.poincare.losses import family

B, STEPS, SMALL = 256, 50, 16
BETA, LAM, STEP = 16.0, 0.1, 5e-3


def _case(benchmark):
    chains = B if not benchmark.disabled else B // SMALL
    benchmark.group = f"{chains} chains x {STEPS} steps (attnfull, dim 12)"
    fam = family("attnfull")
    theta0 = torch.zeros(chains, fam.dim, dtype=torch.float64)
    return fam, theta0, chains


def _record(benchmark, bench_record, name, chains, baseline):
    if benchmark.disabled or benchmark.stats is None:
        return
    bench_record(group=benchmark.group, name=name, seconds=benchmark.stats.stats.median,
                 min=benchmark.stats.stats.min, matrices=chains, ops=chains * STEPS, baseline=baseline)


def _check(final, fam, chains):
    assert final.shape == (chains, fam.dim) and torch.isfinite(final).all()
    # after t = STEPS * STEP from 0 each coordinate has spread ~ sqrt(2 t / beta) (drift is O(t) smaller)
    spread = float(final.std())
    expected = math.sqrt(2 * STEPS * STEP / BETA)
    assert 0.5 * expected < spread < 2.0 * expected


@pytest.mark.parametrize("which", ["batched", "loop"])
def test_langevin_batched_vs_loop(benchmark, bench_record, which):
    fam, theta0, chains = _case(benchmark)
    F = lambda th: fam.F_torch(th, LAM)
    if which == "batched":
        final = benchmark(lambda: simulate(F, theta0, BETA, STEP, STEPS, every=STEPS, seed=1).theta)
    else:
        final = benchmark.pedantic(simulate_loop, args=(F, theta0, BETA, STEP, STEPS), kwargs={"seed": 1},
                                   rounds=1 if benchmark.disabled else 3, iterations=1)
    _check(final, fam, chains)
    _record(benchmark, bench_record, which, chains, baseline=(which == "loop"))
