"""One chunk's float evaluation and what every node's error rule shares (the rules themselves:
:mod:`numerics.expr.floats`): the :class:`Trace` of per-node values, error bounds, exact-grid bits
and magnitude bounds; the rounding constants (unit roundoff, underflow, the libm assumption); a
node's magnitude bound (:func:`magnitude`) and the exact-grid cap (:func:`grid`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from numerics.expr.inputs import NOT_GRID
from numerics.expr.program import up
from numerics.stochastic import UNIT_ROUNDOFF as U

ETA = 2.0 ** -1074
LIBM_ULPS = 64                       # assumed accuracy of numpy's exp, log, tanh, sqrt, power (ulp)
RHO = LIBM_ULPS * 2.0 ** -52         # ... as a relative error
H = LIBM_ULPS * ETA                  # ... as an absolute error where the result is subnormal


@dataclass
class Trace:
    """One chunk's evaluation: per node, ``value`` (b, rows, cols) or (b,), ``err`` (b,) its bound,
    ``bits`` (b,) its fractional bits where the value is exact (:data:`NOT_GRID` elsewhere) and
    ``mag``: a bound on the exact value's magnitude (a matrix's largest absolute row sum; a float
    where a bound holds for the whole chunk, (b,) computed from the floats where not, None until
    needed: :func:`magnitude`); ``nodes`` the program, ``sizes`` (n, d)."""

    value: list
    err: list
    bits: list
    mag: list = field(default_factory=list)
    nodes: tuple = ()
    sizes: tuple = (0, 0)


def cap(bound: Any) -> int:
    """The most fractional bits a value of magnitude <= ``bound`` may have and still fit in 53 bits
    (-1, i.e. never exact, for a per-instance bound)."""
    if np.ndim(bound):
        return -1
    bound = float(bound)
    if bound == 0:
        return NOT_GRID
    if not math.isfinite(bound):
        return -1
    m, e = math.frexp(bound)
    return 53 - (e - 1 if m == 0.5 else e)


def const_err(c: Fraction) -> float:
    return up(abs(Fraction(float(c)) - c))


def _exact(bits: np.ndarray, limit: int) -> np.ndarray:
    return np.where(bits <= limit, bits, NOT_GRID)


def finite(err: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(err), err, np.inf)


def magnitude(tr: Trace, k: int, measure: bool = True) -> Any:
    """Node k's magnitude bound, computed once per chunk: the program's static bound; else one for the
    chunk from its arguments' (a size is n or d, a transpose's rows times its argument's, sums and
    products as in the program); else, for a matrix and ``measure``, per instance from its floats
    plus its error (a row sum of |floats| is at most (1 + 1.01 (cols + 1) u) times its float sum);
    else inf. The exact-grid caps never measure (a per-instance bound gives no cap)."""
    m = tr.mag[k]
    if m is None:
        m = _derived(tr, k, measure)
        if m is None or not np.all(np.isfinite(m)):
            if not (measure and tr.nodes[k].matrix):
                return math.inf
            v = tr.value[k]
            m = finite(np.abs(v).sum(axis=2).max(axis=1) * (1 + 1.01 * (v.shape[2] + 1) * U) + tr.err[k])
        tr.mag[k] = m
    return m


def grid_bound(tr: Trace, k: int) -> Any:
    """Node k's magnitude bound for its exact-grid cap, before its value is there."""
    m = tr.mag[k] if tr.mag[k] is not None else _derived(tr, k, False)
    return math.inf if m is None else m


def _derived(tr: Trace, k: int, measure: bool) -> Any:
    node = tr.nodes[k]
    op, name = node.op, node.name
    if op == "size":
        return float(tr.sizes[0] if name == "n" else tr.sizes[1])
    if op == "tanh":
        return 1.0
    if op not in ("T", "lin", "smul", "mmul", "mul", "mpow", "pow", "max", "min", "abs", "fn") or \
            (op == "pow" and node.power < 0):
        return None
    m = [magnitude(tr, a, measure) for a in node.args]
    if op == "lin":
        return abs(float(node.const)) + sum((abs(float(c)) * x for c, x in zip(node.coefs, m)), 0.0)
    if op in ("smul", "mmul", "mul"):
        return math.prod(m)
    if op in ("mpow", "pow"):
        return m[0] ** node.power
    if op in ("max", "min"):
        return np.maximum.reduce(m)
    if op == "abs":
        return m[0]
    rows, cols = tr.value[node.args[0]].shape[1:]
    if op == "T":
        return rows * m[0]
    factor = {"entry_min": 1, "entry_max": 1, "norm_inf": 1, "ptp": 2, "spread": 2, "norm_1": rows,
              "trace": rows, "col_min_sum": min(rows, cols), "norm_fro": math.sqrt(rows) * (1 + 2 * U)}.get(name)
    return None if factor is None else factor * m[0]


def grid(bits: np.ndarray, bound: Any) -> np.ndarray:
    """``bits`` where a value of magnitude <= ``bound()`` with that many fractional bits fits in 53
    bits, :data:`NOT_GRID` elsewhere (``bound`` only called where some instance is on the grid)."""
    if not (bits < NOT_GRID).any():
        return np.full(len(bits), NOT_GRID, dtype=np.int64)
    return _exact(bits, cap(bound()))

