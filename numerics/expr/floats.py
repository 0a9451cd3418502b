"""The batched float evaluator of a compiled statement, with a rigorous error bound per side.

"Exact" means the statement evaluated in exact arithmetic on what the inputs stand for
(:mod:`numerics.expr.inputs`): a stochastic matrix's floats with every row divided by its exact
sum, logits and tokens their floats, a parameter its float or the rational it was given as. Every
node carries, per instance, its float value and a bound on |float - exact| (for a matrix: on the
largest row sum of |float - exact|, which bounds every entry too), propagated through the program
with unit roundoff u = 2^-53, eta = 2^-1074 (underflow) and, for exp, log, tanh, sqrt and powers,
the libm assumption below (rho, h):

    input X       max_i |s_i - 1| for a stochastic X, s_i the exact row sum (X_i - X_i / s_i has L1
                  norm |s_i - 1|); 0 for logits and tokens; a parameter |fl(p) - p|
    lin           sum |c_i| e_i + sum (|fl(c_i) - c_i| + u |fl(c_i)|) M_i + (k + 1) 2u S + k cols eta
    s X           e_s |X| + |s| e_X + u |s| M_X + cols eta          (s a scalar node)
    X Y           e_X M_Y + |X| e_Y + 1.01 k u M_X M_Y + k cols eta  (k the inner size; any summation
                  order, FMA or not)
    X^T           rows e_X      (a row sum of |E^T| is a column sum of |E|: at most rows times e_X)
    softmax(S)    2 s / (1 - s) + 1.01 (cols + 1) u + cols 2^-1000, s = (1 + rho)(1 + e_S + 800 u)(e_S
                  + 0.63 cols u) + rho, where e_S <= 1/4; at most 2 + 2 (cols + 2) u (two probability
                  vectors). With m_i the row's float maximum, t_ij = fl(S_ij - m_i) is within
                  delta_ij = e_S + 1.01 u |t_ij| of the exact S_ij - m_i, so each weight exp(t_ij)(1 +- rho)
                  is the exact one times w_ij, |w_ij - 1| <= (1 + rho)(1 + delta) delta_ij + rho; the
                  normalised weights then differ by at most 2 sum_j P_ij |w_ij - 1| / (1 - that sum)
                  in L1, and P_ij <= e^(t_ij + delta_ij + e_S), |t| e^t <= 1/e bound the u |t_ij| part
                  by 0.63 u per entry. Entries more than 800 below the row's maximum are below
                  2^-1150 in both (the 2^-1000 term), the mask's entries are exact zeros; then the sum
                  and the divisions.
    delta(M)      e_M + 4 (n + 4) u M + 2 eta   (delta is 1-Lipschitz in the row L1 distance; the
                  min-form kernel's row sums, overlaps and halving, in any order)
    entry_min/max e_M          ptp, spread: 2 e_M + u |v|          norm_inf: e_M + 1.01 cols u v
    norm_1        rows e_M + 1.01 rows u v     trace: rows e_M + 1.01 rows u sum |M_ii|
    col_min_sum   min(rows, cols) e_M + 1.01 cols u sum_j |min_i M_ij|
    norm_fro      sqrt(rows) e_M + 1.01 (rho + 1.01 N u)(v + sqrt(N eta)) + sqrt(N eta) + h  (N entries)
    slem          inf: a float value from numpy's eigenvalues, always left to the certified path
    scalar lin    |fl(c_0) - c_0| + sum (|c_i| e_i + |fl(c_i) - c_i| |v_i|) + (k + 1) 2u S + k eta
    x y           |x| e_y + |y| e_x + e_x e_y + 2u |xy| + eta;   1/y: e_y / (|y| (|y| - e_y)) + 2u/|y| + eta
    max, min      the largest of the arguments' bounds            |x|: e_x
    exp(x)        (|v| + h) / (1 - rho) (E(e_x) + rho) + h,  E(e) = e + e^2 for e <= 1 (>= e^e - 1)
    log(x)        e_x / (x - e_x) + rho (|v| + h) / (1 - rho) + h where x - e_x > 0, else inf
    tanh(x)       min(e_x, 2) + rho min((|v| + h) / (1 - rho), 1) + h
    x^q           (q rational, not an integer) the argument's part q (x + e)^(q-1) e (q > 1),
                  min(e^q, q (x - e)^(q-1) e) (0 < q < 1), |q| (x - e)^(q-1) e (q < 0), plus libm's
                  and the rounded exponent's part; inf where x - e < 0 (x > e for q < 0) unless
                  the argument is nonnegative by construction (a norm, a delta, exp, ...)

(M: a bound on the float matrix's largest absolute row sum, static bound plus error; where the
program has no static bound, one for the chunk from the arguments' (a transpose: rows times its
argument's), else per instance from the floats (logits, tokens: :func:`magnitude`); |X| the exact
matrix's; S the sum of the magnitudes added; v the float value.) The constants are
deliberately loose: the bound only decides which instances the exact path must see, and a looser
bound sends a few more there. The bound is computed in floats and multiplied by ``SAFE`` =
1 + 2^-30 for that rounding. A domain error (log of a value <= 0, a power of a negative value, a
division by 0) gives the value nan or inf and the bound inf: the exact path decides there.

The libm assumption: numpy's float64 ``exp``, ``log``, ``tanh``, ``sqrt`` and ``power`` are within
:data:`LIBM_ULPS` ulp of the true value (relative error rho = LIBM_ULPS 2^-52, absolute h =
LIBM_ULPS eta where the result is subnormal). That is far above what glibc documents for these
functions (at most a few ulp; numpy's own SIMD exp/log are documented within 4 ulp), and
``tests/numerics/test_expr_floats.py`` checks it against mpmath on many random arguments over the
ranges the rules use; see docs/reliability.md.

Where the inputs lie on a dyadic grid (entries multiples of 2^-g, rows summing to exactly 1:
one-hot, coarse dyadic; parameters that are dyadic floats) every operation whose values provably
fit in 53 bits is exact (sums, products, transposes, entry_min/max, ptp, spread, col_min_sum,
norm_inf, norm_1, trace, |x|; never exp, log, tanh, powers, softmax or norm_fro); the error is then
0 and the float value is the exact one (tracked per node and instance as the number of fractional
bits, :data:`NOT_GRID` where not exact).

The delta kernel is :func:`numerics.kernels.dobrushin_batch`, the compiled min-form behind
:func:`numerics.dobrushin.dobrushin` (inputs are validated once here, intermediate matrices are
not revalidated); products are numpy's batched matmul.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from numerics import kernels as K
from numerics.expr.program import Compiled, Node, power_by_squaring, up
from numerics.expr.inputs import NOT_GRID, Inputs, dyadic, inputs
from numerics.stochastic import UNIT_ROUNDOFF as U

__all__ = ["LIBM_ULPS", "NOT_GRID", "SAFE", "Inputs", "Trace", "evaluate", "inputs", "trace"]

ETA = 2.0 ** -1074
SAFE = 1.0 + 2.0 ** -30
LIBM_ULPS = 64                       # assumed accuracy of numpy's exp, log, tanh, sqrt, power (ulp)
RHO = LIBM_ULPS * 2.0 ** -52         # ... as a relative error
H = LIBM_ULPS * ETA                  # ... as an absolute error where the result is subnormal
FAR = 800.0                          # softmax weights this far below their row's maximum are < 2^-1150
TINY = 2.0 ** -1000                  # bounds every such entry's share, with room to spare
NONNEGATIVE_FNS = frozenset({"spread", "ptp", "slem", "norm_inf", "norm_1", "norm_fro"})


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


def _const_err(c: Fraction) -> float:
    return up(abs(Fraction(float(c)) - c))


def _exact(bits: np.ndarray, limit: int) -> np.ndarray:
    return np.where(bits <= limit, bits, NOT_GRID)


def _finite(err: np.ndarray) -> np.ndarray:
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
            m = _finite(np.abs(v).sum(axis=2).max(axis=1) * (1 + 1.01 * (v.shape[2] + 1) * U) + tr.err[k])
        tr.mag[k] = m
    return m


def _bound(tr: Trace, k: int) -> Any:
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


def _grid(bits: np.ndarray, bound: Any) -> np.ndarray:
    """``bits`` where a value of magnitude <= ``bound()`` with that many fractional bits fits in 53
    bits, :data:`NOT_GRID` elsewhere (``bound`` only called where some instance is on the grid)."""
    if not (bits < NOT_GRID).any():
        return np.full(len(bits), NOT_GRID, dtype=np.int64)
    return _exact(bits, cap(bound()))


def _matmul(x: tuple, y: tuple) -> tuple:
    """(value, err, bits, mag) of the product of two matrix operands."""
    vx, ex, bx, mx = x
    vy, ey, by, my = y
    inner, cols = vx.shape[2], vy.shape[2]
    v = np.matmul(vx, vy)
    fx, fy = mx + ex, my + ey
    err = ex * fy + mx * ey + 1.01 * inner * U * fx * fy + inner * cols * ETA
    bits = _grid(bx + by, lambda: mx * my)
    return v, np.where(bits < NOT_GRID, 0.0, err), bits, mx * my


def _scalar_mul(x: tuple, y: tuple) -> tuple:
    vx, ex, bx, mx = x
    vy, ey, by, my = y
    v = vx * vy
    err = np.abs(vx) * ey + np.abs(vy) * ex + ex * ey + 2 * U * np.abs(v) + ETA
    bits = _grid(bx + by, lambda: max(mx, 1.0) * max(my, 1.0))
    return v, np.where(bits < NOT_GRID, 0.0, _finite(err)), bits, mx * my


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


# -- matrix nodes ------------------------------------------------------------------------------------
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
        err = err + abs(float(c)) * E[a] + (_const_err(c) + U * abs(cf)) * (mag + E[a])
        total = total + abs(cf) * (mag + E[a])
        bits = np.maximum(bits, G[a] + dyadic(c))
    if acc is None:
        acc = np.zeros((b, n, n))
    if node.const:
        acc.reshape(b, n * n)[:, ::n + 1] += float(node.const)
    err = err + _const_err(node.const) + (terms + 1) * 2 * U * total + terms * cols * ETA
    bits = _grid(bits, lambda: _bound(tr, k))
    return acc, np.where(bits < NOT_GRID, 0.0, err), bits


def _smul(k: int, tr: Trace) -> tuple:
    s, m = tr.nodes[k].args
    vs, es, Vm, em = tr.value[s], tr.err[s], tr.value[m], tr.err[m]
    mag = magnitude(tr, m)
    v = Vm * vs[:, None, None]
    a = np.abs(vs)
    err = _finite(es * mag + a * em + U * a * (mag + em) + Vm.shape[2] * ETA)
    bits = _grid(tr.bits[s] + tr.bits[m], lambda: _bound(tr, k))
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


def _matrix_step(k: int, tr: Trace, inp: Inputs, lo: int, hi: int) -> tuple:
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
    def grid() -> np.ndarray:
        return _grid(g, lambda: _bound(tr, k))
    if name in ("entry_min", "entry_max"):
        return (M.min(axis=(1, 2)) if name == "entry_min" else M.max(axis=(1, 2))), e, g
    if name in ("ptp", "spread"):
        if name == "ptp":
            v = M.max(axis=(1, 2)) - M.min(axis=(1, 2))
        else:
            v = (M.max(axis=1) - M.min(axis=1)).max(axis=1)
        return v, 2 * e + U * np.abs(v), grid()
    if name == "col_min_sum":
        mins = M.min(axis=1)
        return mins.sum(axis=1), min(rows, cols) * e + 1.01 * cols * U * np.abs(mins).sum(axis=1), grid()
    if name == "norm_inf":
        v = np.abs(M).sum(axis=2).max(axis=1)
        return v, e + 1.01 * cols * U * v, grid()
    if name == "norm_1":
        v = np.abs(M).sum(axis=1).max(axis=1)
        return v, rows * e + 1.01 * rows * U * v, grid()
    if name == "trace":
        diag = np.diagonal(M, axis1=1, axis2=2)
        return diag.sum(axis=1), rows * e + 1.01 * rows * U * np.abs(diag).sum(axis=1), grid()
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
    return v, np.where(known & np.isfinite(v), _finite(err), np.inf), np.full(len(x), NOT_GRID)


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
    return v, _finite(err), np.full(len(x), NOT_GRID)


def _scalar_step(k: int, tr: Trace, inp: Inputs, lo: int, hi: int, pos: list) -> tuple:
    node = tr.nodes[k]
    b = hi - lo
    V, E, G = tr.value, tr.err, tr.bits
    op = node.op
    if op == "delta":
        (a,) = node.args
        M, mag, n = V[a], magnitude(tr, a), V[a].shape[1]
        v = K.dobrushin_batch(np.ascontiguousarray(M)) if n > 1 else np.zeros(b)
        err = E[a] + 4 * (n + 4) * U * (mag + E[a]) + 2 * ETA
        bits = _grid(G[a] + 1, lambda: 2 * mag)
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
        terms = len(node.args)
        err = _finite(err + (terms + 1) * 2 * U * total + terms * ETA)
        bits = _grid(bits, lambda: _bound(tr, k))
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
        return r, _finite(err), np.full(b, NOT_GRID)
    if op in ("max", "min"):
        pick = np.maximum if op == "max" else np.minimum
        v = pick.reduce([x[0] for x in operand])
        err = np.max([x[1] for x in operand], axis=0)
        g = np.max([x[2] for x in operand], axis=0)
        return v, err, np.where(g < NOT_GRID, g, NOT_GRID)
    raise AssertionError(f"unknown node {op!r}")


def trace(compiled: Compiled, inp: Inputs, lo: int, hi: int) -> Trace:
    """Every node of ``compiled`` (the ``where=`` relations' included) on instances lo..hi of ``inp``."""
    nodes = compiled.nodes
    tr = Trace([], [], [], [node.mag if math.isfinite(node.mag) else None for node in nodes], nodes, (inp.n, inp.d))
    pos = nonnegative(nodes)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for k, node in enumerate(nodes):
            if node.matrix:
                v, e, g = _matrix_step(k, tr, inp, lo, hi)
            else:
                v, e, g = _scalar_step(k, tr, inp, lo, hi, pos)
                e = np.where(np.isfinite(v), e, np.inf)
            tr.value.append(v)
            tr.err.append(e)
            tr.bits.append(g)
    return tr


def evaluate(compiled: Compiled, mats: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both sides of ``compiled`` on every instance of ``mats`` (:func:`numerics.expr.inputs.inputs`:
    {"A": (B, n, n), "L": (B, n, n), "alpha": (B,), ...}) -> (lhs (B,), rhs (B,), err (B, 2)), float64,
    with ``err[:, 0]`` and ``err[:, 1]`` rigorous bounds on |lhs - exact lhs| and |rhs - exact rhs|
    (see the module docstring; 0 where the float evaluation is provably exact, inf where no bound
    holds, e.g. near a division by zero, a log of a value near 0, or slem).

    >>> from theory.expr import A, I, delta
    >>> from numerics.expr.program import compile_statement
    >>> c = compile_statement(delta((I + A) / 2) <= (1 + delta(A)) / 2)
    >>> lhs, rhs, err = evaluate(c, {"A": np.array([[[0.75, 0.25], [0.25, 0.75]]])})
    >>> lhs, rhs, err                     # dyadic rows summing to exactly 1: exact, tight
    (array([0.75]), array([0.75]), array([[0., 0.]]))
    >>> from theory.expr import logits, softmax, exp, ptp
    >>> L = logits("L")
    >>> c = compile_statement(delta(softmax(L)) <= 1 - exp(-ptp(L)))
    >>> lhs, rhs, err = evaluate(c, {"L": np.array([[[0.0, 1.0], [1.0, 0.0]]])})
    >>> bool(lhs[0] < rhs[0]), bool((err < 1e-13).all())
    (True, True)
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
