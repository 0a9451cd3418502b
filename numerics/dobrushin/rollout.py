"""Attention rollout (Abnar & Zuidema 2020) and the tightness of its Dobrushin bounds.

    A_l    head-fused attention of layer l (mean, or max/min followed by row renormalisation)
    Ahat_l = r I + (1 - r) A_l          (r = residual, 0.5 in the paper: (I + A)/2)
    R_l    = Ahat_l R_{l-1},  R_0 = I   (later layers multiply on the left)

Bounds checked per layer (THEORY.md §1): delta(R_l) <= prod delta(Ahat) <= prod (1 + delta(A))/2.

Exactness convention: the rational objects are the float64 fused matrices A_l (rows renormalised
exactly) with the residual applied exactly, and their exact products. With ``discard_ratio > 0``
the float Ahat_l (after discarding and renormalising) is taken as the rational matrix instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from theory.verdicts import Verdict
from numerics import kernels as K
from numerics.dobrushin.core import d2_decide, factor_check, float_error
from numerics.stochastic import UNIT_ROUNDOFF, ExactMatrix, as_stochastic

FUSIONS = ("mean", "max", "min")
EXACT_BUDGET = 400_000  # Fraction multiply-adds allowed for an exact rollout prefix (per chain)


def _renormalise(x: np.ndarray, what: str) -> np.ndarray:
    s = x.sum(axis=-1, keepdims=True)  # keepdims: the popular implementation broadcast the wrong way
    if np.any(s <= 0):
        idx = tuple(int(v) for v in np.argwhere(s[..., 0] <= 0)[0])
        raise ValueError(f"{what}: row {idx[-1]} is all zero after fusion/discarding (index {idx}); "
                         "it cannot be renormalised")
    return x / s


def fuse_heads(A: np.ndarray, head_fusion: str) -> np.ndarray:
    """(..., H, n, n) -> (..., n, n)."""
    if head_fusion == "mean":
        return A.mean(axis=-3)
    if head_fusion == "max":
        return _renormalise(A.max(axis=-3), "max head fusion")
    if head_fusion == "min":
        return _renormalise(A.min(axis=-3), "min head fusion")
    raise ValueError(f"head_fusion must be one of {FUSIONS}, got {head_fusion!r}")


def residual_factors(A: np.ndarray, residual: float, discard_ratio: float) -> np.ndarray:
    """Ahat_l = r I + (1-r) A_l, after discarding the smallest ``discard_ratio`` share of each
    matrix's off-diagonal weights (the common rollout variant), rows renormalised (keepdims)."""
    if not 0.0 <= residual <= 1.0:
        raise ValueError(f"residual must lie in [0, 1], got {residual}")
    if not 0.0 <= discard_ratio < 1.0:
        raise ValueError(f"discard_ratio must lie in [0, 1), got {discard_ratio}")
    n = A.shape[-1]
    eye = np.eye(n)
    if discard_ratio > 0:
        A = A.copy()
        flat = A.reshape(-1, n * n)
        off = ~eye.astype(bool).reshape(-1)
        k = int(discard_ratio * off.sum())
        if k:
            vals = np.where(off, flat, np.inf)
            idx = np.argpartition(vals, k - 1, axis=-1)[:, :k]      # the k smallest off-diagonal
            np.put_along_axis(flat, idx, 0.0, axis=-1)
        Ahat = residual * eye + (1 - residual) * flat.reshape(A.shape)
        return _renormalise(Ahat, "rollout factor")
    return residual * eye + (1 - residual) * A


def _prepare(A: Any, head_fusion: Optional[str], fused: Optional[bool]) -> tuple[np.ndarray, tuple, Any]:
    """Validate first (complex, boolean, masked, non-stochastic input is refused, naming the row),
    then widen to float64 and fuse heads. -> (fused float64 stack (..., L, n, n), lead shape, like)."""
    if head_fusion is not None and head_fusion not in FUSIONS:
        raise ValueError(f"head_fusion must be one of {FUSIONS}, got {head_fusion!r}")
    batch = as_stochastic(A, "attention", square=True)
    A = batch.data.reshape(batch.lead + batch.data.shape[-2:]).astype(np.float64)
    if fused is None:
        fused = A.ndim == 3
    need = 3 if fused else 4
    if A.ndim < need:
        raise ValueError(f"attention stack must be (..., layers, {'' if fused else 'heads, '}n, n); "
                         f"got shape {A.shape}")
    if fused and head_fusion is not None:
        raise ValueError(f"head_fusion={head_fusion!r} cannot apply: the input {A.shape} is taken as already "
                         "fused (..., layers, n, n); pass (..., layers, heads, n, n) with fused=False")
    if not fused:
        A = fuse_heads(A, head_fusion or "mean")
    return A, A.shape[:-3], batch.like


def rollout(A: Any, residual: float = 0.5, head_fusion: Optional[str] = None, discard_ratio: float = 0.0,
            fused: Optional[bool] = None) -> Any:
    """All partial rollout products R_1..R_L, float64.

    ``A``: (..., layers, heads, n, n), or (..., layers, n, n) already fused (``fused=True``; a 3-D
    input is taken as fused). ``head_fusion``: "mean" (the default), "max" or "min" for unfused
    input; giving it for fused input is an error. Returns (..., layers, n, n), same kind as the input."""
    Af, lead, like = _prepare(A, head_fusion, fused)
    Ahat = residual_factors(Af, residual, discard_ratio)
    R = np.empty_like(Ahat)
    cur = np.broadcast_to(np.eye(Af.shape[-1]), lead + Af.shape[-2:])
    for l in range(Af.shape[-3]):
        cur = Ahat[..., l, :, :] @ cur
        R[..., l, :, :] = cur
    if like is not None:
        import torch
        return torch.from_numpy(R).to(like.device)
    return R


@dataclass
class RolloutTightness:
    """Per layer l = 1..L (arrays (..., L)); ratios are NaN where undecidable in float64."""

    delta_A: np.ndarray            # delta(A_l)
    delta_Ahat: np.ndarray         # delta(Ahat_l)
    delta_R: np.ndarray            # delta(R_l)
    prod_delta_Ahat: np.ndarray    # prod_{k<=l} delta(Ahat_k)
    prod_factor_bound: np.ndarray  # prod_{k<=l} (1 + delta(A_k))/2
    ratio_R: np.ndarray            # delta(R_l) / prod delta(Ahat)       (submultiplicativity)
    ratio_factor: np.ndarray       # prod delta(Ahat) / prod (1+delta(A))/2 (factor bound)
    d1: np.ndarray                 # Verdict of Theorem D1 on A_l (object array)
    d2: np.ndarray                 # Verdict of Theorem D2 for (Ahat_l, R_{l-1}) (object array)
    chain: np.ndarray              # Verdict: delta(R_l) = prod delta(Ahat) through layer l
    error_R: np.ndarray            # rigorous bound on |float delta(R_l) - exact delta(R_l)|


def _exact_factors(A: np.ndarray, Ahat: np.ndarray, residual: float, discard_ratio: float) -> list:
    out = []
    r = Fraction(residual)
    for l in range(A.shape[0]):
        if discard_ratio > 0:
            out.append(ExactMatrix.from_floats(Ahat[l]))
            continue
        E = ExactMatrix.from_floats(A[l])
        p, q = r.numerator, r.denominator
        num = [[(q - p) * a + (p * s if i == k else 0) for k, a in enumerate(row)]
               for i, (row, s) in enumerate(zip(E.num, E.rowsum))]
        out.append(ExactMatrix(num, [q * s for s in E.rowsum]))
    return out


def _exact_product(F: ExactMatrix, R: ExactMatrix) -> ExactMatrix:
    Rr = R.rows()
    rows = []
    for i in range(F.n):
        fi = [Fraction(v, F.rowsum[i]) for v in F.num[i]]
        rows.append([sum((fi[j] * Rr[j][k] for j in range(F.m) if fi[j]), Fraction(0)) for k in range(R.m)])
    return ExactMatrix.from_rationals(rows)


def _chain_one(A: np.ndarray, residual: float, discard_ratio: float, exact_budget: int) -> dict:
    """All per-layer quantities for one stack A (L, n, n) of fused attention."""
    L, n, _ = A.shape
    Ahat = residual_factors(A, residual, discard_ratio)
    dA = K.dobrushin_batch(A)
    dH = K.dobrushin_batch(np.ascontiguousarray(Ahat))
    d1 = np.full(L, Verdict.NOT_APPLICABLE, dtype=object)
    if residual == 0.5 and discard_ratio == 0.0 and n >= 2:
        fc = factor_check(A)
        d1[:] = [Verdict.TIGHT if e else Verdict.HOLDS for e in fc.equality]
    dev = np.abs(A.sum(-1) - 1).max() + (n + 2) * UNIT_ROUNDOFF
    ent_err = dev + 4 * UNIT_ROUNDOFF            # entry error of float Ahat vs the exact factor
    gamma = (n + 2) * UNIT_ROUNDOFF * 1.01        # one float product of stochastic matrices
    R = np.eye(n)
    Rs = np.empty((L, n, n))
    dR = np.empty(L)
    errR = np.empty(L)
    d2 = np.full(L, Verdict.NOT_APPLICABLE, dtype=object)
    chain = np.full(L, Verdict.NOT_APPLICABLE, dtype=object)
    exact_cache: dict = {"factors": None, "R": [], "spent": 0}

    def exact_prefix(l: int) -> Optional[ExactMatrix]:
        """Exact R_l (l >= 1), within the budget."""
        if exact_cache["factors"] is None:
            exact_cache["factors"] = _exact_factors(A, Ahat, residual, discard_ratio)
        F, Rx = exact_cache["factors"], exact_cache["R"]
        while len(Rx) < l:
            k = len(Rx)
            if k == 0:
                Rx.append(F[0])
                continue
            exact_cache["spent"] += n ** 3
            if exact_cache["spent"] > exact_budget:
                return None
            Rx.append(_exact_product(F[k], Rx[k - 1]))
        return Rx[l - 1]

    chain_ok = True
    for l in range(L):
        R_prev = R
        R = Ahat[l] @ R
        Rs[l] = R
        dR[l] = K.dobrushin_batch(R[None])[0]
        err_entry = (l + 1) * (ent_err + gamma)
        errR[l] = n * err_entry + 4 * (n + 4) * UNIT_ROUNDOFF
        if n < 2:
            continue
        if l == 0:
            d2[l] = Verdict.TIGHT  # R_1 = Ahat_1 R_0 with R_0 = I, delta(I) = 1
        else:
            eps_p = float(float_error(np.array([ent_err]), n)[0])
            eps_q = float(errR[l - 1])

            def exact_pq(l: int = l) -> Optional[tuple]:
                Rq = exact_prefix(l)
                if Rq is None:
                    return None
                return exact_cache["factors"][l], Rq
            res = d2_decide(np.ascontiguousarray(Ahat[l]), np.ascontiguousarray(R_prev), eps_p, eps_q, exact_pq,
                            best_p=dH[l], best_q=dR[l - 1])   # deltas already computed above
            d2[l] = Verdict.UNDECIDED if res is None else (Verdict.TIGHT if res else Verdict.HOLDS)
        if d2[l] == Verdict.HOLDS:
            chain_ok = False
        chain[l] = (Verdict.HOLDS if not chain_ok else
                    Verdict.UNDECIDED if any(v == Verdict.UNDECIDED for v in d2[:l + 1]) else Verdict.TIGHT)
    return dict(dA=dA, dH=dH, dR=dR, errR=errR, d1=d1, d2=d2, chain=chain)


def rollout_tightness(A: Any, residual: float = 0.5, head_fusion: Optional[str] = None,
                      discard_ratio: float = 0.0, fused: Optional[bool] = None,
                      exact_budget: int = EXACT_BUDGET) -> RolloutTightness:
    """Per-layer tightness of delta(R_l) <= prod delta(Ahat) <= prod (1+delta(A))/2, with Theorem
    D1's verdict per layer and Theorem D2's verdict per step (exact; ``undecided`` when the float
    margin is within rounding and the exact rollout prefix would exceed ``exact_budget``)."""
    Af, lead, _ = _prepare(A, head_fusion, fused)
    L = Af.shape[-3]
    flat = Af.reshape((-1,) + Af.shape[-3:])
    parts = [_chain_one(np.ascontiguousarray(a), residual, discard_ratio, exact_budget) for a in flat]

    def stack(key: str) -> np.ndarray:
        return np.stack([p[key] for p in parts]).reshape(lead + (L,))

    dA, dH, dR, errR = stack("dA").astype(float), stack("dH").astype(float), stack("dR"), stack("errR")
    pH = np.cumprod(dH, axis=-1)
    pF = np.cumprod((1 + dA) / 2, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio_R = np.where(dR > errR, dR / pH, np.nan)   # numerator within rounding of 0: undecided
        ratio_F = np.where(pH > 0, pH / pF, np.nan)
    return RolloutTightness(delta_A=dA, delta_Ahat=dH, delta_R=dR, prod_delta_Ahat=pH,
                            prod_factor_bound=pF, ratio_R=ratio_R, ratio_factor=ratio_F,
                            d1=stack("d1"), d2=stack("d2"), chain=stack("chain"), error_R=errR)
