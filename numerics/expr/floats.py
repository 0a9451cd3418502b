"""The batched float evaluator of a compiled statement, with a rigorous error bound per side.

"Exact" means the statement evaluated in exact rational arithmetic on the matrices the floats stand
for: each input's floats with every row divided by its exact sum (the suite's convention,
:mod:`numerics.stochastic`). Every node carries, per instance, its float value and a bound on
|float - exact| (for a matrix: on the largest row sum of |float - exact|, which bounds every entry
too), propagated through the program with unit roundoff u = 2^-53 and eta = 2^-1074 (underflow):

    input X       max_i |s_i - 1|, s_i the exact row sum (X_i - X_i / s_i has L1 norm |s_i - 1|)
    lin           sum |c_i| e_i + sum (|fl(c_i) - c_i| + u |fl(c_i)|) M_i + (k + 1) 2u S + k n eta
    X Y           e_X M_Y + |X| e_Y + 1.01 n u M_X M_Y + n^2 eta   (any summation order, FMA or not)
    delta(M)      e_M + 4 (n + 4) u M + 2 eta   (delta is 1-Lipschitz in the row L1 distance; the
                  min-form kernel's row sums, overlaps and halving, in any order)
    scalar lin    |fl(c_0) - c_0| + sum (|c_i| e_i + |fl(c_i) - c_i| |v_i|) + (k + 1) 2u S + k eta
    x y           |x| e_y + |y| e_x + e_x e_y + 2u |xy| + eta;   1/y: e_y / (|y| (|y| - e_y)) + 2u/|y| + eta
    max, min      the largest of the arguments' bounds

(M: a bound on the float matrix's largest absolute row sum, static bound plus error; |X| the static
bound; S the sum of the magnitudes added.) The constants are deliberately loose: the bound only
decides which instances the exact path must see, and a looser bound sends a few more there. The
bound is computed in floats and multiplied by ``SAFE`` = 1 + 2^-30 for that rounding.

Where the inputs lie on a dyadic grid (entries multiples of 2^-g, rows summing to exactly 1:
one-hot, coarse dyadic) every operation whose values provably fit in 53 bits is exact; the error
is then 0 and the float value is the exact one (tracked per node and instance as the number of
fractional bits, :data:`NOT_GRID` where not exact).

The delta kernel is :func:`numerics.kernels.dobrushin_batch`, the compiled min-form behind
:func:`numerics.dobrushin.dobrushin` (inputs are validated once here, intermediate matrices are
not revalidated); products are numpy's batched matmul.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from numerics import kernels as K
from numerics.expr.program import Compiled, Node, power_by_squaring, up
from numerics.stochastic import UNIT_ROUNDOFF as U, as_stochastic
from theory.errors import InvalidInput

ETA = 2.0 ** -1074
SAFE = 1.0 + 2.0 ** -30
NOT_GRID = 1 << 20           # "not exact" in a node's fractional-bit count
GRID = 50                    # inputs are tested on the 2^-50 grid (numerics.kernels.exact_grid)
CHUNK_BYTES = 16 * 2 ** 20   # float64 bytes of one matrix node per chunk of instances


@dataclass
class Inputs:
    """Validated inputs: ``data[name]`` (B, n, n) float64 C-contiguous, ``row_dev[name]`` (B,) a
    rigorous bound on max_i |exact row sum - 1|, ``bits[name]`` (B,) the fractional bits of
    matrices on the exact grid (rows summing to exactly 1), :data:`NOT_GRID` elsewhere."""

    data: dict
    row_dev: dict
    bits: dict
    size: int
    n: int

    def chunk_size(self) -> int:
        return max(1, CHUNK_BYTES // (8 * self.n * self.n))


def inputs(compiled: Compiled, mats: Any) -> Inputs:
    """``mats`` checked against ``compiled``: a mapping from exactly the statement's matrices
    (:attr:`Compiled.matrices`) to row-stochastic batches of one shape (B, n, n); InvalidInput naming
    what is wrong and where otherwise."""
    if not isinstance(mats, Mapping):
        raise InvalidInput(f"mats: expected a mapping such as {{'A': array of shape (batch, n, n)}}, "
                           f"got {type(mats).__name__}")
    for key in mats:
        if key not in compiled.matrices:
            raise InvalidInput(f"mats: {key!r} does not occur in the statement (it uses "
                               f"{', '.join(compiled.matrices)})")
    data, dev, bits, shape = {}, {}, {}, None
    for name in compiled.matrices:
        if name not in mats:
            raise InvalidInput(f"mats: the statement uses {name} but mats has no {name!r}")
        batch = as_stochastic(mats[name], name, square=True)
        if len(batch.lead) != 1:
            raise InvalidInput(f"{name}: expected shape (batch, n, n), got {batch.lead + (batch.n, batch.m)}"
                               + ("; pass X[None] for one matrix" if not batch.lead else ""))
        if shape is not None and batch.data.shape != shape:
            first = compiled.matrices[0]
            raise InvalidInput(f"mats: {name} has shape {batch.data.shape} but {first} has {shape}; "
                               "every matrix of a statement has the same shape")
        shape = batch.data.shape
        X = np.ascontiguousarray(batch.data, dtype=np.float64)
        data[name], dev[name] = X, batch.row_dev.astype(np.float64)
        bits[name] = grid_bits(X)
    return Inputs(data=data, row_dev=dev, bits=bits, size=shape[0], n=shape[1])


def grid_bits(X: np.ndarray) -> np.ndarray:
    """Per matrix of X (B, n, n): the fewest fractional bits g with every entry a multiple of 2^-g,
    if that is at most 50 and every row sums to exactly 1 (:func:`numerics.kernels.exact_grid`);
    :data:`NOT_GRID` otherwise."""
    out = np.full(len(X), NOT_GRID, dtype=np.int64)
    on = np.flatnonzero(K.exact_grid(X, 2.0 ** -GRID))
    if len(on):
        v = (X[on] * 2.0 ** GRID).astype(np.int64).reshape(len(on), -1)      # exact integers <= 2^50
        low = np.where(v != 0, v & -v, 1 << GRID)                            # lowest set bit
        tz = np.frexp(low.astype(np.float64))[1] - 1
        out[on] = np.maximum(GRID - tz.min(axis=1), 0)
    return out


@dataclass
class Trace:
    """One chunk's evaluation: per node, ``value`` (b, n, n) or (b,), ``err`` (b,) its bound and
    ``bits`` (b,) its fractional bits where the value is exact (:data:`NOT_GRID` elsewhere)."""

    value: list
    err: list
    bits: list


def cap(bound: float) -> int:
    """The most fractional bits a value of magnitude <= ``bound`` may have and still fit in 53 bits."""
    if bound == 0:
        return NOT_GRID
    if not math.isfinite(bound):
        return -1
    m, e = math.frexp(bound)
    return 53 - (e - 1 if m == 0.5 else e)


def dyadic(c: Fraction) -> int:
    """Fractional bits of c if it is a float-exact dyadic rational, else NOT_GRID."""
    q = c.denominator
    if q & (q - 1) or abs(c.numerator) >= 2 ** 53:
        return NOT_GRID
    return q.bit_length() - 1


def _const_err(c: Fraction) -> float:
    return up(abs(Fraction(float(c)) - c))


def _exact(bits: np.ndarray, limit: int) -> np.ndarray:
    return np.where(bits <= limit, bits, NOT_GRID)


def _finite(err: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(err), err, np.inf)


def _matmul(x: tuple, y: tuple, n: int) -> tuple:
    """(value, err, bits, mag) of the product of two matrix operands."""
    vx, ex, bx, mx = x
    vy, ey, by, my = y
    v = np.matmul(vx, vy)
    fx, fy = mx + ex, my + ey
    err = ex * fy + mx * ey + 1.01 * n * U * fx * fy + n * n * ETA
    bits = _exact(bx + by, cap(mx * my))
    return v, np.where(bits < NOT_GRID, 0.0, err), bits, mx * my


def _scalar_mul(x: tuple, y: tuple) -> tuple:
    vx, ex, bx, mx = x
    vy, ey, by, my = y
    v = vx * vy
    err = np.abs(vx) * ey + np.abs(vy) * ex + ex * ey + 2 * U * np.abs(v) + ETA
    bits = _exact(bx + by, cap(max(mx, 1.0) * max(my, 1.0)))
    return v, np.where(bits < NOT_GRID, 0.0, _finite(err)), bits, mx * my


def _step(node: Node, tr: Trace, nodes: tuple, inp: Inputs, lo: int, hi: int) -> tuple:
    """(value, err, bits) of ``node`` on instances lo..hi, its arguments already in ``tr``."""
    b, n = hi - lo, inp.n
    V, E, G = tr.value, tr.err, tr.bits
    op = node.op
    if op == "leaf":
        bits = inp.bits[node.name][lo:hi]
        return inp.data[node.name][lo:hi], np.where(bits < NOT_GRID, 0.0, inp.row_dev[node.name][lo:hi]), bits
    if op == "lin" and node.matrix:
        acc = None
        err = np.zeros(b)
        total, k, bits = abs(float(node.const)), len(node.args), np.full(b, dyadic(node.const) if node.const else 0)
        for a, c in zip(node.args, node.coefs):
            cf, mag = float(c), nodes[a].mag
            term = V[a] if c == 1 else V[a] * cf
            acc = term.copy() if acc is None and term is V[a] else (term if acc is None else np.add(acc, term, out=acc))
            err = err + abs(float(c)) * E[a] + (_const_err(c) + U * abs(cf)) * (mag + E[a])
            total = total + abs(cf) * (mag + E[a])
            bits = np.maximum(bits, G[a] + dyadic(c))
        if acc is None:
            acc = np.zeros((b, n, n))
        if node.const:
            acc.reshape(b, n * n)[:, ::n + 1] += float(node.const)
        err = err + _const_err(node.const) + (k + 1) * 2 * U * total + k * n * ETA
        bits = _exact(bits, cap(node.mag))
        return acc, np.where(bits < NOT_GRID, 0.0, err), bits
    if op in ("mmul", "mpow"):
        operand = [(V[a], E[a], G[a], nodes[a].mag) for a in node.args]
        def mul(x: tuple, y: tuple) -> tuple:
            return _matmul(x, y, n)
        if op == "mpow":
            v, e, g, _ = power_by_squaring(operand[0], node.power, mul)
        else:
            out = operand[0]
            for y in operand[1:]:
                out = mul(out, y)
            v, e, g, _ = out
        return np.ascontiguousarray(v), e, g
    if op == "delta":
        (a,) = node.args
        M, mag = V[a], nodes[a].mag
        v = K.dobrushin_batch(np.ascontiguousarray(M)) if n > 1 else np.zeros(b)
        err = E[a] + 4 * (n + 4) * U * (mag + E[a]) + 2 * ETA
        bits = _exact(G[a] + 1, cap(2 * mag))
        return v.astype(np.float64, copy=False), np.where(bits < NOT_GRID, 0.0, err), bits
    if op == "const":
        bits = dyadic(node.const)
        return np.full(b, float(node.const)), np.full(b, 0.0 if bits < NOT_GRID else _const_err(node.const)), \
            np.full(b, bits)
    if op == "lin":
        c0 = float(node.const)
        v = np.full(b, c0)
        err = np.full(b, _const_err(node.const))
        total = np.full(b, abs(c0))
        bits = np.full(b, dyadic(node.const) if node.const else 0)
        for a, c in zip(node.args, node.coefs):
            cf = float(c)
            v = v + (V[a] if c == 1 else cf * V[a])
            err = err + abs(cf) * E[a] * (1 + 2 * U) + _const_err(c) * np.abs(V[a])
            total = total + abs(cf) * np.abs(V[a])
            bits = np.maximum(bits, G[a] + dyadic(c))
        k = len(node.args)
        err = _finite(err + (k + 1) * 2 * U * total + k * ETA)
        bits = _exact(bits, cap(node.mag))
        return v, np.where(bits < NOT_GRID, 0.0, err), bits
    operand = [(V[a], E[a], G[a], nodes[a].mag) for a in node.args]
    if op == "mul":
        out = operand[0]
        for y in operand[1:]:
            out = _scalar_mul(out, y)
        return out[0], out[1], out[2]
    if op == "pow":
        v, e, g, _ = power_by_squaring(operand[0], abs(node.power), _scalar_mul)
        if node.power > 0:
            return v, e, g
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = 1.0 / v
            y = np.abs(v)
            err = np.where(y > e, e / (y * (y - e)), np.inf) + 2 * U * np.abs(r) + ETA
        return r, _finite(err), np.full(b, NOT_GRID)
    if op in ("max", "min"):
        pick = np.maximum if op == "max" else np.minimum
        v = pick.reduce([x[0] for x in operand])
        err = np.max([x[1] for x in operand], axis=0)
        g = np.max([x[2] for x in operand], axis=0)
        return v, err, np.where(g < NOT_GRID, g, NOT_GRID)
    raise AssertionError(f"unknown node {op!r}")


def trace(compiled: Compiled, inp: Inputs, lo: int, hi: int) -> Trace:
    """Every node of ``compiled`` on instances lo..hi of ``inp``."""
    tr = Trace([], [], [])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for node in compiled.nodes:
            v, e, g = _step(node, tr, compiled.nodes, inp, lo, hi)
            tr.value.append(v)
            tr.err.append(e)
            tr.bits.append(g)
    return tr


def evaluate(compiled: Compiled, mats: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both sides of ``compiled`` on every instance of ``mats`` ({"A": (B, n, n), ...}, row-stochastic):
    -> (lhs (B,), rhs (B,), err (B, 2)), float64, with ``err[:, 0]`` and ``err[:, 1]`` rigorous bounds
    on |lhs - exact lhs| and |rhs - exact rhs| (see the module docstring; 0 where the float
    evaluation is provably exact, inf where no bound holds, e.g. near a division by zero).

    >>> from theory.expr import A, I, delta
    >>> from numerics.expr.program import compile_statement
    >>> c = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
    >>> lhs, rhs, err = evaluate(c, {"A": np.array([[[0.75, 0.25], [0.25, 0.75]]])})
    >>> lhs, rhs, err                     # dyadic rows summing to exactly 1: exact, tight
    (array([0.75]), array([0.75]), array([[0., 0.]]))
    """
    inp = inputs(compiled, mats)
    lhs, rhs, err = np.empty(inp.size), np.empty(inp.size), np.empty((inp.size, 2))
    step = inp.chunk_size()
    for lo in range(0, inp.size, step):
        hi = min(lo + step, inp.size)
        tr = trace(compiled, inp, lo, hi)
        lhs[lo:hi], rhs[lo:hi] = tr.value[compiled.lhs], tr.value[compiled.rhs]
        err[lo:hi, 0], err[lo:hi, 1] = tr.err[compiled.lhs] * SAFE, tr.err[compiled.rhs] * SAFE
    return lhs, rhs, err
