"""Comparison contraction bounds for the Dobrushin coefficient (docs/theory.md §1, "Related contraction bounds").

    Birkhoff:        delta(T) <= tau_B(T) = tanh(Diam(T)/4),
                     Diam(T) = max_{i,j,k,l} log(T_ik T_jl / (T_jk T_il))      (T positive)
    softmax logits:  delta(softmax(S)) <= max_{i,j} tanh(osc(S_i - S_j)/4),   osc = max - min

Both reduce to one quantity, the largest oscillation of a row difference of log-values:

    Diam(T) = max_{i,j} osc(log T_i - log T_j).

Softmax is invariant to adding a constant to a row of logits, so for A = softmax(S) the logits
are recovered *exactly up to row constants* by log A, and osc(S_i - S_j) = osc(log A_i - log A_j):
for one attention head the softmax-logit bound and Birkhoff's bound coincide (when A > 0). They
differ on a head average, which is not a softmax: there delta(mean_h A_h) <= mean_h delta(A_h)
(delta is convex) <= mean_h of the per-head bounds. Hence :func:`logits_from_probabilities`: no
hook on the model is needed to get logits.

Masked logits are ``-inf``. A column masked in both rows drops out (both probabilities are 0); a
column masked in one row only makes the oscillation infinite and the bound trivial (= 1). Causal
attention therefore always has a trivial bound: its rows have different supports.

These bounds are floats for comparison tables: they decide no equality.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from theory.errors import InvalidInput


@njit(cache=True, nogil=True, fastmath=True)
def _finite_osc(L, b, i, j, m):  # noqa: ANN001 - all entries finite: branch-free, vectorises
    d = L[b, i, 0] - L[b, j, 0]
    hi = d
    lo = d
    for k in range(1, m):
        d = L[b, i, k] - L[b, j, k]
        hi = max(hi, d)
        lo = min(lo, d)
    return hi - lo


@njit(parallel=True, cache=True, nogil=True)
def _max_row_oscillation(L):  # noqa: ANN001 - numba; L: (B, n, m) float64, -inf allowed
    B, n, m = L.shape
    out = np.zeros(B)
    for b in prange(B):
        best = 0.0
        if np.isfinite(L[b]).all():
            for i in range(n):
                for j in range(i + 1, n):
                    best = max(best, _finite_osc(L, b, i, j, m))
            out[b] = best
            continue
        for i in range(n):
            for j in range(i + 1, n):
                hi = -np.inf
                lo = np.inf
                broken = False
                for k in range(m):
                    a = L[b, i, k]
                    c = L[b, j, k]
                    if a == -np.inf or c == -np.inf:
                        if a != c:       # masked in one row only: different supports
                            broken = True
                            break
                        continue         # masked in both rows: the column drops out
                    d = a - c
                    if d > hi:
                        hi = d
                    if d < lo:
                        lo = d
                if broken:
                    best = np.inf
                    break
                if hi >= lo and hi - lo > best:
                    best = hi - lo
            if best == np.inf:
                break
        out[b] = best
    return out


def _as_batch(x: Any, name: str) -> tuple[np.ndarray, tuple]:
    try:
        import torch
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu().to(torch.float64).numpy()
    except ImportError:  # pragma: no cover
        pass
    a = np.asarray(x, dtype=np.float64)
    if a.ndim < 2:
        raise InvalidInput(f"{name} must have shape (..., n, m); got {a.shape}")
    if np.isnan(a).any() or np.isposinf(a).any():
        idx = tuple(int(v) for v in np.argwhere(np.isnan(a) | np.isposinf(a))[0])
        raise InvalidInput(f"{name} has a NaN or +inf entry at index {idx}")
    return np.ascontiguousarray(a.reshape((-1,) + a.shape[-2:])), a.shape[:-2]


def max_log_oscillation(L: Any) -> np.ndarray:
    """max_{i<j} osc(L_i - L_j) per matrix, ``(..., n, m) -> (...)``; 0 for n = 1; inf when two
    rows have different ``-inf`` patterns."""
    flat, lead = _as_batch(L, "L")
    return _max_row_oscillation(flat).reshape(lead)


def logits_from_probabilities(A: Any) -> np.ndarray:
    """log A in float64 (``-inf`` where A = 0): logits of A up to a constant per row."""
    flat, lead = _as_batch(A, "A")
    if (flat < 0).any():
        idx = tuple(int(v) for v in np.argwhere(flat.reshape(lead + flat.shape[-2:]) < 0)[0])
        raise InvalidInput(f"A has a negative entry at index {idx}")
    with np.errstate(divide="ignore"):
        return np.log(flat).reshape(lead + flat.shape[-2:])


def birkhoff_diameter(T: Any) -> np.ndarray:
    """Diam(T) = max log(T_ik T_jl / (T_jk T_il)) per matrix; inf where T has a zero entry."""
    flat, lead = _as_batch(T, "T")
    if (flat < 0).any():
        raise InvalidInput("T must be nonnegative (Birkhoff's bound is for positive matrices)")
    diam = np.full(flat.shape[0], np.inf)
    positive = (flat > 0).all(axis=(-2, -1))
    if positive.any():
        diam[positive] = _max_row_oscillation(np.ascontiguousarray(np.log(flat[positive])))
    return diam.reshape(lead)


def birkhoff(T: Any) -> np.ndarray:
    """tau_B(T) = tanh(Diam(T)/4) per matrix: 1.0 (trivial) where T has zeros."""
    return np.tanh(birkhoff_diameter(T) / 4.0)


def softmax_logit_bound(S: Any) -> np.ndarray:
    """max_{i,j} tanh(osc(S_i - S_j)/4) per logit matrix S ``(..., n, m)`` (-inf = masked), an
    upper bound on delta(softmax(S)); 1.0 (trivial) where two rows have different masks."""
    return np.tanh(max_log_oscillation(S) / 4.0)


def softmax_bound_from_probabilities(A: Any) -> np.ndarray:
    """The softmax-logit bound of attention probabilities A, logits recovered as log A."""
    return softmax_logit_bound(logits_from_probabilities(A))
