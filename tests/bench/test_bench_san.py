"""Benchmark: training throughput (tokens/s) of numerics.san.train against a plain reference loop
of the same model (the textbook PyTorch loop: default threads, AdamW, the same schedule and
batches), in the same session. Group "<model> x steps"; the reference loop is the baseline. Each
benchmark checks its answer (the two loops' loss traces agree to rounding), so it can fail;
``make test`` (--benchmark-disable) runs each once with fewer steps.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from numerics.san import Data, SANConfig, TrainConfig, build, flops_per_token, train
from numerics.san.train import lr_at

CFG = SANConfig(block="attention", n_layer=3, n_head=4, d_model=32, ctx=64, qk_norm=True)
DATA = Data(ctx=64, n_facts=16)


def reference_loop(cfg: SANConfig, tc: TrainConfig, data: Data) -> list[float]:
    """The plain loop: the same model, optimiser, schedule and batches; nothing else."""
    torch.manual_seed(tc.seed)
    model = build(cfg, tc.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, betas=(0.9, 0.95), weight_decay=tc.weight_decay)
    losses = []
    for step in range(tc.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(tc, step)
        x, y = (torch.from_numpy(a) for a in data.batch(tc.seed, step, tc.batch))
        loss = F.cross_entropy(model(x).reshape(-1, cfg.vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tc.clip)
        opt.step()
        losses.append(float(loss.detach()))
    return losses


def ours(cfg: SANConfig, tc: TrainConfig, data: Data) -> list[float]:
    res = train(cfg, tc, data)
    return [l for _, l in res.trace]


@pytest.mark.parametrize("which", ["train", "reference"])
def test_training_throughput(benchmark, bench_record, which):
    steps = 4 if benchmark.disabled else 20
    tc = TrainConfig(steps=steps, batch=16, lr=1e-2, warmup=2)
    benchmark.group = f"{CFG.name} d{CFG.d_model} ctx{CFG.ctx} x {steps} steps"
    fn = ours if which == "train" else reference_loop
    losses = benchmark.pedantic(fn, args=(CFG, tc, DATA), rounds=1 if benchmark.disabled else 3, iterations=1)
    other = reference_loop(CFG, tc, DATA) if which == "train" else ours(CFG, tc, DATA)
    assert len(losses) == len(other) == steps and all(math.isfinite(l) for l in losses)
    np.testing.assert_allclose(losses, other, rtol=2e-3)       # same model, same batches: same losses
    if not benchmark.disabled and benchmark.stats is not None:
        tokens = steps * tc.batch * CFG.ctx
        bench_record(group=benchmark.group, name=f"{which} (tokens)", seconds=benchmark.stats.stats.median,
                     min=benchmark.stats.stats.min, matrices=tokens, ops=tokens * flops_per_token(CFG),
                     baseline=(which == "reference"))
