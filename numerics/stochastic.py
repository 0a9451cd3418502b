"""Input checking and exact rational views of row-stochastic matrices.

Every public kernel goes through :func:`as_stochastic`: bad input is an ``InvalidInput`` (a ``ValueError``) naming the
problem and where (which matrix of the batch, which row, which entry), never a deep traceback.

Exactness convention (docs/theory.md §2): a float matrix stands for the rational numbers its floats
represent. Rows whose float sum is within ``row_tol`` of 1 are renormalised *exactly*
(entry / exact row sum); the verdicts of the exact paths are correct for that rational matrix.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sys

import numpy as np

from theory.errors import InvalidInput
# Default tolerance on |row sum - 1| by input dtype (the sum itself is computed in float64): the one
# table, owned by theory/ (sympy-free, so a worker checking inputs never loads sympy).
from theory.tolerances import ROW_TOL, row_tol as tolerance_of  # noqa: E402,F401
UNIT_ROUNDOFF = 2.0 ** -53  # float64


def loaded_torch() -> Any:
    """The torch module if it is already imported, else None; never imports it (a tensor exists
    only once torch is imported, so an input that is not a tensor costs no torch start-up: a
    worker checking numpy chunks stays light)."""
    return sys.modules.get("torch")


@dataclass
class Batch:
    """A validated batch: ``data`` is a C-contiguous numpy array ``(B, n, m)`` of the input's float
    dtype (float16/bfloat16 are widened to float32); ``lead`` the leading batch shape; ``like``
    remembers how to hand results back (numpy, or a torch tensor's device)."""

    data: np.ndarray
    lead: tuple[int, ...]
    like: Any
    row_dev: np.ndarray  # (B,) max_i |row sum_i - 1| computed in float64 (plus rounding bound)

    @property
    def n(self) -> int:
        return self.data.shape[1]

    @property
    def m(self) -> int:
        return self.data.shape[2]


def torch_compute_dtype(x: Any, name: str) -> Any:
    """The dtype a torch tensor is computed in, on every device (one rule for the CPU and CUDA
    paths): float32/float64 as they are, float16/bfloat16 widened to float32 (exactly), integers
    as exact values in float64; complex and boolean tensors are an InvalidInput (a ValueError) naming ``name``."""
    torch = loaded_torch()
    check_tensor(x, name)
    if x.is_complex():
        raise InvalidInput(f"{name}: complex tensor (dtype {x.dtype}); a stochastic matrix is real")
    if x.dtype == torch.bool:
        raise InvalidInput(f"{name}: boolean tensor; pass 0/1 as floats if that is meant")
    if x.dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    if not x.dtype.is_floating_point:
        return torch.float64
    return x.dtype


def check_tensor(x: Any, name: str) -> None:
    """A torch tensor the kernels can read: strided (dense), with data (not ``meta``), on a device
    this machine has, of a real float, integer or boolean dtype (booleans and complex numbers are
    refused by the caller with their own words); else :class:`~theory.errors.InvalidInput` naming
    ``name`` and what to do."""
    torch = loaded_torch()
    if getattr(x, "is_nested", False):
        raise InvalidInput(f"{name}: nested (ragged) tensor; pad it to one shape or pass the matrices one by one")
    if x.layout != torch.strided:
        raise InvalidInput(f"{name}: {str(x.layout).replace('torch.', '')} tensor; pass x.to_dense()")
    if x.is_meta or x.device.type == "meta":
        raise InvalidInput(f"{name}: tensor on the 'meta' device has no data (shape {tuple(x.shape)})")
    if x.is_quantized:
        raise InvalidInput(f"{name}: quantized tensor (dtype {x.dtype}); pass x.dequantize()")
    if x.device.type == "cuda" and not torch.cuda.is_available():
        raise InvalidInput(f"{name}: CUDA tensor but torch sees no CUDA device here")
    if x.device.type not in ("cpu", "cuda"):
        raise InvalidInput(f"{name}: tensor on device {str(x.device)!r}; move it to the CPU (x.cpu())")


def check_row_tol(row_tol: Any) -> float | None:
    """``row_tol`` as given to a public kernel: None (the input dtype's own tolerance,
    :data:`theory.tolerances.ROW_TOL`) or a number >= 0 (``inf``: any positive row sum is
    renormalised); NaN, a negative number or a non-number is :class:`~theory.errors.InvalidInput`.

    >>> check_row_tol(None), check_row_tol(1e-6)
    (None, 1e-06)
    >>> check_row_tol(float("nan"))
    Traceback (most recent call last):
    ...
    theory.errors.InvalidInput: row_tol: must be a number >= 0 (or None for the dtype's own tolerance), got nan
    """
    if row_tol is None:
        return None
    try:
        tol = float(row_tol)
    except (TypeError, ValueError):
        tol = float("nan")
    if isinstance(row_tol, bool) or not tol >= 0:
        raise InvalidInput(f"row_tol: must be a number >= 0 (or None for the dtype's own tolerance), got {row_tol!r}")
    return tol


def stack_layers(x: Any, name: str = "attention", axis: int = 0) -> Any:
    """A tuple or list of per-layer arrays or tensors (what ``transformers`` returns as
    ``outputs.attentions``: one ``(batch, heads, T, T)`` float32 tensor per layer) stacked along
    ``axis`` as a new layer dimension; anything else is returned unchanged. Layers of different
    shapes are an InvalidInput (a ValueError) naming the first that differs."""
    if not isinstance(x, (tuple, list)):
        return x
    if not x:
        raise InvalidInput(f"{name}: empty {type(x).__name__}; at least one layer (matrix) is needed")
    torch = loaded_torch()
    is_tensor = torch is not None and all(isinstance(a, torch.Tensor) for a in x)
    if not (is_tensor or all(isinstance(a, np.ndarray) for a in x)):
        return x
    for k, a in enumerate(x):
        if a.shape != x[0].shape:
            raise InvalidInput(f"{name}: layer {k} has shape {tuple(a.shape)}, layer 0 has {tuple(x[0].shape)}; "
                             "every layer must have the same shape to be stacked")
    if is_tensor:
        return torch.stack([a.detach() for a in x], dim=axis)
    return np.stack(x, axis=axis)


def _to_numpy(x: Any, name: str) -> tuple[np.ndarray, Any]:
    x = stack_layers(x, name)     # a tuple of per-layer tensors: layers become the leading axis
    torch = loaded_torch()
    if torch is not None and isinstance(x, torch.Tensor):
        dt = torch_compute_dtype(x, name)
        if x.dtype == torch.bfloat16:
            x = x.to(dt)
        return x.detach().cpu().numpy(), x
    if isinstance(x, np.ma.MaskedArray):
        if np.ma.is_masked(x):
            raise InvalidInput(f"{name}: masked array with {int(np.ma.count_masked(x))} masked entries; "
                             "the mask would be ignored: fill them (x.filled(0.0)) or pass x.data")
        return np.asarray(x.data), None
    if isinstance(x, np.ndarray):
        return np.asarray(x), None  # np.matrix and other subclasses become plain arrays
    if isinstance(x, (list, tuple)):
        try:
            return np.asarray(x), None
        except ValueError as exc:
            raise InvalidInput(f"{name}: ragged nested list, rows of different lengths ({exc})") from None
    raise InvalidInput(f"{name}: expected a numpy array or torch tensor, got {type(x).__name__}")


def as_stochastic(x: Any, name: str = "P", square: bool = False, row_tol: float | None = None,
                  dtype: Any = None) -> Batch:
    """Validate ``x`` of shape ``(..., n, m)`` as a batch of row-stochastic matrices. The row-sum
    tolerance is the table entry of the input's own dtype (float16 and bfloat16 keep theirs when
    they are widened to float32 for computing), unless ``row_tol`` is given."""
    row_tol = check_row_tol(row_tol)
    source_dtype = getattr(x, "dtype", None)
    arr, like = _to_numpy(x, name)
    if arr.dtype == object:
        raise InvalidInput(f"{name}: object array; pass float32/float64 (for exact rationals, build "
                         "numerics.stochastic.ExactMatrix.from_rationals(rows))")
    if np.iscomplexobj(arr):
        raise InvalidInput(f"{name}: complex dtype {arr.dtype}; a stochastic matrix is real")
    if arr.dtype.kind == "b":
        raise InvalidInput(f"{name}: boolean dtype; pass 0/1 as floats if that is meant")
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)  # integers are exact in float64 up to 2**53
    if arr.dtype.kind != "f":
        raise InvalidInput(f"{name}: dtype {arr.dtype} cannot be handled; use float32 or float64")
    if arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    if dtype is not None:
        arr = arr.astype(dtype)
    if arr.ndim < 2:
        raise InvalidInput(f"{name}: needs at least 2 dimensions (..., n, m), got shape {arr.shape}")
    n, m = arr.shape[-2:]
    if n == 0 or m == 0:
        raise InvalidInput(f"{name}: empty matrix (shape {arr.shape}); at least one token is needed")
    if square and n != m:
        raise InvalidInput(f"{name}: must be square (..., n, n), got (..., {n}, {m})")
    lead = arr.shape[:-2]
    data = np.ascontiguousarray(arr.reshape((-1, n, m)))
    if data.shape[0] == 0:
        raise InvalidInput(f"{name}: empty batch (shape {arr.shape})")

    from numerics.kernels import check_stochastic  # one fused pass (numba)

    tol = tolerance_of(source_dtype if source_dtype is not None else arr.dtype) if row_tol is None else float(row_tol)
    kind, row, col, val, dev = check_stochastic(data, tol)
    if kind.any():
        b = int(np.flatnonzero(kind)[0])
        raise InvalidInput(problem_message(name, lead, b, int(kind[b]), int(row[b]), int(col[b]), float(val[b]), tol))
    # |true sum - 1| <= |float sum - 1| + m u (sum computed in float64 of nonnegative terms)
    row_dev = dev + (m + 2) * UNIT_ROUNDOFF * 1.01
    return Batch(data=data, lead=lead, like=like, row_dev=row_dev)


def problem_message(name: str, lead: tuple[int, ...], b: int, kind: int, i: int, k: int, v: float, tol: float) -> str:
    """The one-line error for problem ``kind`` of :func:`numerics.kernels.check_stochastic` (1 non-finite
    entry, 2 negative entry, 3 row sum off) at matrix ``b`` of a batch of leading shape ``lead``."""
    where = _where(lead, b)
    if kind == 1:
        return f"{name}: non-finite entry {v} at {where}row {i}, column {k}"
    if kind == 2:
        return f"{name}: negative entry {v!r} at {where}row {i}, column {k}"
    return (f"{name}: row {i} sums to {v!r}, not 1 (tolerance {tol:g})"
            + (f" at {where}".rstrip(", ") if where else ""))


def _where(lead: tuple[int, ...], b: int) -> str:
    if not lead:
        return ""
    return f"batch index {tuple(int(v) for v in np.unravel_index(b, lead))}, "


def submatrix(A: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The kept rows and columns, floats unchanged: (..., T, T) -> (..., n, n) float64 (exact
    widening). A row whose kept mass is zero cannot be renormalised: InvalidInput naming it."""
    sub = np.asarray(A, dtype=np.float64)[..., keep, :][..., :, keep]
    mass = sub.sum(axis=-1)
    if np.any(mass <= 0):
        idx = tuple(int(v) for v in np.argwhere(mass <= 0)[0])
        raise InvalidInput(f"restricted attention row {idx[-1]} (index {idx}) has no mass on the kept tokens")
    return sub


def restrict(A: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """:func:`submatrix` with rows renormalised to 1 in float64 (a float approximation of the exact
    renormalisation; verdicts use ``factor_check(submatrix(...), renormalise=True)``)."""
    sub = submatrix(A, keep)
    return sub / sub.sum(axis=-1, keepdims=True)


def renormalised(x: Any, name: str = "A", square: bool = False) -> tuple[Batch, np.ndarray]:
    """Nonnegative finite matrices whose rows are to be renormalised to 1: -> (the float64
    renormalised batch, the original floats ``(B, n, m)`` float64). The rational matrix of a verdict
    is the original floats with each row divided by its exact sum (``ExactMatrix.from_floats`` of
    the original); the batch's ``row_dev`` is widened by the float renormalisation's error
    (|fl(a / fl(s)) - a / s| <= (m + 2) u a / s per entry), so float error bounds stay rigorous.
    An all-zero row is an InvalidInput (a ValueError) naming it."""
    raw = as_stochastic(x, name, square=square, row_tol=np.inf)     # finite, nonnegative
    orig = raw.data.astype(np.float64)
    mass = orig.sum(axis=-1, keepdims=True)
    if np.any(mass <= 0):
        b, i = (int(v) for v in np.argwhere(mass[..., 0] <= 0)[0])
        where = _where(raw.lead, b).rstrip(", ")
        raise InvalidInput(f"{name}: row {i} is all zero{' at ' + where if where else ''}; it cannot be renormalised")
    batch = as_stochastic(orig / mass, name, square=square)
    m = orig.shape[-1]
    batch.row_dev = batch.row_dev + (m + 2) * UNIT_ROUNDOFF * 1.01
    batch.lead, batch.like = raw.lead, raw.like
    return batch, orig


def give_back(values: np.ndarray, batch: Batch) -> Any:
    """Reshape a per-matrix result ``(B, ...)`` to ``lead + (...)`` and return it as the input kind."""
    out = values.reshape(batch.lead + values.shape[1:])
    if batch.like is not None:           # the input was a tensor: torch is loaded
        t = loaded_torch().from_numpy(np.require(out, requirements="C"))  # keeps shape (): not ascontiguousarray
        return t.to(batch.like.device)
    return out


# --------------------------------------------------------------------------------------------
# Exact rational view: integers over a common power of two, rows renormalised exactly.
# --------------------------------------------------------------------------------------------
class ExactMatrix:
    """The rational matrix a float matrix represents, rows renormalised exactly.

    Entry (i, k) equals ``num[i][k] / rowsum[i]`` with Python integers. Built from floats (exact
    dyadic values) or from Fractions/ints (then the rows must sum to exactly 1 or are renormalised).
    """

    __slots__ = ("num", "rowsum", "n", "m")

    def __init__(self, num: list[list[int]], rowsum: list[int]):
        self.num, self.rowsum = num, rowsum
        self.n, self.m = len(num), len(num[0])

    @classmethod
    def from_floats(cls, a: np.ndarray) -> "ExactMatrix":
        a = np.asarray(a, dtype=np.float64)
        mant, expo = np.frexp(a)  # a = mant * 2**expo, 0.5 <= |mant| < 1
        nz = a != 0
        shift = int(53 - expo[nz].min()) if nz.any() else 0  # common scale 2**shift
        ints = (mant * 2.0 ** 53).astype(np.int64)  # exact: 53-bit mantissas
        e = (expo - 53 + shift).astype(np.int64)     # >= 0 where nonzero
        num = [[(int(v) << int(s)) if v else 0 for v, s in zip(rv, rs)] for rv, rs in zip(ints, e)]
        for i, row in enumerate(num):
            if not any(row):
                raise InvalidInput(f"row {i} is all zero; it cannot be renormalised to sum 1")
        return cls(num, [sum(r) for r in num])

    @classmethod
    def from_rationals(cls, rows: Any) -> "ExactMatrix":
        fr = [[Fraction(v) for v in r] for r in rows]
        from math import lcm

        out, sums = [], []
        for i, r in enumerate(fr):
            if any(v < 0 for v in r):
                raise InvalidInput(f"row {i} has a negative entry")
            den = lcm(*[v.denominator for v in r])
            ints = [int(v * den) for v in r]
            if not any(ints):
                raise InvalidInput(f"row {i} is all zero")
            out.append(ints)
            sums.append(sum(ints))
        return cls(out, sums)

    def entry(self, i: int, k: int) -> Fraction:
        return Fraction(self.num[i][k], self.rowsum[i])

    def rows(self) -> list[list[Fraction]]:
        return [[Fraction(v, s) for v in r] for r, s in zip(self.num, self.rowsum)]

    def overlap(self, i: int, j: int) -> Fraction:
        """sum_k min(P_ik, P_jk) = 1 - d_ij, exactly."""
        ri, rj, si, sj = self.num[i], self.num[j], self.rowsum[i], self.rowsum[j]
        tot = 0
        for a, b in zip(ri, rj):
            x, y = a * sj, b * si
            tot += x if x < y else y
        return Fraction(tot, si * sj)

    def overlaps(self, pairs: Any) -> list[Fraction]:
        """``overlap(i, j)`` for many pairs; vectorised in int64 when every row has the same exact
        sum and the integers are small (dyadic, one-hot and other coarse inputs), else a loop."""
        pairs = [(int(i), int(j)) for i, j in pairs]
        s0 = self.rowsum[0]
        if (pairs and all(s == s0 for s in self.rowsum) and s0 < 2 ** 62 // max(self.m, 1)):
            a = np.array(self.num, dtype=np.int64)
            idx = np.array(pairs, dtype=np.int64)
            step = max(1, (1 << 22) // max(self.m, 1))  # bounded temporaries (~32 MB) per block
            tot = np.concatenate([np.minimum(a[idx[s:s + step, 0]], a[idx[s:s + step, 1]]).sum(axis=-1)
                                  for s in range(0, len(idx), step)])
            return [Fraction(int(t), s0) for t in tot]
        return [self.overlap(i, j) for i, j in pairs]

    def tv(self, i: int, j: int) -> Fraction:
        """d_ij = 1/2 ||P_i - P_j||_1, exactly."""
        return 1 - self.overlap(i, j)

    def diff_sign(self, i: int, j: int, k: int) -> int:
        """sign(P_ik - P_jk), exactly."""
        v = self.num[i][k] * self.rowsum[j] - self.num[j][k] * self.rowsum[i]
        return (v > 0) - (v < 0)

    def rows_equal(self) -> bool:
        r0, s0 = self.num[0], self.rowsum[0]
        return all(a * s0 == b * s for r, s in zip(self.num[1:], self.rowsum[1:]) for a, b in zip(r, r0))
