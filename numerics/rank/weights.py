"""Per-head circuits of trained transformers from their factors, never forming D x D products.

For head h with query/key/value/output factors (nn.Linear stores weight (out, in); y = x W^T):
    W_Q^h = q.weight[h rows].T  (D, dh)     W_K^h = k.weight[kv(h) rows].T  (D, dh)
    W_V^h = v.weight[kv(h) rows].T (D, dh)   W_O^h = o.weight[:, h cols].T   (dh, D)
    QK kernel  W_Q^h W_K^h^T   (D, D), rank <= dh;   OV circuit  W_V^h W_O^h  (D, D), rank <= dh.
Spectrum of A B^T for A, B (D, dh): A = Q_a R_a, B = Q_b R_b (thin QR)  =>  A B^T = Q_a (R_a R_b^T) Q_b^T,
so sigma(A B^T) = sigma(R_a R_b^T), a dh x dh core: batched over heads, (H, D, dh) -> (H, dh).
kv(h) = h // (H / H_kv) (grouped-query attention). Biases are ignored (they do not enter the
bilinear kernel); for rotary models (Llama) the static W_Q W_K^T is the kernel at relative
position 0 (RoPE rotates it per offset, which leaves its singular values unchanged only at 0).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch

from numerics.rank.linear import energy_rank, entropy_rank
from theory.errors import InvalidInput


@dataclass
class HeadFactors:
    """Per-layer factors, batched over heads: each (H, D, dh) (W_O^h given transposed, (H, D, dh))."""

    query: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor
    output_t: torch.Tensor


def _split(weight: torch.Tensor, heads: int, dh: int) -> torch.Tensor:
    """Linear weight (heads * dh, D) -> (heads, D, dh)."""
    return weight.detach().to(torch.float64).reshape(heads, dh, -1).transpose(1, 2)


def _layer_modules(module: Any) -> list[tuple[Any, Any, Any, Any]]:
    """(q, k, v, o) nn.Linear modules per layer for BERT-like and Llama-like models."""
    if hasattr(module, "encoder") and hasattr(module.encoder, "layer"):          # BERT
        return [(l.attention.self.query, l.attention.self.key, l.attention.self.value, l.attention.output.dense)
                for l in module.encoder.layer]
    base = getattr(module, "model", module)
    if hasattr(base, "layers"):                                                  # Llama / Mistral / Qwen
        return [(l.self_attn.q_proj, l.self_attn.k_proj, l.self_attn.v_proj, l.self_attn.o_proj) for l in base.layers]
    raise InvalidInput(f"rank_weights: unsupported architecture {type(module).__name__} "
                     "(expected BERT encoder.layer or Llama-style layers with self_attn)")


def head_factors(module: Any, config: Any) -> list[HeadFactors]:
    """Per-layer head factors of a transformers model (GQA: key/value factors repeated per head)."""
    layers = _layer_modules(module)
    H = int(config.num_attention_heads)
    H_kv = int(getattr(config, "num_key_value_heads", None) or H)
    D = int(config.hidden_size)
    dh = int(getattr(config, "head_dim", None) or D // H)
    if H % H_kv:
        raise InvalidInput(f"rank_weights: {H} query heads not a multiple of {H_kv} key/value heads")
    out = []
    for q, k, v, o in layers:
        rep = torch.arange(H) // (H // H_kv)
        out.append(HeadFactors(query=_split(q.weight, H, dh), key=_split(k.weight, H_kv, dh)[rep],
                               value=_split(v.weight, H_kv, dh)[rep],
                               output_t=o.weight.detach().to(torch.float64).reshape(D, H, dh).permute(1, 0, 2)))
    return out


def product_singular_values(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """sigma(A_h B_h^T) for A, B (H, D, dh) through thin QR of each factor: (H, dh)."""
    if A.shape != B.shape or A.ndim != 3 or A.shape[1] < A.shape[2]:
        raise InvalidInput(f"product_singular_values: need A, B of one shape (H, D, dh) with D >= dh, "
                         f"got {tuple(A.shape)}, {tuple(B.shape)}")
    Ra, Rb = torch.linalg.qr(A, mode="r")[1], torch.linalg.qr(B, mode="r")[1]
    return torch.linalg.svdvals(Ra @ Rb.transpose(1, 2))


def head_spectra(module: Any, config: Any) -> dict[str, np.ndarray]:
    """QK and OV singular values, (layers, H, dh) each; factor conditioning (min over A, B of
    sigma_min / sigma_max, (layers, H), an estimate); and ``full_qk`` / ``full_ov`` (layers, H): both
    factors have full column rank *certified* exactly (:func:`full_column_rank_certified`), so the
    circuit's rank is exactly dh."""
    qk, ov, cond_qk, cond_ov, full_qk, full_ov = [], [], [], [], [], []
    for f in head_factors(module, config):
        qk.append(product_singular_values(f.query, f.key))
        ov.append(product_singular_values(f.value, f.output_t))
        c = lambda X: (lambda s: s[:, -1] / s[:, 0])(torch.linalg.svdvals(X))    # noqa: E731
        cond_qk.append(torch.minimum(c(f.query), c(f.key)))
        cond_ov.append(torch.minimum(c(f.value), c(f.output_t)))
        full = lambda X: full_column_rank_certified(X.detach().to(torch.float64).numpy())  # noqa: E731
        full_qk.append(full(f.query) & full(f.key))
        full_ov.append(full(f.value) & full(f.output_t))
    st = lambda xs: torch.stack(xs).numpy()                                      # noqa: E731
    return {"qk": st(qk), "ov": st(ov), "cond_qk": st(cond_qk), "cond_ov": st(cond_ov),
            "full_qk": np.stack(full_qk), "full_ov": np.stack(full_ov)}


PRIMES = (2147483647, 2147483629)   # 2^31 - 1 and the next prime below: products fit in int64


def rank_mod_p(Z: np.ndarray, p: int) -> int:
    """Rank of an integer matrix (entries already reduced mod p, int64) over GF(p)."""
    Z = Z.copy() % p
    rows, cols = Z.shape
    r = 0
    for c in range(cols):
        piv = np.flatnonzero(Z[r:, c])
        if piv.size == 0:
            continue
        k = r + int(piv[0])
        Z[[r, k]] = Z[[k, r]]
        inv = pow(int(Z[r, c]), p - 2, p)
        Z[r] = (Z[r] * inv) % p
        below = np.flatnonzero(Z[r + 1:, c]) + r + 1
        if below.size:
            Z[below] = (Z[below] - (Z[below, c:c + 1] * Z[r]) % p) % p
        r += 1
        if r == rows:
            break
    return r


def full_column_rank_certified(X: np.ndarray) -> np.ndarray:
    """(..., D, dh) float factors -> (...) bool: True where the rational matrix the floats represent
    has full column rank, *certified*: the floats are exact integers times one power of two per
    matrix, and a rank of dh modulo a prime p means a dh x dh minor is nonzero mod p, hence nonzero
    over the integers. False means undecided (rank mod p can drop for an unlucky p), not deficient."""
    X = np.asarray(X, dtype=np.float64)
    lead, (D, dh) = X.shape[:-2], X.shape[-2:]
    flat = X.reshape((-1, D, dh))
    out = np.zeros(flat.shape[0], dtype=bool)
    for b, M in enumerate(flat):
        if not np.isfinite(M).all() or D < dh:
            continue
        mant, expo = np.frexp(M)
        ints = (mant * 2.0 ** 53).astype(np.int64)           # exact: M = ints * 2**(expo - 53)
        nz = ints != 0
        if not nz.any():
            continue
        shift = (expo - 53) - int((expo - 53)[nz].min())     # >= 0: scale the matrix by one power of 2
        uniq, inv = np.unique(shift, return_inverse=True)
        for p in PRIMES:
            twos = np.array([pow(2, int(e), p) for e in uniq], dtype=np.int64)[inv].reshape(shift.shape)
            Z = ((ints % p) * twos) % p
            # a dh x dh minor among the first 2 dh rows usually suffices (and is cheap); else all rows
            if rank_mod_p(Z[: 2 * dh], p) == dh or (D > 2 * dh and rank_mod_p(Z, p) == dh):
                out[b] = True
                break
    return out.reshape(lead)


def effective_ranks(spectra: np.ndarray) -> dict[str, np.ndarray]:
    """energy 0.9 / 0.99 and entropy ranks over the last axis of (..., dh)."""
    return {"energy_0.9": energy_rank(spectra, 0.9), "energy_0.99": energy_rank(spectra, 0.99),
            "entropy": entropy_rank(spectra)}


def kernel_product_full(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Reference only (tests): sigma of the explicitly formed D x D product."""
    return torch.linalg.svdvals(A @ B.transpose(1, 2))[:, : A.shape[2]]


def summarize(spectra: dict[str, np.ndarray], dh: int, quantised: bool, name: Optional[str] = None) -> list[dict]:
    """Rows per (layer, circuit): mean effective ranks over heads, relative to dh."""
    rows = []
    for circuit in ("qk", "ov"):
        er = effective_ranks(spectra[circuit])
        for layer in range(spectra[circuit].shape[0]):
            rows.append({"model": name, "quantised": quantised, "layer": layer, "circuit": circuit, "head_dim": dh,
                         **{k: float(np.mean(v[layer])) for k, v in er.items()}})
    return rows


def head_rank_exact(A: Any, B: Any) -> int:
    """Exact rank of A B^T for the rationals the float factors (D, dh) represent: rank(A B^T) =
    rank(A) when B has full column rank (and symmetrically); otherwise the exact product's rank.
    Fraction elimination: meant for checks on small heads, not for whole models."""
    from fractions import Fraction

    from theory.rank import exact_rank

    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.shape != B.shape or A.ndim != 2:
        raise InvalidInput(f"head_rank_exact: A, B must share one shape (D, dh), got {A.shape}, {B.shape}")
    dh = A.shape[1]
    if exact_rank(B) == dh:
        return exact_rank(A)
    if exact_rank(A) == dh:
        return exact_rank(B)
    Aq = [[Fraction(x) for x in row] for row in A]
    Bq = [[Fraction(x) for x in row] for row in B]
    return exact_rank([[sum(a * b for a, b in zip(ra, rb)) for rb in Bq] for ra in Aq])
