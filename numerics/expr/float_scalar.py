"""The float rules of the scalar nodes of a compiled statement (the delta kernel, constants,
linear combinations, functionals of a matrix, parameters, sizes, products, powers, max / min, |x|,
exp, log, tanh, rational powers) and which nodes are nonnegative by construction: per instance a
value and a bound on its error, as :mod:`numerics.expr.floats` states them."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from numerics import kernels as K
from numerics.expr.float_trace import ETA, H, RHO, Trace, const_err, finite, grid, grid_bound, magnitude
from numerics.expr.inputs import NOT_GRID, Inputs, dyadic
from numerics.expr.program import Node, power_by_squaring
from numerics.stochastic import UNIT_ROUNDOFF as U

NONNEGATIVE_FNS = frozenset({"spread", "ptp", "slem", "norm_inf", "norm_1", "norm_fro"})


def _scalar_mul(x: tuple, y: tuple) -> tuple:
    vx, ex, bx, mx = x
    vy, ey, by, my = y
    v = vx * vy
    err = np.abs(vx) * ey + np.abs(vy) * ex + ex * ey + 2 * U * np.abs(v) + ETA
    bits = grid(bx + by, lambda: max(mx, 1.0) * max(my, 1.0))
    return v, np.where(bits < NOT_GRID, 0.0, finite(err)), bits, mx * my


def _expm1_up(e: np.ndarray) -> np.ndarray:
    """An upper bound on e^e - 1 for e >= 0: e + e^2 up to 1 (the series' tail is below 0.72 e^2),
    then exp(e) (1 + 4 rho) + 2h (the libm assumption)."""
    return np.where(e <= 1, e + e * e, np.exp(np.minimum(e, 1000.0)) * (1 + 4 * RHO) + 2 * H)


def _pow(x: np.ndarray, q: Fraction) -> np.ndarray:
    return np.sqrt(x) if q == Fraction(1, 2) else np.power(x, float(q))


def _pow_up(x: np.ndarray, q: Fraction) -> np.ndarray:
    """An upper bound on x^q for x >= 0 (q rational, x^q = inf for x = 0 and q < 0): libm's error and
    the exponent's rounding (|q - fl(q)| |ln x| with |ln x| <= 745 for every nonzero float)."""
    slack = float(abs(Fraction(float(q)) - q)) * 1.01 * 745
    return _pow(x, q) * (1 + 2 * RHO) * (1 + 2 * slack) + 2 * H



def nonnegative(nodes: tuple) -> list[bool]:
    """Per node: its exact value is >= 0 (every entry, for a matrix) by construction, wherever it is
    defined."""
    out: list[bool] = []
    for node in nodes:
        args = [out[a] for a in node.args]
        op = node.op
        if op in ("leaf", "softmax", "eye", "delta", "size", "rpow", "exp", "abs"):
            pos = op != "leaf" or node.role == "stochastic"
        elif op == "const":
            pos = node.const >= 0
        elif op == "fn":
            pos = node.name in NONNEGATIVE_FNS or (args[0] and node.name != "slem")
        elif op == "lin":
            pos = node.const >= 0 and all(c >= 0 for c in node.coefs) and all(args)
        elif op == "pow":
            pos = node.power % 2 == 0 or args[0]
        elif op == "max":
            pos = any(args)
        else:                        # smul, mmul, mpow, T, mul, min, tanh: their arguments'
            pos = op not in ("log", "param") and all(args)
        out.append(bool(pos))
    return out



# -- functionals of a matrix ---------------------------------------------------------------------------
def _slem(M: np.ndarray) -> np.ndarray:
    """The largest eigenvalue modulus after removing the eigenvalue nearest 1 (floats, no bound)."""
    b, n, _ = M.shape
    if n == 1:
        return np.zeros(b)
    ok = np.isfinite(M).all(axis=(1, 2))
    lam = np.linalg.eigvals(np.where(ok[:, None, None], M, 0.0))
    mod = np.abs(lam)
    mod[np.arange(b), np.abs(lam - 1).argmin(axis=1)] = -1.0
    return np.where(ok, mod.max(axis=1), np.nan)


def _functional(k: int, tr: Trace) -> tuple:
    node = tr.nodes[k]
    (a,) = node.args
    M, e, g = tr.value[a], tr.err[a], tr.bits[a]
    b, rows, cols = M.shape
    name = node.name
    def on_grid() -> np.ndarray:
        return grid(g, lambda: grid_bound(tr, k))
    if name in ("entry_min", "entry_max"):
        return (M.min(axis=(1, 2)) if name == "entry_min" else M.max(axis=(1, 2))), e, g
    if name in ("ptp", "spread"):
        if name == "ptp":
            v = M.max(axis=(1, 2)) - M.min(axis=(1, 2))
        else:
            v = (M.max(axis=1) - M.min(axis=1)).max(axis=1)
        return v, 2 * e + U * np.abs(v), on_grid()
    if name == "col_min_sum":
        mins = M.min(axis=1)
        return mins.sum(axis=1), min(rows, cols) * e + 1.01 * cols * U * np.abs(mins).sum(axis=1), on_grid()
    if name == "norm_inf":
        v = np.abs(M).sum(axis=2).max(axis=1)
        return v, e + 1.01 * cols * U * v, on_grid()
    if name == "norm_1":
        v = np.abs(M).sum(axis=1).max(axis=1)
        return v, rows * e + 1.01 * rows * U * v, on_grid()
    if name == "trace":
        diag = np.diagonal(M, axis1=1, axis2=2)
        return diag.sum(axis=1), rows * e + 1.01 * rows * U * np.abs(diag).sum(axis=1), on_grid()
    if name == "norm_fro":
        N = rows * cols
        v = np.sqrt(np.einsum("bij,bij->b", M, M))
        sq = 1.01 * math.sqrt(N * ETA)
        err = math.sqrt(rows) * (1 + 2 * U) * e + 1.01 * (RHO + 1.01 * N * U) * (v + sq) + sq + H
        return v, err, np.full(b, NOT_GRID)
    if name == "slem":
        return _slem(M), np.full(b, np.inf), np.full(b, NOT_GRID)
    raise AssertionError(f"unknown functional {name!r}")



# -- scalar nodes ------------------------------------------------------------------------------------
def _rpow(node: Node, x: np.ndarray, e: np.ndarray, pos: bool) -> tuple:
    q = node.const
    below = x - e
    known = (below > 0) if q < 0 else ((below >= 0) | pos)        # the exact argument is in the domain
    xp = np.where(known, np.maximum(x, 0.0), x)
    v = _pow(xp, q)
    if q > 1:
        arg = float(q) * 1.01 * _pow_up(xp + e, q - 1) * e
    elif q > 0:
        mvt = np.where(below > 0, float(q) * 1.01 * _pow_up(np.maximum(below, 0.0), q - 1) * e, np.inf)
        arg = np.minimum(_pow_up(e, q), mvt)                           # Hoelder: |X^q - x^q| <= |X - x|^q
    else:
        arg = float(-q) * 1.01 * _pow_up(np.maximum(below, 0.0), q - 1) * e
    slack = float(abs(Fraction(float(q)) - q)) * 1.01 * 745
    err = np.where(e > 0, arg, 0.0) + (np.abs(v) + H) * (RHO + 2 * slack) * (1 + 4 * RHO) + H
    return v, np.where(known & np.isfinite(v), finite(err), np.inf), np.full(len(x), NOT_GRID)


def _transcendental(node: Node, x: np.ndarray, e: np.ndarray) -> tuple:
    op = node.op
    if op == "exp":
        v = np.exp(x)
        err = (np.abs(v) + H) / (1 - RHO) * (_expm1_up(e) + RHO) + H
    elif op == "log":
        v = np.log(x)
        below = x - e
        err = np.where(below > 0, e / below + RHO * (np.abs(v) + H) / (1 - RHO) + H, np.inf)
    else:                                                    # tanh
        v = np.tanh(x)
        err = np.minimum(e, 2.0) + RHO * np.minimum((np.abs(v) + H) / (1 - RHO), 1.0) + H
    return v, finite(err), np.full(len(x), NOT_GRID)


def scalar_step(k: int, tr: Trace, inp: Inputs, lo: int, hi: int, pos: list) -> tuple:
    node = tr.nodes[k]
    b = hi - lo
    V, E, G = tr.value, tr.err, tr.bits
    op = node.op
    if op == "delta":
        (a,) = node.args
        M, mag, n = V[a], magnitude(tr, a), V[a].shape[1]
        v = K.dobrushin_batch(np.ascontiguousarray(M)) if n > 1 else np.zeros(b)
        err = E[a] + 4 * (n + 4) * U * (mag + E[a]) + 2 * ETA
        bits = grid(G[a] + 1, lambda: 2 * mag)
        return v.astype(np.float64, copy=False), np.where(bits < NOT_GRID, 0.0, err), bits
    if op == "const":
        bits = dyadic(node.const)
        return np.full(b, float(node.const)), np.full(b, 0.0 if bits < NOT_GRID else const_err(node.const)), \
            np.full(b, bits)
    if op == "lin":
        c0 = float(node.const)
        v = np.full(b, c0)
        err = np.full(b, const_err(node.const))
        total = np.full(b, abs(c0))
        bits = np.full(b, dyadic(node.const) if node.const else 0)
        for a, c in zip(node.args, node.coefs):
            cf = float(c)
            v = v + (V[a] if c == 1 else cf * V[a])
            err = err + abs(cf) * E[a] * (1 + 2 * U) + const_err(c) * np.abs(V[a])
            total = total + abs(cf) * np.abs(V[a])
            bits = np.maximum(bits, G[a] + dyadic(c))
        terms = len(node.args)
        err = finite(err + (terms + 1) * 2 * U * total + terms * ETA)
        bits = grid(bits, lambda: grid_bound(tr, k))
        return v, np.where(bits < NOT_GRID, 0.0, err), bits
    if op == "fn":
        return _functional(k, tr)
    if op == "param":
        bits = inp.param_bits[node.name][lo:hi]
        return inp.params[node.name][lo:hi], np.where(bits < NOT_GRID, 0.0, inp.param_err[node.name][lo:hi]), bits
    if op == "size":
        return np.full(b, float(inp.n if node.name == "n" else inp.d)), np.zeros(b), np.zeros(b, dtype=np.int64)
    if op == "rpow":
        return _rpow(node, V[node.args[0]], E[node.args[0]], pos[node.args[0]])
    if op in ("exp", "log", "tanh"):
        return _transcendental(node, V[node.args[0]], E[node.args[0]])
    if op == "abs":
        (a,) = node.args
        return np.abs(V[a]), E[a], G[a]
    operand = [(V[a], E[a], G[a], magnitude(tr, a, False)) for a in node.args]
    if op == "mul":
        out = operand[0]
        for y in operand[1:]:
            out = _scalar_mul(out, y)
        return out[0], out[1], out[2]
    if op == "pow":
        v, e, g, _ = power_by_squaring(operand[0], abs(node.power), _scalar_mul)
        if node.power > 0:
            return v, e, g
        r = 1.0 / v
        y = np.abs(v)
        err = np.where(y > e, e / (y * (y - e)), np.inf) + 2 * U * np.abs(r) + ETA
        return r, finite(err), np.full(b, NOT_GRID)
    if op in ("max", "min"):
        pick = np.maximum if op == "max" else np.minimum
        v = pick.reduce([x[0] for x in operand])
        err = np.max([x[1] for x in operand], axis=0)
        g = np.max([x[2] for x in operand], axis=0)
        return v, err, np.where(g < NOT_GRID, g, NOT_GRID)
    raise AssertionError(f"unknown node {op!r}")

