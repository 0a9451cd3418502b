"""The Dobrushin coefficient as one fused Triton kernel (GPU; tested on the CPU through Triton's
interpreter, ``TRITON_INTERPRET=1``).

    delta(P) = max_{i<j} (r_i + r_j)/2 - sum_k min(P_ik, P_jk),   r_i = sum_k P_ik

One program owns a block of BI rows i of one matrix and walks the blocks of rows j >= i: the
(BI, BJ) overlaps, the row sums of both blocks and the running maximum live in registers; the k
loop loads (BI, BK) and (BJ, BK) tiles and reduces a (BI, BJ, BK) register tile. Nothing of size
(matrices, n, n, m) or even (matrices, n, n) is ever stored: the output is one value per
(matrix, row block), reduced by a final max over the row blocks. Accumulation is in the input's
dtype (float32 or float64), as on the CPU.
"""
from __future__ import annotations

import os
from typing import Any

from theory.errors import InvalidInput

try:  # Triton is optional (Linux only); without it the CUDA route uses torch.cdist
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None


def available() -> bool:
    """Triton is importable (a GPU, or TRITON_INTERPRET=1 for CPU tensors, is needed to run it)."""
    return triton is not None


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


if triton is not None:
    @triton.jit
    def _delta_kernel(P, part, n, m, nblk, stride_b, stride_i,
                      BI: tl.constexpr, BJ: tl.constexpr, BK: tl.constexpr):
        b = tl.program_id(0)
        ib = tl.program_id(1)
        base = P + b.to(tl.int64) * stride_b
        oi = ib * BI + tl.arange(0, BI)
        best = tl.zeros((BI, BJ), dtype=P.dtype.element_ty)
        for j0 in range(ib * BI, n, BJ):
            oj = j0 + tl.arange(0, BJ)
            acc = tl.zeros((BI, BJ), dtype=P.dtype.element_ty)
            ri = tl.zeros((BI,), dtype=P.dtype.element_ty)
            rj = tl.zeros((BJ,), dtype=P.dtype.element_ty)
            for k0 in range(0, m, BK):
                ok = k0 + tl.arange(0, BK)
                a = tl.load(base + oi[:, None] * stride_i + ok[None, :],
                            mask=(oi[:, None] < n) & (ok[None, :] < m), other=0.0)
                c = tl.load(base + oj[:, None] * stride_i + ok[None, :],
                            mask=(oj[:, None] < n) & (ok[None, :] < m), other=0.0)
                acc += tl.sum(tl.minimum(a[:, None, :], c[None, :, :]), axis=2)
                ri += tl.sum(a, axis=1)
                rj += tl.sum(c, axis=1)
            d = 0.5 * (ri[:, None] + rj[None, :]) - acc
            valid = (oi[:, None] < oj[None, :]) & (oj[None, :] < n)
            best = tl.maximum(best, tl.where(valid, d, 0.0))
        tl.store(part + b * nblk + ib, tl.max(tl.max(best, axis=1), axis=0))


def dobrushin_triton(P: Any, block_i: int = 16, block_j: int = 16, block_k: int = 16) -> Any:
    """delta per matrix of ``P`` (B, n, m), a float32 or float64 CUDA tensor (or a CPU tensor under
    TRITON_INTERPRET=1); result (B,) in P's dtype on P's device."""
    import torch

    if triton is None:
        raise InvalidInput("Triton is not installed: use numerics.dobrushin.dobrushin_torch")
    if P.dim() != 3 or P.dtype not in (torch.float32, torch.float64):
        raise InvalidInput(f"P: expected a (B, n, m) float32/float64 tensor, got {tuple(P.shape)} {P.dtype}")
    if not (P.is_cuda or interpreting()):
        raise InvalidInput("P: the Triton kernel needs a CUDA tensor (or TRITON_INTERPRET=1 for CPU tensors)")
    P = P.contiguous()
    B, n, m = P.shape
    if B == 0 or n < 2:
        return torch.zeros(B, dtype=P.dtype, device=P.device)
    nblk = triton.cdiv(n, block_i)
    part = torch.empty(B * nblk, dtype=P.dtype, device=P.device)
    _delta_kernel[(B, nblk)](P, part, n, m, nblk, P.stride(0), P.stride(1),
                             BI=block_i, BJ=block_j, BK=block_k)
    return part.reshape(B, nblk).amax(dim=1)
