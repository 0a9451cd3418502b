"""Certified constants of the loss families (numerics/poincare/losses.py): loss ranges over all of
parameter space and the attention family's Hessian lower bound, for Holley-Stroock and Bakry-Emery.

Method: an adaptive grid whose step is set by a certified local Lipschitz bound (so the grid misses
the extremes by at most ``margin``), plus certified decay bounds for the tails beyond +-S. The
derivative identities used for the attention family are checked symbolically in
theory.poincare.softmax_readout_derivatives. "Certified" here means a proof by the Lipschitz-grid
argument whose float evaluations are covered by the stated allowance ``_ROUND`` (values are O(1));
it is not interval arithmetic.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from numerics.poincare.losses import AttentionScalar, LoRADirectional
from theory.errors import InvalidInput

# -- certified 1-D ranges: adaptive grid with local Lipschitz margins, decay bounds in the tails --
_ROUND = 1e-12  # absolute allowance for float64 rounding of the grid evaluations (values are O(1))


def certified_range_1d(fun: Callable[[np.ndarray], np.ndarray], local_lip: Callable[[float], float],
                       S: float, tail_variation: float, margin: float = 1e-3) -> tuple[float, float]:
    """[inf, sup] of a function of one real variable over all of R, certified.

    ``local_lip(r)`` bounds |fun'(t)| for all |t| >= r (non-increasing in r). Inside [-S, S] the grid
    steps by 2 margin / local_lip(|t|) outwards from 0, so a cell misses the extremes by at most
    ``margin``; outside, |fun(t) - fun(+-S)| <= tail_variation.
    """
    pts, r = [0.0], 0.0
    while r < S:
        r = min(S, r + 2 * margin / max(local_lip(r), 1e-300))
        pts.append(r)
        if len(pts) > 400_000:
            raise InvalidInput("certified_range_1d: grid too large; increase margin")
    r = np.array(pts)
    t = np.concatenate([-r[:0:-1], r])
    lo, hi = math.inf, -math.inf
    for start in range(0, t.size, 100_000):
        v = fun(t[start:start + 100_000])
        lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
    edges = fun(np.array([-S, S]))
    lo = min(lo - margin, float(edges.min()) - tail_variation) - _ROUND
    hi = max(hi + margin, float(edges.max()) + tail_variation) + _ROUND
    return lo, hi


def _attn1_pieces(fam: AttentionScalar, s: np.ndarray):
    """g, g', g'' (each (N, n)) of the softmax readouts at scales s (N,)."""
    z = s[:, None, None] * fam.c                              # (N, n, T)
    a = np.exp(z - z.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    cb = (a * fam.c).sum(-1, keepdims=True)
    ub = (a * fam.u).sum(-1, keepdims=True)
    g1 = (a * (fam.c - cb) * (fam.u - ub)).sum(-1)
    g2 = (a * (fam.c - cb) ** 2 * (fam.u - ub)).sum(-1)
    return ub[..., 0], g1, g2


def attn1_certified(fam: AttentionScalar, margin: float = 1e-3) -> dict:
    """Certified loss range and Hessian lower bound m (L'' >= -m on R) of the dim-1 attention loss.

    With a the softmax weights: g1 = Cov_a(c, u), g2 = E_a[(c-cbar)^2 (u-ubar)],
    g3 = E_a[(c-cbar)^3 (u-ubar)] - 3 Var_a(c) Cov_a(c, u) (the first three derivatives of g), and
    Var_a(c) <= V(s) = min(osc(c)^2/4, osc(c)^2 (T-1) e^{-|s| gap}) since 1 - max weight <=
    (T-1) e^{-|s| gap}; so |g1| <= sqrt(V) osc(u)/2, |g2| <= osc(u) V, |g3| <= osc(u)(osc(c) V + 1.5 V^1.5).
    """
    if fam.dim != 1:
        raise InvalidInput("attn1_certified: needs the dim-1 (value fixed) attention family")
    osc_c, osc_u = np.ptp(fam.c, axis=1), np.ptp(fam.u, axis=1)
    R = np.array([float(fam._residual_range(i)[1]) for i in range(fam.n)])
    srt = np.sort(fam.c, axis=1)
    gap = np.minimum(srt[:, -1] - srt[:, -2], srt[:, 1] - srt[:, 0])
    if np.any(gap <= 0):
        raise InvalidInput("attention data: tied extreme scores, the loss does not saturate (gap 0)")
    v0, T = abs(fam.v0), fam.T

    def V(r):
        return np.minimum(osc_c ** 2 / 4, osc_c ** 2 * (T - 1) * np.exp(-r * gap))

    def lip1(r):
        return float(np.mean(v0 * R * np.sqrt(V(r)) * osc_u / 2))

    def lip3(r):
        v = V(r)
        g1, g2, g3 = np.sqrt(v) * osc_u / 2, osc_u * v, osc_u * (osc_c * v + 1.5 * v ** 1.5)
        return float(np.mean(3 * v0 ** 2 * g1 * g2 + v0 * R * g3))

    S = float(2 / gap.min() * math.log(1e3 * (1 + lip1(0)) * (T - 1) / margin / gap.min()))
    tail_L = float(np.mean(v0 * R * osc_u / 2 * osc_c * math.sqrt(T - 1) * (2 / gap) * np.exp(-S * gap / 2)))
    tail_H = float(np.mean(v0 * R * osc_u * V(S)))

    def L(s):
        g, _, _ = _attn1_pieces(fam, s)
        return 0.5 * np.mean((fam.v0 * g - fam.y) ** 2, axis=-1)

    def L2(s):
        g, g1, g2 = _attn1_pieces(fam, s)
        return np.mean(fam.v0 ** 2 * g1 ** 2 + (fam.v0 * g - fam.y) * fam.v0 * g2, axis=-1)

    crude_m = float(np.mean(v0 * R * osc_u * osc_c ** 2 / 4))
    crude_range = fam.loss_range()
    try:      # a near-tie of the extreme scores (tiny gap) makes the grid too long: fall back to crude
        lo, hi = certified_range_1d(L, lip1, S, tail_L, margin)
        lo, hi, how = max(lo, crude_range[0]), min(hi, crude_range[1]), "grid"
    except ValueError:
        (lo, hi), how = crude_range, "crude"
    try:
        h_lo, _ = certified_range_1d(L2, lip3, S, 0.0, 10 * margin)
        m = min(crude_m, max(0.0, -min(h_lo, -tail_H - _ROUND)))
    except ValueError:
        m, how = crude_m, how + "/crude"
    return {"loss_range": (max(lo, 0.0), hi), "m": m, "crude_m": crude_m, "S": S, "M1": lip1(0), "method": how}


def lora2_certified(fam: LoRADirectional, margin: float = 1e-3) -> dict:
    """Certified range of L(p) over p in R for the directional LoRA family (z(p) = z0 + p dz).

    |dL/dp| <= 1/n sum_i R_i sum_k |a_k dz_ik| sech^2(z_ik(p)), R_i = |y_i| + ||a||_1, and
    sech^2 z <= min(1, 4 e^{-2|z|}) with |z_ik(p)| >= |p dz_ik| - |z0_ik|; the tail beyond S varies
    by at most 1/n sum_i R_i sum_k 2 |a_k| e^{-2 (S |dz_ik| - |z0_ik|)}.
    """
    A = np.abs(fam.a).sum()
    R = np.abs(fam.y) + A
    adz, az0, aa = np.abs(fam.dz), np.abs(fam.z0), np.abs(fam.a)
    live = adz > 0

    def lip(r):
        sech2 = np.minimum(1.0, 4 * np.exp(-2 * np.maximum(r * adz - az0, 0)))
        return float(np.mean(R * (aa * adz * sech2).sum(-1)))

    S = float(np.max((az0[live] + 0.5 * math.log(1e3 * 2 * A * R.max() / margin)) / adz[live]))
    tail = float(np.mean(R * np.where(live, 2 * aa * np.exp(-2 * np.maximum(S * adz - az0, 0)), 0).sum(-1)))

    def L(p):
        with torch.no_grad():
            return fam.loss_p(torch.as_tensor(p)).numpy()

    lo, hi = certified_range_1d(L, lip, S, tail, margin)
    return {"loss_range": (max(lo, 0.0), hi), "S": S, "M1": lip(0)}
