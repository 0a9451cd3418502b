"""Minimisers of the regularised losses (multi-start L-BFGS in torch, float64)."""
from __future__ import annotations

import math

import torch


def minimise(fn, dim: int, seed: int, starts: int = 4, scale: float = 1.0, device="cpu") -> tuple[torch.Tensor, float]:
    """Best of ``starts`` L-BFGS runs of fn: (dim,) -> scalar. Returns (theta, value)."""
    gen = torch.Generator().manual_seed(seed)
    best, best_v = None, math.inf
    for _ in range(starts):
        th = (scale * torch.randn(dim, generator=gen, dtype=torch.float64)).to(device).requires_grad_(True)
        opt = torch.optim.LBFGS([th], max_iter=200, tolerance_grad=1e-12, tolerance_change=1e-15,
                                line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            v = fn(th)
            v.backward()
            return v

        opt.step(closure)
        v = float(fn(th.detach()))
        if v < best_v:
            best, best_v = th.detach().clone(), v
    return best, best_v
