"""The float rules of the matrix nodes of a compiled statement (leaves, the identity, linear
combinations, scalar multiples, products and powers, transposes, softmax): per instance a value and
a bound on its error, as :mod:`numerics.expr.floats` states them."""
from __future__ import annotations

import numpy as np

from numerics.expr.float_trace import ETA, RHO, Trace, const_err, finite, grid, grid_bound, magnitude
from numerics.expr.inputs import NOT_GRID, Inputs, dyadic
from numerics.expr.program import Node, power_by_squaring
from numerics.stochastic import UNIT_ROUNDOFF as U

FAR = 800.0                          # softmax weights this far below their row's maximum are < 2^-1150
TINY = 2.0 ** -1000                  # bounds every such entry's share, with room to spare


def _matmul(x: tuple, y: tuple) -> tuple:
    """(value, err, bits, mag) of the product of two matrix operands."""
    vx, ex, bx, mx = x
    vy, ey, by, my = y
    inner, cols = vx.shape[2], vy.shape[2]
    v = np.matmul(vx, vy)
    fx, fy = mx + ex, my + ey
    err = ex * fy + mx * ey + 1.01 * inner * U * fx * fy + inner * cols * ETA
    bits = grid(bx + by, lambda: mx * my)
    return v, np.where(bits < NOT_GRID, 0.0, err), bits, mx * my



def _leaf(node: Node, inp: Inputs, lo: int, hi: int) -> tuple:
    bits = inp.bits[node.name][lo:hi]
    return inp.data[node.name][lo:hi], np.where(bits < NOT_GRID, 0.0, inp.row_dev[node.name][lo:hi]), bits


def _lin_matrix(k: int, tr: Trace, b: int, n: int) -> tuple:
    node = tr.nodes[k]
    V, E, G = tr.value, tr.err, tr.bits
    acc, cols = None, (V[node.args[0]].shape[2] if node.args else n)
    err = np.zeros(b)
    total, terms, bits = abs(float(node.const)), len(node.args), np.full(b, dyadic(node.const) if node.const else 0)
    for a, c in zip(node.args, node.coefs):
        cf, mag = float(c), magnitude(tr, a)
        term = V[a] if c == 1 else V[a] * cf
        acc = term.copy() if acc is None and term is V[a] else (term if acc is None else np.add(acc, term, out=acc))
        err = err + abs(float(c)) * E[a] + (const_err(c) + U * abs(cf)) * (mag + E[a])
        total = total + abs(cf) * (mag + E[a])
        bits = np.maximum(bits, G[a] + dyadic(c))
    if acc is None:
        acc = np.zeros((b, n, n))
    if node.const:
        acc.reshape(b, n * n)[:, ::n + 1] += float(node.const)
    err = err + const_err(node.const) + (terms + 1) * 2 * U * total + terms * cols * ETA
    bits = grid(bits, lambda: grid_bound(tr, k))
    return acc, np.where(bits < NOT_GRID, 0.0, err), bits


def _smul(k: int, tr: Trace) -> tuple:
    s, m = tr.nodes[k].args
    vs, es, Vm, em = tr.value[s], tr.err[s], tr.value[m], tr.err[m]
    mag = magnitude(tr, m)
    v = Vm * vs[:, None, None]
    a = np.abs(vs)
    err = finite(es * mag + a * em + U * a * (mag + em) + Vm.shape[2] * ETA)
    bits = grid(tr.bits[s] + tr.bits[m], lambda: grid_bound(tr, k))
    return v, np.where(bits < NOT_GRID, 0.0, err), bits


def _softmax(node: Node, S: np.ndarray, e: np.ndarray) -> tuple:
    b, rows, cols = S.shape
    X = S if node.name != "causal" else np.where(np.tri(rows, cols, dtype=bool), S, -np.inf)
    z = np.exp(X - X.max(axis=2, keepdims=True))
    s = z.sum(axis=2, keepdims=True)
    p = z / s
    wide = (1 + RHO) * (1 + e + 1.01 * U * FAR) * (e + 0.63 * cols * U) + RHO
    err = np.where(e <= 0.25, 2 * wide / (1 - wide) + 1.01 * (cols + 1) * U + cols * TINY, np.inf)
    err = np.minimum(err, 2 + 2 * (cols + 2) * U)
    err = np.where(np.isfinite(s).all(axis=(1, 2)), err, np.inf)
    return p, err, np.full(b, NOT_GRID)


def matrix_step(k: int, tr: Trace, inp: Inputs, lo: int, hi: int) -> tuple:
    node = tr.nodes[k]
    b, n = hi - lo, inp.n
    V, E, G = tr.value, tr.err, tr.bits
    op = node.op
    if op == "leaf":
        return _leaf(node, inp, lo, hi)
    if op == "eye":
        v = np.zeros((b, n, n))
        v.reshape(b, n * n)[:, ::n + 1] = 1.0
        return v, np.zeros(b), np.zeros(b, dtype=np.int64)
    if op == "lin":
        return _lin_matrix(k, tr, b, n)
    if op == "smul":
        return _smul(k, tr)
    if op in ("mmul", "mpow"):
        operand = [(V[a], E[a], G[a], magnitude(tr, a)) for a in node.args]
        if op == "mpow":
            v, e, g, _ = power_by_squaring(operand[0], node.power, _matmul)
        else:
            out = operand[0]
            for y in operand[1:]:
                out = _matmul(out, y)
            v, e, g, _ = out
        return np.ascontiguousarray(v), e, g
    (a,) = node.args
    if op == "T":
        return np.ascontiguousarray(np.swapaxes(V[a], 1, 2)), V[a].shape[1] * E[a], G[a]
    if op == "softmax":
        return _softmax(node, V[a], E[a])
    raise AssertionError(f"unknown matrix node {op!r}")

