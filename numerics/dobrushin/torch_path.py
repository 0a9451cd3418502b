"""delta on torch tensors where they lie (the CUDA route of :func:`numerics.dobrushin.dobrushin`):
the validation of :func:`numerics.stochastic.as_stochastic` done on the device, then the fused Triton
kernel (:mod:`numerics.dobrushin.triton_kernel`) or ``torch.cdist`` under a memory budget. Re-exported
by :mod:`numerics.dobrushin`."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from numerics import kernels as K
from numerics.device import chunk_size
from numerics.stochastic import UNIT_ROUNDOFF
from theory.errors import InvalidInput


def dobrushin_torch(P: Any, *, max_bytes: Optional[int] = None) -> Any:
    """delta of each matrix of a torch tensor (any device), batched in one call: the fused Triton
    kernel (:mod:`numerics.dobrushin.triton_kernel`: min-form, row sums and maximum in registers)
    on CUDA when Triton is installed, else ``torch.cdist(p=1)`` over the whole batch, blocked only
    when its (matrices, rows, n) distances would exceed ``max_bytes`` (default
    :data:`numerics.device.DEFAULT_MAX_BYTES`). The CUDA route of :func:`dobrushin`; also callable
    on CPU. Does not validate (use :func:`dobrushin`); dtype and shape rules are :func:`dobrushin`'s."""
    import torch

    from numerics.stochastic import torch_compute_dtype

    dt = torch_compute_dtype(P, "P")
    if P.dim() < 2:
        raise InvalidInput(f"P: needs at least 2 dimensions (..., n, m), got shape {tuple(P.shape)}")
    n, m = P.shape[-2:]
    flat = P.to(dt).reshape(-1, n, m)
    B = flat.shape[0]
    if n < 2 or B == 0 or m == 0:
        return torch.zeros(P.shape[:-2], dtype=dt, device=P.device)
    if flat.is_cuda:
        from numerics.dobrushin import triton_kernel as TK
        if TK.available() and dt in (torch.float32, torch.float64):
            try:
                return TK.dobrushin_triton(flat).reshape(P.shape[:-2])
            except Exception as exc:  # noqa: BLE001  (a Triton/driver mismatch must not stop the run)
                import warnings
                warnings.warn(f"Triton kernel unavailable ({type(exc).__name__}: {exc}); using torch.cdist")
    size = flat.element_size()
    rows = min(n, chunk_size(n * size, max_bytes))                    # rows i per step
    mats = chunk_size(n * n * size, max_bytes) if rows == n else 1    # matrices per step
    if rows == n and mats >= B:                                        # the usual case: one call
        return (torch.cdist(flat, flat, p=1).amax(dim=(-1, -2)) / 2).reshape(P.shape[:-2])
    out = torch.zeros(B, dtype=dt, device=P.device)
    for b0 in range(0, B, mats):                                       # only past the memory budget
        blk = flat[b0:b0 + mats]
        for i0 in range(0, n, rows):
            d = torch.cdist(blk[:, i0:i0 + rows], blk, p=1).amax(dim=(-1, -2)) / 2
            out[b0:b0 + mats] = torch.maximum(out[b0:b0 + mats], d)
    return out.reshape(P.shape[:-2])


def validate_torch(P: Any, name: str = "P", row_tol: Optional[float] = None) -> None:
    """:func:`numerics.stochastic.as_stochastic`'s checks and errors (word for word) on a torch tensor
    where it lies: one vectorised sweep on the device (float64 row sums, row minima); only rows it
    flags (a bad entry, or a sum within rounding of the tolerance) are copied to the host and checked
    there with the CPU path's own kernel, so the verdict and message are the CPU path's."""
    import torch

    from numerics.stochastic import check_row_tol, problem_message, tolerance_of, torch_compute_dtype

    row_tol = check_row_tol(row_tol)
    dt = torch_compute_dtype(P, name)
    shape = tuple(P.shape)
    if P.dim() < 2:
        raise InvalidInput(f"{name}: needs at least 2 dimensions (..., n, m), got shape {shape}")
    n, m = shape[-2:]
    if n == 0 or m == 0:
        raise InvalidInput(f"{name}: empty matrix (shape {shape}); at least one token is needed")
    lead = shape[:-2]
    x = P.detach().to(dt).reshape(-1, n, m)
    if x.shape[0] == 0:
        raise InvalidInput(f"{name}: empty batch (shape {shape})")
    tol = tolerance_of(P.dtype) if row_tol is None else float(row_tol)
    rs = x.sum(dim=-1, dtype=torch.float64)
    margin = 2 * (m + 2) * UNIT_ROUNDOFF * (1 + rs.abs())          # two summation orders differ by less
    flag = ~torch.isfinite(rs) | (x.amin(dim=-1) < 0) | ((rs - 1).abs() > tol - margin)
    if not bool(flag.any()):
        return
    idx = torch.nonzero(flag.reshape(-1)).reshape(-1)
    for s in range(0, len(idx), 1024):                              # row-major: the CPU path's order
        part = idx[s:s + 1024]
        rows = x.reshape(-1, m)[part].cpu().numpy()
        if rows.dtype != np.float64 and rows.dtype != np.float32:
            rows = rows.astype(np.float64)
        kind, _, col, val, _ = K.check_stochastic(np.ascontiguousarray(rows[:, None, :]), tol)
        bad = np.flatnonzero(kind)
        if len(bad):
            r, flat_row = int(bad[0]), int(part[int(bad[0])])
            raise InvalidInput(problem_message(name, lead, flat_row // n, int(kind[r]), flat_row % n,
                                             int(col[r]), float(val[r]), tol))


def validated_torch(P: Any, max_bytes: Optional[int] = None, row_tol: Optional[float] = None) -> Any:
    """The CUDA route of :func:`numerics.dobrushin.dobrushin`: its validation on the device (same rules, same errors), then the kernel."""
    validate_torch(P, "P", row_tol)
    return dobrushin_torch(P, max_bytes=max_bytes)
