"""Gradient descent on a factorised linear token mixer M = U V^T, batched over seeds (torch).

Loss (per unit d):  population   f(U, V) = tr((M* - U V^T) K (M* - U V^T)^T)
                    finite data  f(U, V) = ||Y - U V^T X||_F^2 / cols   (same gradient with
                                 K -> K_hat = X X^T / cols, M* K -> C = Y X^T / cols).
Gradient: G = 2 (M K_g - C_g);  dU = G V,  dV = G^T U.  Analytic, batched with bmm:
U, V are (S, n, r) for S seeds.  Recorded: the spectrum of U V^T K^{1/2} (what the theory calls
learned directions), the population excess risk, and the gradient norm, at log-spaced steps.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import mpmath
import numpy as np
import torch

from numerics.device import single_thread
from numerics.rank.linear import check_pair, check_r
from theory.errors import InvalidInput



def record_steps(steps: int, points: int = 40) -> list[int]:
    """Log-spaced step indices 0 .. steps (inclusive), unique and increasing."""
    grid = np.unique(np.rint(np.logspace(0, math.log10(max(steps, 1)), points)).astype(int))
    return sorted({0, *grid.tolist(), steps})


def init_factors(n: int, m: int, r: int, seeds: Sequence[int], init_scale: float,
                 dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """U (S, m, r), V (S, n, r) with i.i.d. N(0, init_scale^2 / n) entries, one generator per seed."""
    us, vs = [], []
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed))
        us.append(torch.randn(m, r, generator=g, dtype=dtype) * init_scale / math.sqrt(n))
        vs.append(torch.randn(n, r, generator=g, dtype=dtype) * init_scale / math.sqrt(n))
    return torch.stack(us), torch.stack(vs)


def gd_factorised(*args: Any, **kw: Any) -> dict:
    """Batched GD on U V^T (see :func:`_gd_factorised`), run on one intra-op thread."""
    with single_thread():
        return _gd_factorised(*args, **kw)


def _gd_factorised(M_star: Any, K: Any, r: int, seeds: Sequence[int], init_scale: float = 1e-3,
                  steps: int = 2000, lr: Optional[float] = None, data: Optional[tuple] = None,
                  device: str = "cpu", dtype: torch.dtype = torch.float64, points: int = 40) -> dict:
    """Run GD for every seed at once.

    data: None (population loss) or (K_hat (S, n, n), C (S, m, n)) per seed.
    Returns numpy arrays: steps (T,), spectra (S, T, min(m, n)) of U V^T L, risk (S, T) population
    excess risk per unit d, grad_norm (S, T), init_top (S,) = top singular value at step 0, lr.
    """
    r = check_r(r)
    M, Kn, L = check_pair(M_star, K)
    if r < 1 or len(seeds) < 1 or not (init_scale > 0) or steps < 0:
        raise InvalidInput(f"gd_factorised: need r >= 1, seeds, init_scale > 0, steps >= 0; "
                         f"got r={r}, {len(seeds)} seeds, init_scale={init_scale}, steps={steps}")
    t = lambda a: torch.as_tensor(a, dtype=dtype, device=device)  # noqa: E731
    Mt, Kt, Lt = t(M), t(Kn), t(L)
    m, n = M.shape
    S = len(seeds)
    if data is None:
        Kg, Cg = Kt.expand(S, n, n), (Mt @ Kt).expand(S, m, n)
    else:
        Kg, Cg = t(data[0]), t(data[1])
        if Kg.shape != (S, n, n) or Cg.shape != (S, m, n):
            raise InvalidInput(f"gd_factorised: data must be (K_hat (S,n,n), C (S,m,n)) with S={S}, "
                             f"got {tuple(Kg.shape)}, {tuple(Cg.shape)}")
    if lr is None:                               # a safe step: 1 / (4 lambda_max(K_g) ||target||_2)
        lam = torch.linalg.eigvalsh(Kg).amax()
        target = torch.linalg.matrix_norm(Cg @ torch.linalg.inv(Kg), ord=2).amax()
        lr = float(0.25 / (lam * target))
    U, V = init_factors(n, m, r, seeds, init_scale, dtype)
    U, V = U.to(device), V.to(device)
    at = record_steps(steps, points)
    spectra, risk, gnorm = [], [], []
    for step in range(steps + 1):
        P = U @ V.transpose(1, 2)                                         # (S, m, n)
        G = 2 * (P @ Kg - Cg)                                             # (S, m, n)
        if step in at:
            D = (Mt - P) @ Lt                                             # (S, m, n)
            spectra.append(torch.linalg.svdvals(P @ Lt))
            risk.append((D * D).sum(dim=(1, 2)))
            gU, gV = G @ V, G.transpose(1, 2) @ U
            gnorm.append(torch.sqrt((gU * gU).sum(dim=(1, 2)) + (gV * gV).sum(dim=(1, 2))))
        if step < steps:
            U, V = U - lr * (G @ V), V - lr * (G.transpose(1, 2) @ U)
    spectra_np = torch.stack(spectra, 1).cpu().numpy()
    return {"steps": np.array(at), "spectra": spectra_np, "risk": torch.stack(risk, 1).cpu().numpy(),
            "grad_norm": torch.stack(gnorm, 1).cpu().numpy(), "init_top": spectra_np[:, 0, 0],
            "lr": lr, "U": U.cpu().numpy(), "V": V.cpu().numpy()}


def gd_factorised_loop(M_star: Any, K: Any, r: int, seeds: Sequence[int], **kw: Any) -> dict:
    """Baseline: one seed at a time (for the benchmark and the batched-vs-loop test)."""
    runs = [gd_factorised(M_star, K, r, [s], **kw) for s in seeds]
    out = {k: np.concatenate([run[k] for run in runs]) for k in ("spectra", "risk", "grad_norm", "init_top")}
    return {**out, "steps": runs[0]["steps"], "lr": runs[0]["lr"]}


def learned_rank(spectra: Any, threshold: Any) -> np.ndarray:
    """Number of singular values above ``threshold``; spectra (S, ..., k), threshold a scalar or
    (S,) (one per seed, aligned with the leading dims)."""
    s = np.asarray(spectra, dtype=np.float64)
    th = np.asarray(threshold, dtype=np.float64)
    th = th.reshape(th.shape + (1,) * (s.ndim - th.ndim))
    return np.sum(s > th, axis=-1)


def escape_threshold(init_top: Any, factor: float = 10.0) -> np.ndarray:
    """A direction has 'left the initialisation scale' when its singular value exceeds
    factor x the largest singular value at initialisation (per seed)."""
    return factor * np.asarray(init_top, dtype=np.float64)


def learned_rank_exact(U: Any, V: Any, L: Any, threshold: float, dps: int = 50) -> Optional[int]:
    """Count of sigma_i(U V^T L) > threshold from 50-digit singular values of the exact product of
    the float factors; None (undecided) when one lies within 1e-30 (relative) of the threshold."""
    with mpmath.workdps(dps):
        A = (mpmath.matrix(np.asarray(U).tolist()) * mpmath.matrix(np.asarray(V).T.tolist())
             * mpmath.matrix(np.asarray(L).tolist()))
        s = mpmath.svd_r(A, compute_uv=False)
        thr = mpmath.mpf(float(threshold))
        if any(abs(x - thr) <= mpmath.mpf(10) ** -30 * thr for x in s):
            return None
        return sum(1 for x in s if x > thr)


def convergence(run: dict) -> dict[str, np.ndarray]:
    """How converged the last recorded risk is: relative change over the last tenth of the
    steps and the final gradient norm, per seed."""
    steps, risk = run["steps"], run["risk"]
    j = int(np.searchsorted(steps, 0.9 * steps[-1]))
    j = min(j, len(steps) - 2) if len(steps) > 1 else 0
    prev, last = risk[:, j], risk[:, -1]
    rel = np.abs(prev - last) / np.maximum(np.abs(last), 1e-300)
    return {"rel_change_last_tenth": rel, "grad_norm": run["grad_norm"][:, -1]}
